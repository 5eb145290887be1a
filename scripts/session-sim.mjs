// A scripted agent session through the real hook commands (issue 22, S1 and
// S2), shared by scripts/bench.mjs (S2: 423 calls, against the same session
// with no hooks) and scripts/soak.mjs (S1: 10,000 calls in one repository,
// the cost of a call at the start and at the end, against a fresh clone).
//
// A call is what Claude Code does with guard's hooks installed (guard init
// --agent claude: PreToolUse and PostToolUse on the write and shell tools):
// the PreToolUse hook, the tool itself (the file written, the command run),
// then the PostToolUse hook (after a write, behind the test init installs
// there when the build has one: claudeCommands). Every fifth call is a shell command; the others
// rewrite one line of one of 40 files (a Write of the whole file, or an Edit).

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeRepo } from './lib.mjs';

export const SESSION_FILES = 40;
const LINES = 60;

function fileText(k, version) {
  const out = [];
  for (let i = 0; i < LINES; i++)
    out.push(
      i === version % LINES
        ? `line ${i} of file ${k}, version ${version}`
        : `line ${i} of file ${k}`,
    );
  return out.join('\n') + '\n';
}

/** A repository with the session's files committed (scripts/lib.mjs's scratch repository; git's identity from its config). */
export function makeSessionRepo(dir, env) {
  const files = Object.fromEntries(
    Array.from({ length: SESSION_FILES }, (_, k) => [`src/m${k}.py`, fileText(k, 0)]),
  );
  return makeRepo(dir, {
    env,
    files,
    config: { user: { name: 'Session', email: 'session@guard.invalid' } },
  });
}

const SHELL = [
  'git status --short >/dev/null',
  'ls src >/dev/null',
  'grep -c line src/m1.py >/dev/null',
  'cat src/m2.py >/dev/null',
  'true',
];

/** The i-th call of the session: its payloads (pre and post) and the tool's own effect. */
export function sessionCall(repo, i, session = 'sim-session') {
  const base = {
    session_id: session,
    transcript_path: '/tmp/sim.jsonl',
    cwd: repo,
    permission_mode: 'bypassPermissions',
    tool_use_id: `toolu_${session}_${i}`,
  };
  if (i % 5 === 4) {
    const command = SHELL[((i / 5) % SHELL.length) | 0];
    const input = { command };
    return {
      kind: 'shell',
      pre: JSON.stringify({
        ...base,
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        tool_input: input,
      }),
      post: JSON.stringify({
        ...base,
        hook_event_name: 'PostToolUse',
        tool_name: 'Bash',
        tool_input: input,
        tool_response: {},
      }),
      run: (env) => spawnSync('sh', ['-c', command], { cwd: repo, env }),
    };
  }
  const k = (i * 7) % SESSION_FILES;
  const file = path.join(repo, 'src', `m${k}.py`);
  const version = i + 1;
  const next = fileText(k, version);
  let tool = 'Write';
  let input = { file_path: file, content: next };
  if (i % 2 === 1) {
    // an Edit of the line that differs
    const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    const oldLine = current.split('\n').find((l, n) => l !== next.split('\n')[n]);
    const newLine = next.split('\n').find((l, n) => l !== current.split('\n')[n]);
    if (oldLine !== undefined && newLine !== undefined) {
      tool = 'Edit';
      input = { file_path: file, old_string: oldLine, new_string: newLine };
    }
  }
  return {
    kind: 'write',
    pre: JSON.stringify({
      ...base,
      hook_event_name: 'PreToolUse',
      tool_name: tool,
      tool_input: input,
    }),
    post: JSON.stringify({
      ...base,
      hook_event_name: 'PostToolUse',
      tool_name: tool,
      tool_input: input,
      tool_response: { success: true },
    }),
    run: () => fs.writeFileSync(file, next),
  };
}

