#!/usr/bin/env node
// After tsc: bundle the command line (dist/cli/main.js) so that a call on a hot
// path reads ONE file instead of about forty. guard runs on every commit, every
// branch move and every tool call an agent makes; node 20's ES module loader
// spends about 15 ms opening, reading and linking forty small files one by one,
// which is more than git's whole work for a one-file `guard check`.
//
// The modules that `check`, `write`, `hook` and `verify-refs` import statically
// go into main.js itself; every other command and every lazily imported module
// stays its own chunk, loaded only when used (one big file of everything was
// slower: 470 kB to compile on every call). Packages from node_modules are not
// bundled. Chunks are written next to main.js (dist/cli/), two folders below
// the package root like every source module, so paths built from
// import.meta.url (hooks/, package.json) still resolve.
//
// `guard hook` has a build of its own (HOOK below): main.js loads guard-hook.js
// for it, which holds what the hook's events load and nothing of check's or
// write's; its lazily loaded modules are hook-chunk-* files, copies of the main
// build's chunks (a hook process never loads a module of the other build).
//
// The rest of dist/ stays as tsc wrote it (tests and the bench import modules
// from it).
//
// main.js itself is a launcher of a few lines that turns on node's compile
// cache (node 22.1 and later: `module.enableCompileCache`; node 20 has none and
// skips it) and then imports the bundle, guard.js: V8 caches the bytecode of
// what is compiled after the cache is on, so the bundle must be imported, not
// be the entry. The cache is node's default folder (NODE_COMPILE_CACHE moves it,
// NODE_DISABLE_COMPILE_CACHE=1 turns it off); see docs/performance.md.

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
const CLI = path.join(DIST, 'cli');
// apply's targets load with the call that needs them (src/apply/apply.ts); check's and write's are
// on the hot path (and the branch gate's tips, which check catches up), so they are in the bundle itself
const HOT = [
  'cli/main.js',
  'cli/check.js',
  'cli/write.js',
  'cli/hook.js',
  'cli/verify-refs.js',
  'ui/spinner.js',
  'apply/index-target.js',
  'apply/file-target.js',
  'apply/tips-target.js',
  'apply/paths-target.js',
  'apply/worktree-target.js',
  'git/blob-id.js',
];

/**
 * `guard hook`'s own build, guard-hook.js: what its events load (the hook, its flows, the session
 * index and chains, the net's check, the paths and work-tree checkpoints), and nothing of check's
 * or write's, in one file instead of guard.js and five chunks (~5 ms of CPU a hook process on
 * Node 24: docs/performance.md, "S2 per event, the hook's own bundle"). The two builds share no
 * module: a hook process loads this one alone, so every other module it may load lazily (a
 * doctor's check, a rare target) is a chunk of this build (hook-chunk-*), its copy of guard's
 * classes the same as the rest of the hook's.
 */
const HOOK = [
  'cli/main.js',
  'cli/hook.js',
  'flows/hook/hook.js',
  'flows/hook/lane-keep.js',
  'ui/auto-mode.js',
  'git/resident.js',
  'git/session-chain.js',
  'git/session-index.js',
  'git/restore.js',
  'git/journal.js',
  'flows/doctor/claude-settings.js',
  'apply/paths-target.js',
  'apply/worktree-target.js',
];

