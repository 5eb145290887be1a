#!/usr/bin/env node
// One checkpoint of the work tree at argv[2], timed inside the process (node
// startup and module loading excluded): what guard pays before a write.
//   node scripts/checkpoint-once.mjs REPO            a whole-tree checkpoint
//   node scripts/checkpoint-once.mjs REPO PATH...    a known-path one (guard write's)
// Prints {"ms": N, "reused": bool, "skipped": N}. Used by scripts/bench.mjs.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'git');
const { openRepo } = await import(pathToFileURL(path.join(dist, 'repo.js')).href);
const { checkpoint } = await import(pathToFileURL(path.join(dist, 'checkpoint.js')).href);
const repo = await openRepo(process.argv[2]);
const paths = process.argv.slice(3);
const t0 = process.hrtime.bigint();
const cp = await checkpoint(repo, {
  reason: 'bench',
  command: 'bench',
  lane: null,
  ...(paths.length ? { paths } : {}),
});
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
console.log(JSON.stringify({ ms, reused: cp.reused, skipped: cp.skipped?.length ?? 0 }));