/**
 * The commands `guard init --agent claude` installs for the build at `cli` (its "guard that ran
 * init" form, `NODE MAIN hook claude` and the fallback), per event: `pre` and `postShell` run guard,
 * `postWrite` behind the build's test for a write put to a person where it has one
 * (flows/setup/hook-command.ts askGate: Claude Code's after event of a write starts guard only then).
 * hookOnce runs them as Claude Code does: `sh -c`, CLAUDE_PROJECT_DIR set.
 */
export async function claudeCommands(node, cli) {
  const dir = path.dirname(path.resolve(cli));
  const mod = await import(pathToFileURL(path.join(dir, '../flows/setup/hook-command.js')).href);
  const q = (x) => (/^[A-Za-z0-9_./@%+=:,-]+$/.test(x) ? x : `'${x.replace(/'/g, `'\\''`)}'`);
  const plain = `${q(node)} ${q(path.resolve(cli))} hook claude${mod.fallback('claude')}`;
  return { pre: plain, postShell: plain, postWrite: (mod.askGate?.('claude') ?? '') + plain };
}

/** The installed command for a call's event (claudeCommands), or undefined: the hook process itself. */
export const commandOf = (commands, c, post) =>
  commands && (!post ? commands.pre : c.kind === 'write' ? commands.postWrite : commands.postShell);

/**
 * One hook event; its wall time in ms. Throws when guard denies or fails (a session of harmless
 * calls). With `command` (claudeCommands), the installed command through `sh -c` as Claude Code
 * runs it; without, `node cli hook claude` itself.
 */
export function hookOnce(node, cli, repo, payload, env, command) {
  const t = process.hrtime.bigint();
  const r = command
    ? spawnSync('sh', ['-c', command], {
        cwd: repo,
        env: { ...env, CLAUDE_PROJECT_DIR: repo },
        input: payload,
        encoding: 'utf8',
      })
    : spawnSync(node, [cli, 'hook', 'claude'], {
        cwd: repo,
        env,
        input: payload,
        encoding: 'utf8',
      });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0 || r.stdout.includes('"deny"'))
    throw new Error(`guard hook claude answered ${r.status}: ${r.stdout}${r.stderr}`);
  return ms;
}

/**
 * Run calls [from, to) of the session; with hooks, each call's pre hook,
 * the tool, its post hook. Returns the whole wall time and each call's pre-hook
 * time of a write (the call S1 measures).
 */
export function runSession({ node, cli, repo, env, from = 0, to, hooks, session, commands }) {
  const t0 = process.hrtime.bigint();
  const writePre = [];
  for (let i = from; i < to; i++) {
    const c = sessionCall(repo, i, session);
    if (hooks) {
      const ms = hookOnce(node, cli, repo, c.pre, env, commandOf(commands, c, false));
      if (c.kind === 'write') writePre.push(ms);
    }
    c.run(env);
    if (hooks) hookOnce(node, cli, repo, c.post, env, commandOf(commands, c, true));
  }
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, writePre };
}

/**
 * The resident hook server of the build at `cli` (src/cli/resident-server.ts, what
 * `GUARD_RESIDENT=1` hands calls to), driven over its socket without the small client's node
 * start: `call(repo, payload, env)` runs one `guard hook claude` in the server exactly as the
 * client would have it run (the call's folder, whole environment, umask and payload; the
 * server runs the same runCli the command's process runs), and resolves to its wall time in
 * ms; it throws when guard denies or fails, as hookOnce does. `dir` is the server's socket
 * folder (made private here); `stop()` removes it, which ends the server within 2 s.
 */
export async function residentHook({ node, cli, env, dir }) {
  const place = await import(
    new URL(`file://${path.resolve(path.dirname(cli), '../runtime/resident-place.js')}`).href
  );
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  if (node !== process.execPath) throw new Error('residentHook: the build key names this node');
  const key = place.buildKey();
  const sock = place.socketPath(dir, key);
  const server = spawn(node, [path.resolve(path.dirname(cli), 'resident-server.js')], {
    cwd: '/',
    env: { ...env, GUARD_RESIDENT_DIR: dir },
    stdio: 'ignore',
    detached: true,
  });
  server.unref();
  for (let t = Date.now(); !fs.existsSync(sock);) {
    if (Date.now() - t > 60_000) throw new Error('residentHook: no server socket after 60 s');
    await new Promise((r) => setTimeout(r, 50));
  }
  const ask = (request) =>
    new Promise((resolve, reject) => {
      const c = net.createConnection(sock);
      let buf = '';
      let started = false;
      c.setEncoding('utf8');
      c.on('error', reject);
      c.on('connect', () => c.write(request));
      c.on('data', (chunk) => {
        buf += chunk;
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
          const m = JSON.parse(buf.slice(0, nl));
          buf = buf.slice(nl + 1);
          if (m.t === 'start' && !started) started = true;
          else return (c.destroy(), resolve(m));
        }
      });
      c.on('close', () => reject(new Error('residentHook: the server closed without a reply')));
    });
  return {
    server,
    async call(repo, payload, callEnv) {
      const t = process.hrtime.bigint();
      const r = await ask(
        JSON.stringify({
          v: place.PROTOCOL,
          key,
          // the server refuses a call it takes after this (the client's 1.5 s): a loaded machine's margin
          startBy: Date.now() + 60_000,
          argv: ['hook', 'claude'],
          cwd: repo,
          env: callEnv,
          umask: process.umask(),
          stdin: payload,
        }) + '\n',
      );
      const ms = Number(process.hrtime.bigint() - t) / 1e6;
      const out = r.t === 'done' ? Buffer.from(r.out, 'base64').toString('utf8') : '';
      if (r.t !== 'done' || r.code !== 0 || out.includes('"deny"'))
        throw new Error(
          `resident guard hook claude answered ${r.t} ${r.code}: ${out}${r.t === 'done' ? Buffer.from(r.err, 'base64').toString('utf8') : ''}`,
        );
      return ms;
    },
    stop() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Calls [from, to) as runSession runs them, each call's pre and post hook through the
 * resident server (`resident`, residentHook) but every `realEvery`-th call's (i % realEvery
 * === realEvery - 1; realEvery prime to 5, so shell and write calls both) through the real
 * `guard hook claude` process. Returns the wall time, the write pre-hook times of the real
 * calls (`writePre`) and of the resident ones (`writePreResident`), and `each(i)` is called
 * after every call (the soak's per-call loose-object trace).
 */
export async function runSessionMixed({
  node,
  cli,
  repo,
  env,
  from = 0,
  to,
  session,
  resident,
  realEvery,
  each,
}) {
  const t0 = process.hrtime.bigint();
  const writePre = [];
  const writePreResident = [];
  for (let i = from; i < to; i++) {
    const c = sessionCall(repo, i, session);
    const real = i % realEvery === realEvery - 1;
    const hook = (payload) =>
      real ? hookOnce(node, cli, repo, payload, env) : resident.call(repo, payload, env);
    const ms = await hook(c.pre);
    if (c.kind === 'write') (real ? writePre : writePreResident).push(ms);
    c.run(env);
    await hook(c.post);
    each?.(i);
  }
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, writePre, writePreResident };
}