/** Every module reachable from `entries` through static imports (tsc output: `import ... from './x.js'`). */
function staticClosure(entries) {
  const seen = new Set();
  const todo = entries.map((e) => path.join(DIST, e));
  const IMPORT = /^(?:import|export)\s(?:[^'";]*?\sfrom\s)?['"](\.{1,2}\/[^'"]+)['"]/gm;
  while (todo.length > 0) {
    const file = todo.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    if (!file.endsWith('.js')) continue;
    for (const m of fs.readFileSync(file, 'utf8').matchAll(IMPORT))
      todo.push(path.resolve(path.dirname(file), m[1]));
  }
  return seen;
}

const LAUNCHER = `#!/usr/bin/env node
// guard's entry: node's compile cache first (node >= 22.1), then the bundle (scripts/bundle.mjs).
import module from 'node:module';
try {
  module.enableCompileCache?.();
} catch {
  // a cache folder that cannot be made costs only the cache
}
// the resident hook (GUARD_RESIDENT=1): a small client of a server that keeps guard loaded (cli/hook-client.ts)
if (process.argv[2] === 'hook' && process.env.GUARD_RESIDENT === '1') await import('./hook-client.js');
// a hook process: the hook's own build (scripts/bundle.mjs HOOK), with a code cache of its own
else if (process.argv[2] === 'hook') hookBuild();
else await import('./guard.js');

/**
 * guard-hook.cjs run as node runs a CommonJS file, with V8's code cache of it taken at the end of
 * a hook process, not after compiling as node's compile cache takes it: so the cache holds every
 * function the hook's events ran, compiled (~15 ms of CPU a write's pre event on Node 24). Kept
 * beside node's compile cache (its folder is per node version, architecture and V8 flags), one
 * file per installed bundle (its path), for one build (the bundle's inode, size and times, on the
 * file's first line: another build's cache is not read, and replaced), written again by the first
 * process of each kind of event (a write's pre event, a shell call's post event, ...: the kinds
 * it holds are on its first line too), each adding what its event compiled; V8 refuses a cache
 * of another V8 or
 * source, and main.js reads one only if it is a regular file of this user's no one else can
 * write, as the process that wrote it left it (the link beside it names the file's identity:
 * holes8). No cache folder (node 20, NODE_DISABLE_COMPILE_CACHE=1): the bundle runs without one.
 */
/** A cache file as its writer left it: anything that wrote it since changed its ctime. */
function identity(st) {
  return ['v1', st.dev, st.ino, st.size, st.ctimeNs].join('-');
}

function hookBuild() {
  const require = module.createRequire(import.meta.url);
  const fs = require('node:fs');
  const path = require('node:path');
  const vm = require('node:vm');
  const file = path.join(path.dirname(require('node:url').fileURLToPath(import.meta.url)), 'guard-hook.cjs');
  const source = fs.readFileSync(file, 'utf8').replace(/^#!/, '//');
  const dir = module.getCompileCacheDir?.();
  let cacheFile;
  let build;
  let kinds = [];
  let data;
  if (dir) {
    const st = fs.statSync(file, { bigint: true });
    build = [st.ino, st.size, st.mtimeNs, st.ctimeNs].join('-');
    let h = 0x811c9dc5;
    for (let i = 0; i < file.length; i++) h = Math.imul(h ^ file.charCodeAt(i), 0x01000193) >>> 0;
    cacheFile = path.join(dir, 'guard-hook-' + h.toString(16) + '.v8');
    let fd;
    try {
      // bytecode this process will run: only a regular file of this user's that no one else may
      // write (node's cache folder may be shared, and /tmp's sticky bit does not cover it); never
      // waiting on a FIFO planted there (adv10: its open hung the hook until the harness gave up)
      const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
      fd = fs.openSync(cacheFile, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
      const own = fs.fstatSync(fd, { bigint: true });
      if (!own.isFile() || own.uid !== BigInt(process.getuid()) || (own.mode & 0o022n) !== 0n) throw own;
      // the file a hook process wrote, as it left it: its inode, size and change time, named by
      // the link beside it (one readlink). V8 checks no checksum of a cache (release builds):
      // bytes changed in its bytecode crash the process, with no answer (adv10, holes8)
      if (fs.readlinkSync(cacheFile + '.id') !== identity(own)) throw own;
      const buf = fs.readFileSync(fd);
      const nl = buf.indexOf(10);
      const [v, of, ...seen] = buf.subarray(0, nl).toString('latin1').split(' ');
      if (v === 'v1' && of === build) [kinds, data] = [seen, buf.subarray(nl + 1)];
    } catch {
      data = undefined;
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  }
  const script = new vm.Script(module.wrap(source), { filename: file, cachedData: data });
  if (cacheFile)
    process.once('exit', () => {
      const kind = String(globalThis[Symbol.for('guard.hook.kind')] ?? 'none');
      if (data && !script.cachedDataRejected && (kinds.includes(kind) || kinds.length >= 16)) return;
      const tmp = cacheFile + '.' + process.pid;
      const link = cacheFile + '.id.' + process.pid;
      let fd;
      try {
        const seen = data && !script.cachedDataRejected ? kinds : [];
        const head = ['v1', build, ...seen, kind].join(' ') + '\\n';
        // a new file (never through a name planted there), this user's alone to write
        fd = fs.openSync(tmp, 'wx', 0o644);
        fs.writeFileSync(fd, Buffer.concat([Buffer.from(head, 'latin1'), script.createCachedData()]));
        fs.renameSync(tmp, cacheFile);
        // what it is once in place (a rename changes a file's ctime), for the next reader
        fs.symlinkSync(identity(fs.fstatSync(fd, { bigint: true })), link);
        fs.renameSync(link, cacheFile + '.id');
        sweepCaches(fs, path, dir, cacheFile);
      } catch {
        // a cache that cannot be written costs only the cache
        try {
          fs.rmSync(tmp, { force: true });
          fs.rmSync(link, { force: true });
        } catch {}
      } finally {
        if (fd !== undefined) fs.closeSync(fd);
      }
    });
  const m = { exports: {} };
  script.runInThisContext().call(m.exports, m.exports, module.createRequire(file), m, file, path.dirname(file));
}

/**
 * Every installed bundle leaves a cache of its own here (0.5 MB each), and nothing else removes
 * one whose bundle is gone: run only after this process wrote its own (so never on a call that
 * only read one), it removes this user's other guard-hook caches unused for a week (read moves
 * atime, which relatime keeps within a day; written moves mtime; one removed too early is only
 * written again) and temp files an hour old (a process killed before its rename).
 */
function sweepCaches(fs, path, dir, mine) {
  const now = Date.now();
  for (const name of fs.readdirSync(dir)) {
    if (!name.startsWith('guard-hook-') || path.join(dir, name) === mine) continue;
    if (path.join(dir, name) === mine + '.id') continue;
    try {
      const st = fs.lstatSync(path.join(dir, name));
      // a cache's identity (holes8): gone with its cache; one a killed process left, after an hour
      if (st.isSymbolicLink() && st.uid === process.getuid()) {
        const of = name.endsWith('.v8.id') ? path.join(dir, name.slice(0, -3)) : null;
        if (of ? !fs.existsSync(of) : now - st.mtimeMs > 36e5) fs.unlinkSync(path.join(dir, name));
        continue;
      }
      const idle = now - Math.max(st.atimeMs, st.mtimeMs);
      if (st.isFile() && st.uid === process.getuid() && idle > (name.endsWith('.v8') ? 7 * 864e5 : 36e5))
        fs.unlinkSync(path.join(dir, name));
    } catch {
      // gone already, or another's: left
    }
  }
}
`;

/**
 * node's own modules through require, not import: an ES import of a built-in
 * builds its module namespace, which reads every export and so runs every lazy
 * getter behind them (node:fs loads fs/promises, the streams and readline;
 * node:util parseArgs' neighbours, worker_threads and the assert diff;
 * node:child_process net and dgram's observers). required, a built-in loads only
 * what it uses itself: about 5 ms of CPU time off every guard process on Node 24
 * (docs/performance.md, "One hook process"). Static imports only, at the top of
 * the file, where rolldown puts them; the dynamic ones load what they name when
 * their call runs.
 */
/**
 * Built-ins that most guard processes never call, whose require is still ~2 ms of CPU each on
 * Node 24: child_process (net, dgram and their observers: no git runs after an allowed write),
 * zlib (a loose commit read in the journal's rare paths). Their functions are wrappers that
 * require the module at their first call. Functions only: the build checks each name is one.
 */
const LAZY = new Set(['node:child_process', 'node:zlib']);
const nodeRequire = createRequire(import.meta.url);

function lazyFunctions(id, pairs, n) {
  const mod = nodeRequire(id);
  const slot = `__guardLazy${n}_${id.replace(/\W/g, '_')}`;
  const lines = [`let ${slot};`];
  for (const [name, local = name] of pairs) {
    if (typeof mod[name] !== 'function' || /^class\b/.test(String(mod[name])))
      throw new Error(`bundle: ${id}'s ${name} is not a plain function, it cannot load lazily`);
    lines.push(
      `function ${local}(...args) { return (${slot} ??= __guardRequire(${JSON.stringify(id)})).${name}(...args); }`,
    );
  }
  return lines.join('\n');
}
function requireBuiltins(code) {
  const IMPORT = /^import (?:(\w[\w$]*)|\* as (\w[\w$]*)|\{([^}]*)\}) from "(node:[^"]+)";$/gm;
  let n = 0;
  const out = code.replace(IMPORT, (_, def, ns, named, id) => {
    n++;
    const req = `__guardRequire(${JSON.stringify(id)})`;
    if (def || ns) return `const ${def || ns} = ${req};`;
    const pairs = named
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean)
      .map((x) => x.split(/\s+as\s+/));
    if (LAZY.has(id)) return lazyFunctions(id, pairs, n);
    const names = pairs.map(([name, local]) => (local ? `${name}: ${local}` : name));
    return `const { ${names.join(', ')} } = ${req};`;
  });
  if (n === 0) return out;
  const head = `import { createRequire as __guardCreateRequire } from "node:module";\nconst __guardRequire = __guardCreateRequire(import.meta.url);\n`;
  return out.startsWith('#!') ? out.replace(/^(#![^\n]*\n)/, `$1${head}`) : head + out;
}

for (const f of fs.readdirSync(CLI))
  if (f.startsWith('chunk-') || f.startsWith('hook-chunk-')) fs.rmSync(path.join(CLI, f));

/** One build from main.js: `hot` in the entry file itself, every other module a chunk of its own. */
async function build(entry, chunkPrefix, hot, format = 'esm') {
  const bundle = await rolldown({
    input: path.join(CLI, 'main.js'),
    platform: 'node',
    // node's own modules and packages from node_modules load as they are
    external: (id) => !id.startsWith('.') && !path.isAbsolute(id),
    // a hot module imported lazily by another hot one is simply already there
    onLog: (level, log, handler) => {
      if (log.code !== 'INEFFECTIVE_DYNAMIC_IMPORT') handler(level, log);
    },
  });
  const { output } = await bundle.write({
    dir: CLI,
    format,
    entryFileNames: entry,
    chunkFileNames: `${chunkPrefix}[name]-[hash].${format === 'cjs' ? 'cjs' : 'js'}`,
    codeSplitting: { groups: [{ name: 'main', test: (id) => hot.has(id) }] },
  });
  await bundle.close();
  for (const o of output)
    if (o.type === 'chunk') {
      const file = path.join(CLI, o.fileName);
      const code = fs.readFileSync(file, 'utf8');
      fs.writeFileSync(
        file,
        format === 'cjs' ? cjsBuiltins(code, o.fileName) : requireBuiltins(code),
      );
    }
}

/**
 * The hook's CommonJS build: strict as the ES modules it is made of; LAZY's built-ins required at
 * their first use (a proxy); a dynamic import of a built-in a require (the bundle runs in a
 * vm.Script, which has no loader for import(): the build fails on any other import() left).
 */
function cjsBuiltins(code, name) {
  let out = code.replace(/^let (\w+) = require\("(node:[^"]+)"\);$/gm, (line, local, id) =>
    LAZY.has(id) ? `let ${local} = __guardLazy(${JSON.stringify(id)});` : line,
  );
  // (the chunks are required by node's own loader, which has import() for them)
  if (name !== 'guard-hook.cjs') return strict(out);
  out = out.replace(/\bimport\("(node:[^"]+)"\)/g, 'Promise.resolve().then(() => require("$1"))');
  const left = /\bimport\(\s*[^)G]/.exec(out.replace(/(["'`])(?:\\.|(?!\1)[^\\\n])*\1/g, '""'));
  if (left) throw new Error(`bundle: ${name} still has a dynamic import: ${left[0]}`);
  return strict(out);
}

function strict(code) {
  const lazy = `const __guardLazy = (id) => { let m; return new Proxy({}, { get: (_, k) => (m ??= require(id))[k] }); };\n`;
  const head = `"use strict";\n${code.includes('__guardLazy(') ? lazy : ''}`;
  return code.startsWith('#!') ? code.replace(/^(#![^\n]*\n)/, `$1${head}`) : head + code;
}

await build('guard.js', 'chunk-', staticClosure(HOT));
await build('guard-hook.cjs', 'hook-chunk-', staticClosure(HOOK), 'cjs');
fs.writeFileSync(path.join(CLI, 'main.js'), LAUNCHER);
fs.chmodSync(path.join(CLI, 'main.js'), 0o755);