/** Bytes under .git (what guard's records and git's own files take). */
export function gitDirBytes(repo) {
  let total = 0;
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) total += fs.statSync(p).size;
    }
  };
  walk(path.join(repo, '.git'));
  return total;
}

/** Loose objects and loose refs under refs/guard/ (what S1 counts per call). */
export function looseCounts(repo) {
  const r = spawnSync('git', ['count-objects', '-v'], { cwd: repo, encoding: 'utf8' });
  const objects = Number(/^count: (\d+)$/m.exec(r.stdout)?.[1] ?? 0);
  let refs = 0;
  const walk = (d) => {
    if (!fs.existsSync(d)) return;
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(d, e.name));
      else refs++;
    }
  };
  walk(path.join(repo, '.git', 'refs', 'guard'));
  return { objects, refs };
}

/**
 * S1's measurement, shared by the bench and the soak: the same Write in the
 * long session and in a fresh clone of its start, interleaved (same load).
 * The fresh clone's session first makes the same 40 calls, so the measured
 * Write has the same shape in both (a session base older than the file on
 * disk: two diffs; not the session's first policy read, which lists its
 * steps once): what differs is the history, not the call. Each list holds
 * the pre-hook's wall times in ms.
 */
export function measureS1({ node, cli, env, long, fresh, after, rounds }) {
  runSession({ node, cli, repo: fresh.repo, env, to: 40, hooks: true, session: fresh.session });
  const times = { long: [], fresh: [] };
  for (let i = 0; i < rounds; i++) {
    for (const [side, r] of [
      ['long', long],
      ['fresh', fresh],
    ]) {
      const c = sessionCall(r.repo, after + 2 * i * 5, r.session);
      times[side].push(hookOnce(node, cli, r.repo, c.pre, env));
      c.run(env);
    }
  }
  return times;
}

/**
 * The resident hook servers whose socket folder is `sockDir` (their environment names it), and
 * their git processes (which inherit it: a kept cat-file), each with its CPU so far.
 */
export function residentServers(sockDir) {
  const out = [];
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (
        !fs.readFileSync(`/proc/${pid}/environ`, 'utf8').includes(`GUARD_RESIDENT_DIR=${sockDir}\0`)
      )
        continue;
      const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      // utime, stime, and the reaped children's (its git processes), in clock ticks of 10 ms
      const server = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('resident-server');
      out.push({ pid: Number(pid), server, cpuMs: (+f[11] + +f[12] + +f[13] + +f[14]) * 10 });
    } catch {
      // gone, or not ours
    }
  }
  return out;
}

/**
 * What `.git` holds, by kind (issue 22, item 6: what the growth per 1,000
 * calls is made of): { kind: { bytes, files } }. Sizes are the files' sizes
 * (as gitDirBytes adds them), not the blocks they take on disk.
 */
export function gitDirBreakdown(repo) {
  const kinds = {};
  const kindOf = (rel) => {
    if (rel === 'guard/journal' || rel === 'guard/journal-pinned') return 'journal';
    if (rel.startsWith('guard/')) return 'guard: other files';
    if (rel.startsWith('guard-sessions/')) return 'session index';
    if (rel.startsWith('guard-index') || rel === 'guard-last-checkpoint') return 'checkpoint cache';
    if (rel.startsWith('refs/guard/')) return 'loose refs (refs/guard/)';
    if (rel.startsWith('refs/')) return 'loose refs (other)';
    if (rel === 'packed-refs') return 'packed-refs';
    if (rel.startsWith('logs/')) return 'reflogs';
    if (/^objects\/[0-9a-f]{2}\//.test(rel)) return 'loose objects';
    if (/^objects\/pack\/.*\.pack$/.test(rel)) return 'packs (.pack)';
    if (rel.startsWith('objects/pack/')) return 'pack indexes (.idx, .rev, ...)';
    if (rel.startsWith('objects/info/commit-graph')) return 'commit-graph';
    if (rel === 'info/refs' || rel === 'objects/info/packs') return 'server info (info/refs)';
    if (rel === 'index') return 'index';
    return "git's own (config, hooks, HEAD, ...)";
  };
  const walk = (d, rel) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(p, r);
      else if (e.isFile()) {
        const k = (kinds[kindOf(r)] ??= { bytes: 0, files: 0 });
        k.bytes += fs.statSync(p).size;
        k.files++;
      }
    }
  };
  walk(path.join(repo, '.git'), '');
  return kinds;
}
