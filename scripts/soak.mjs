#!/usr/bin/env node
// guard soak: guard's promises tried many times, in real repositories, with the
// built CLI. Not part of `npm test`.
//
//   node scripts/soak.mjs [--short] [--seed N] [--kills N] [--jobs N] [--only kills,properties,concurrency,suite,history] [--keep]
//                         [--calls N] [--real-every N] [--until HH:MM] [--resume DIR]
//   npm run soak            (npm run soak -- --short: the few-minute version CI may run)
//
// kills        SIGKILL guard at every named fault point (src/runtime/faults.ts) and
//              after random delays, across write, review, restore, check,
//              discard, hook and rewind. After every kill: each file byte for
//              byte its old or its new version; the checkpoint the run made
//              restores the state before it; the next command takes over.
// properties   generated base/new pairs (test/unit/numstat-property.test.ts's
//              generators: NUL bytes, mode changes, renames, whitespace-only edits, CRLF,
//              invalid UTF-8, ...) agreeing with `git diff --numstat`.
// concurrency  8 agents x 20 commits through the real pre-commit hook
//              (test/e2e/concurrency.test.ts), and 8 agents x 20 tool calls
//              through `guard hook claude` at once: nothing lost, every
//              refusal with its own ref.
// suite        the load tests `npm test` runs small, at full size (GUARD_SOAK=1,
//              test/scale.ts): 30 random SIGKILLs of write and review
//              (faults.test.ts), 20 and 100 MB files (hostile.test.ts), 10
//              rounds of simultaneous reviews (concurrency.test.ts), 30
//              rounds of random checkpoints (checkpoint.test.ts), doctor's
//              git processes after 10 refusals (doctor.test.ts).
// history      10,000 tool calls of one session in one repository through
//              `guard hook claude` (scripts/session-sim.mjs; --calls N; --until
//              HH:MM (UTC): stop adding calls at that time, the rows give the
//              count reached; --resume DIR: go on from there, in the kept DIR),
//              then the same Write in it and in a fresh clone (after the same
//              40-call start, so the call has the same shape), interleaved, both
//              through the real command: the cost of a call at the end against
//              the start (issue 22, S1: <= 1.05x), the loose refs and objects
//              (objects counted after every call, each background gc traced by
//              its gc.pid), and what .git grew by, kind by kind (journal, packs,
//              packed-refs, ...), per 1,000 calls and against the bytes the agent
//              wrote. What drives the calls (--real-every N, default 16): every
//              N-th call's pre and post hook run as the real `node dist/cli/main.js
//              hook claude` process (~300 ms each on a loaded 2-core machine:
//              10,000 calls never fitted in 80 minutes), the others in guard's
//              resident hook server (src/cli/resident-server.ts, what
//              GUARD_RESIDENT=1 hands calls to: the same runCli, each call with its
//              own folder, environment, umask and payload), over its socket. Both
//              write the same refs, journal, chain and index
//              (test/e2e/session-sim-driver.test.ts) and start the background gc
//              from the same code, so the history and its packing are what real
//              calls leave; only the calls come faster, which leaves the gc less
//              time per call than a real session would. --real-every 1: every call
//              through the real command, as before.
//
// Prints one table (the same form as scripts/bench.mjs) and exits 1 if any
// figure misses its goal.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as lib from './lib.mjs';
import { lines, printTable, ROOT } from './lib.mjs';

const CLI = lib.DEFAULT_CLI;
const NODE = process.execPath;
const argv = process.argv.slice(2);
const SHORT = argv.includes('--short');
// --resume DIR: go on with the history soak kept in DIR (a run stopped by --until, kept with --keep)
const RESUME = argv.includes('--resume') ? argv[argv.indexOf('--resume') + 1] : undefined;
const KEEP = argv.includes('--keep') || RESUME !== undefined;
const arg = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const ONLY = new Set((arg('--only') ?? 'kills,properties,concurrency,suite,history').split(','));
let seed = Number(arg('--seed') ?? process.env.GUARD_SOAK_SEED ?? Date.now() % 1_000_000);
const SEED = seed;
const rand = () => {
  // mulberry32: a replayable stream from --seed
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const PARALLEL = Number(arg('--jobs') ?? Math.max(1, Math.min(4, os.cpus().length)));

if (argv.includes('--help')) {
  console.log(
    'usage: node scripts/soak.mjs [--short] [--seed N] [--kills N] [--only kills,properties,concurrency,suite,history] [--jobs N] [--keep]\n  --short    60 kills, 1,000 property pairs, 8 x 8 hook calls, 1,000 history calls (a few minutes)\n  --kills N  SIGKILLs to land (default 1,000)\n  history: --calls N (10,000), --real-every N (16: every N-th call through the real command, the rest through the resident server), --until HH:MM (UTC), --resume DIR',
  );
  process.exit(0);
}
if (!fs.existsSync(CLI)) {
  console.error('soak: the built CLI is missing; run `npm run build` first (npm run soak does).');
  process.exit(2);
}

const ENV = lib.cleanEnv({
  GIT_AUTHOR_NAME: 'Soak',
  GIT_AUTHOR_EMAIL: 'soak@guard.invalid',
  GIT_COMMITTER_NAME: 'Soak',
  GIT_COMMITTER_EMAIL: 'soak@guard.invalid',
});
const TMP = RESUME
  ? fs.realpathSync(RESUME)
  : fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'guard-soak-')));
const T0 = Date.now();
const log = (s) => process.stderr.write(`[soak ${((Date.now() - T0) / 1000).toFixed(0)}s] ${s}\n`);

// ---------------------------------------------------------------------------
// processes

/** A process to its end, in ENV: { status, signal, stdout, stderr }; a non-zero exit is the caller's to read. */
const sh = (cmd, args, opts = {}) => lib.sh(cmd, args, { env: ENV, allowFail: true, ...opts });
/** git's stdout; throws on failure. */
const git = (cwd, args, input) => lib.git(cwd, args, { env: ENV, input });
/** The built CLI, asynchronously (so several iterations run at once); `killAfter` ms: SIGKILL it then. */
function guard(cwd, args, { input = '', env = {}, killAfter } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [CLI, ...args], { cwd, env: { ...ENV, ...env } });
    const out = [];
    const err = [];
    child.stdout.on('data', (b) => out.push(b));
    child.stderr.on('data', (b) => err.push(b));
    child.stdin.on('error', () => {});
    child.stdin.end(input);
    const t = killAfter !== undefined ? setTimeout(() => child.kill('SIGKILL'), killAfter) : null;
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (t) clearTimeout(t);
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      });
    });
  });
}

let repoCount = 0;
const makeRepo = (files = {}) =>
  lib.makeRepo(path.join(TMP, `r${repoCount++}`), { env: ENV, files });
const write = (dir, f, c) => lib.writeFile(path.join(dir, f), c);

/** Bytes of each file (null: absent). */
function snap(dir, files) {
  return new Map(
    files.map((f) => [
      f,
      fs.existsSync(path.join(dir, f)) ? fs.readFileSync(path.join(dir, f)) : null,
    ]),
  );
}
const same = (a, b) => a === b || (a != null && b != null && a.equals(b));
const eqSnap = (a, b) => [...a].every(([f, v]) => same(v, b.get(f)));
/** 'old' / 'new' per file, or the first file that is neither. */
function oldOrNew(now, before, after) {
  const which = {};
  for (const [f, b] of now) {
    if (same(b, before.get(f))) which[f] = 'old';
    else if (same(b, after.get(f))) which[f] = 'new';
    else return { half: f };
  }
  return { which };
}
/** Checkpoints whose reason starts with `prefix`, newest first: their ids are what `guard log` lists and `guard restore` takes. */
async function checkpointsByReason(dir, prefix) {
  const out = git(dir, [
    'for-each-ref',
    '--sort=-creatordate',
    '--sort=-refname',
    '--format=%(refname)%09%(contents:subject)',
    'refs/guard/checkpoints/',
  ]);
  return out
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [ref, subject] = l.split('\t');
      return {
        id: ref.slice('refs/guard/checkpoints/'.length),
        reason: subject.replace(/^guard checkpoint: /, ''),
      };
    })
    .filter((c) => c.reason.startsWith(prefix));
}
const indexOf = (dir) => git(dir, ['ls-files', '-s']);

// ---------------------------------------------------------------------------
// kill scenarios: setup() makes a fresh repository and says what the command
// is, what each file is before and after it, and how the run's checkpoint is
// found; verify() runs after every kill.

function laneSetup() {
  const files = ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'gone.txt', 'new.txt'];
  const dir = makeRepo({
    'a.txt': lines(30, 'a'),
    'b.txt': lines(30, 'b'),
    'c.txt': lines(30, 'c'),
    'd.txt': lines(2000, 'd'),
    'gone.txt': lines(20, 'gone'),
  });
  return { dir, files };
}
async function startLane(dir) {
  const s = await guard(dir, ['start', 'agent', '--json']);
  if (s.code !== 0) throw new Error(`guard start failed: ${s.stderr}`);
  return JSON.parse(s.stdout).path;
}
function editLane(lane) {
  write(lane, 'a.txt', lines(30, 'a') + 'a more\n');
  write(lane, 'b.txt', 'b first\n' + lines(30, 'b'));
  write(lane, 'c.txt', lines(30, 'c').replace('c 7\n', 'c seven\n'));
  write(lane, 'd.txt', lines(2000, 'd').replace('d 1000\n', 'd thousand\n'));
  write(lane, 'new.txt', 'brand new\n');
  fs.rmSync(path.join(lane, 'gone.txt'));
}
const hookPayload = (dir, tool, input, id) =>
  JSON.stringify({
    session_id: 'soak-session',
    transcript_path: path.join(TMP, 't.jsonl'),
    cwd: dir,
    hook_event_name: 'PreToolUse',
    tool_name: tool,
    tool_input: input,
    tool_use_id: id,
  });

const SCENARIOS = [
  {
    name: 'write',
    points: [
      'write:after-checkpoint',
      'write:before-rename',
      'write:after-rename',
      'atomic:before-rename',
      'checkpoint:after-add',
      'checkpoint:before-update-ref',
    ],
    async setup() {
      const old = lines(20_000, 'row');
      const dir = makeRepo({ 'big.txt': old, 'other.txt': 'o\n' });
      const next = old + lines(2_000, 'more');
      return {
        dir,
        files: ['big.txt', 'other.txt'],
        args: ['write', 'big.txt', '--auto'],
        input: next,
        after: new Map([
          ['big.txt', Buffer.from(next)],
          ['other.txt', Buffer.from('o\n')],
        ]),
        reason: 'before guard write',
        ok: [0],
      };
    },
  },
  {
    name: 'review',
    points: [
      'review:after-refs',
      'review:after-lock',
      'checkpoint:after-add@2',
      'review:after-checkpoint',
      'atomic:before-rename',
      'review:between-files@1',
      'review:between-files@3',
      'review:before-stage',
      'review:before-record',
    ],
    async setup() {
      const { dir, files } = laneSetup();
      const lane = await startLane(dir);
      editLane(lane);
      return {
        dir,
        files,
        args: ['review', 'agent', '--auto'],
        after: snap(lane, files),
        reason: 'before guard review merges',
        staged: true,
        ok: [0],
      };
    },
  },
  {
    name: 'restore',
    points: [
      'restore:after-undo-checkpoint',
      'restore:between-files@1',
      'restore:between-files@2',
      'restore:before-stage',
      'atomic:before-rename',
      'checkpoint:after-add',
      'checkpoint:before-update-ref',
    ],
    async setup() {
      const files = ['a.txt', 'b.txt', 'c.txt', 'd.txt'];
      const dir = makeRepo({
        'a.txt': lines(40, 'a'),
        'b.txt': lines(40, 'b'),
        'c.txt': lines(40, 'c'),
      });
      write(dir, 'c.txt', lines(41, 'c'));
      const s0 = snap(dir, files);
      // a whole-tree checkpoint of this state, as guard hook takes before a shell command
      const h = await guard(dir, ['hook', 'claude'], {
        input: hookPayload(dir, 'Bash', { command: 'true' }, 'toolu_restore'),
      });
      if (h.code !== 0) throw new Error(`guard hook failed: ${h.stderr}`);
      const [cp] = await checkpointsByReason(dir, '');
      write(dir, 'a.txt', lines(10, 'A'));
      fs.rmSync(path.join(dir, 'b.txt'));
      write(dir, 'd.txt', 'new file\n');
      git(dir, ['add', 'a.txt']);
      return {
        dir,
        files,
        args: ['restore', cp.id, '--staged'],
        after: s0,
        reason: 'before guard restore',
        ok: [0],
      };
    },
  },
  {
    name: 'check',
    points: ['check:before-records', 'check:after-records'],
    async setup() {
      const dir = makeRepo({ 'mod.py': lines(200, 'def f') });
      write(dir, 'mod.py', lines(5, 'stub'));
      git(dir, ['add', 'mod.py']);
      const files = ['mod.py'];
      // check never writes the work tree in auto mode: before and after are the same
      return {
        dir,
        files,
        args: ['check', '--auto'],
        after: snap(dir, files),
        reason: null,
        ok: [1],
      };
    },
  },
  {
    name: 'discard',
    points: [
      'discard:after-checkpoint',
      'discard:before-remove',
      'checkpoint:after-add',
      'checkpoint:before-update-ref',
    ],
    async setup() {
      const { dir } = laneSetup();
      const lane = await startLane(dir);
      editLane(lane);
      write(lane, 'scratch/untracked.txt', 'only here\n');
      const files = ['a.txt', 'b.txt', 'new.txt', 'scratch/untracked.txt'];
      return {
        dir,
        lane,
        laneFiles: snap(lane, files),
        files: ['a.txt', 'b.txt'],
        args: ['discard', 'agent'],
        after: snap(dir, ['a.txt', 'b.txt']),
        reason: 'before guard discard',
        ok: [0],
      };
    },
  },
  {
    name: 'hook-bash',
    // (a shell call's record is the checkpoint itself: the hook:* points are a Write's)
    points: ['checkpoint:after-add', 'checkpoint:before-update-ref'],
    async setup() {
      const dir = makeRepo({ 'a.txt': lines(50, 'a'), 'b.txt': 'b\n' });
      write(dir, 'a.txt', lines(51, 'a'));
      write(dir, 'untracked.txt', 'u\n');
      const files = ['a.txt', 'b.txt', 'untracked.txt'];
      // before a shell command: a whole-tree checkpoint, then the record; no file is written
      const input = hookPayload(dir, 'Bash', { command: 'rm -rf build' }, 'toolu_hook');
      return {
        dir,
        files,
        args: ['hook', 'claude'],
        input,
        after: snap(dir, files),
        reason: '',
        ok: [0],
      };
    },
  },
  {
    name: 'hook-write',
    points: ['hook:before-record', 'hook:after-record'],
    async setup() {
      const dir = makeRepo({ 'a.txt': lines(50, 'a'), 'b.txt': 'b\n' });
      const files = ['a.txt', 'b.txt'];
      // a Write: measured, recorded (its checkpoint too), allowed; the harness writes, not guard
      const input = hookPayload(
        dir,
        'Write',
        { file_path: path.join(dir, 'b.txt'), content: 'b2\n' },
        'toolu_hook',
      );
      return {
        dir,
        files,
        args: ['hook', 'claude'],
        input,
        after: snap(dir, files),
        reason: '',
        ok: [0],
      };
    },
  },
  {
    name: 'rewind',
    points: [
      'rewind:between-files',
      'atomic:before-rename',
      'checkpoint:after-add',
      'checkpoint:before-update-ref',
    ],
    async setup() {
      const dir = makeRepo({ 'a.txt': lines(30, 'a'), 'b.txt': lines(30, 'b') });
      const files = ['a.txt', 'b.txt'];
      const original = snap(dir, files);
      // the session writes both files through the hook (the harness writes after guard allows)
      for (const [i, f] of files.entries()) {
        const content = lines(31, f);
        const h = await guard(dir, ['hook', 'claude'], {
          input: hookPayload(
            dir,
            'Write',
            { file_path: path.join(dir, f), content },
            `toolu_w${i}`,
          ),
        });
        if (h.code !== 0) throw new Error(`guard hook failed: ${h.stderr}`);
        write(dir, f, content);
      }
      return {
        dir,
        files,
        args: ['rewind', 'soak-session'],
        after: original,
        reason: 'before guard rewind',
        ok: [0],
      };
    },
  },
];

const kills = {
  runs: 0,
  killed: 0,
  finished: 0,
  half: 0,
  restorable: 0,
  needRestore: 0,
  nextOk: 0,
  failures: [],
};
const perScenario = Object.fromEntries(SCENARIOS.map((s) => [s.name, 0]));

async function oneKill(sc, how) {
  const ctx = await sc.setup();
  const before = snap(ctx.dir, ctx.files);
  const indexBefore = indexOf(ctx.dir);
  const fail = (why) => {
    const f = `${sc.name} ${how.point ?? `after ${how.delay} ms`}: ${why}`;
    kills.failures.push(f);
    log(`FAILURE ${f}${KEEP ? ` (${ctx.dir})` : ''}`);
  };
  const r = await guard(ctx.dir, ctx.args, {
    input: ctx.input ?? '',
    env: how.point ? { GUARD_FAULT: how.point } : {},
    killAfter: how.delay,
  });
  kills.runs++;
  if (r.signal !== 'SIGKILL') {
    kills.finished++;
    if (how.point)
      return fail(`not killed (exit ${r.code}): ${r.stderr.trim().split('\n').slice(-1)[0]}`);
  } else {
    kills.killed++;
    perScenario[sc.name]++;
  }
  // 1. every file old or new, never half written
  const now = snap(ctx.dir, ctx.files);
  const on = oldOrNew(now, before, ctx.after);
  if (on.half) {
    kills.half++;
    return fail(`${on.half} is neither old nor new`);
  }
  if (sc.name === 'discard' && fs.existsSync(ctx.lane)) {
    const laneOn = oldOrNew(
      snap(ctx.lane, [...ctx.laneFiles.keys()]),
      ctx.laneFiles,
      ctx.laneFiles,
    );
    if (laneOn.half) {
      kills.half++;
      return fail(`lane file ${laneOn.half} changed`);
    }
  }
  // 2. the checkpoint the run made brings back the state before it
  const changed = !eqSnap(now, before) || indexOf(ctx.dir) !== indexBefore;
  if (ctx.reason !== null) {
    const cps = await checkpointsByReason(ctx.dir, ctx.reason);
    const mine =
      sc.name === 'restore' || sc.name === 'rewind'
        ? cps.filter((c) => c.reason.startsWith(ctx.reason))
        : cps;
    if (sc.name === 'discard') {
      // the lane's last state is in the checkpoint, byte for byte
      if (mine.length > 0) {
        kills.needRestore++;
        const ref = `refs/guard/checkpoints/${mine[0].id}`;
        const ok = [...ctx.laneFiles].every(([f, b]) => {
          const show = sh('git', ['cat-file', 'blob', `${ref}:${f}`], { cwd: ctx.dir });
          return show.status === 0 && Buffer.from(show.stdout, 'utf8').equals(b);
        });
        if (ok) kills.restorable++;
        else fail('the discard checkpoint lacks a lane file');
      } else if (!fs.existsSync(ctx.lane)) fail('lane gone without a checkpoint');
    } else if (changed) {
      kills.needRestore++;
      if (mine.length === 0) return fail('files changed but no checkpoint');
      const rr = await guard(ctx.dir, [
        'restore',
        mine[0].id,
        ...(ctx.staged || sc.name !== 'write' ? ['--staged'] : []),
      ]);
      const back = snap(ctx.dir, ctx.files);
      if (rr.code === 0 && eqSnap(back, before)) kills.restorable++;
      else
        return fail(
          `restore ${mine[0].id} exited ${rr.code}, state ${eqSnap(back, before) ? 'equal' : 'differs'}: ${rr.stderr.trim().split('\n')[0]}`,
        );
    }
  }
  // 3. the next command takes over cleanly
  const next = await guard(ctx.dir, ctx.args, { input: ctx.input ?? '' });
  const gone = sc.name === 'discard' && !fs.existsSync(ctx.lane);
  if (ctx.ok.includes(next.code) || (gone && next.code === 2)) {
    if (
      sc.name !== 'check' &&
      sc.name !== 'discard' &&
      !sc.name.startsWith('hook') &&
      !eqSnap(snap(ctx.dir, ctx.files), ctx.after)
    )
      return fail('the next run did not finish the work');
    kills.nextOk++;
  } else
    return fail(`the next run exited ${next.code}: ${next.stderr.trim().split('\n').slice(-1)[0]}`);
  if (!KEEP) fs.rmSync(ctx.dir, { recursive: true, force: true });
}

async function pool(tasks, n) {
  let i = 0;
  const worker = async () => {
    while (i < tasks.length) {
      const t = tasks[i++];
      try {
        await t();
      } catch (e) {
        kills.failures.push(`setup: ${e.message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: n }, worker));
}

async function soakKills() {
  const target = Number(arg('--kills') ?? (SHORT ? 60 : 1000));
  // measured run time of each command (one clean run), for the random delays
  const duration = {};
  for (const sc of SCENARIOS) {
    const ctx = await sc.setup();
    const t = Date.now();
    await guard(ctx.dir, ctx.args, { input: ctx.input ?? '' });
    duration[sc.name] = Date.now() - t;
  }
  log(`kills: run times ${JSON.stringify(duration)} ms; target ${target} kills; seed ${SEED}`);
  const named = SCENARIOS.flatMap((sc) => sc.points.map((point) => ({ sc, point })));
  const tasks = [];
  const rounds = Math.max(1, Math.round(target / 200));
  for (let r = 0; r < rounds; r++)
    for (const { sc, point } of named) tasks.push(() => oneKill(sc, { point }));
  // random moments: 20% to 110% of the command's own run time (a kill that comes late finds it done)
  const randomCount = Math.max(0, Math.ceil((target - tasks.length) * 1.15));
  for (let k = 0; k < randomCount; k++) {
    const sc = SCENARIOS[k % SCENARIOS.length];
    const delay = Math.round(duration[sc.name] * (0.2 + 0.9 * rand()));
    tasks.push(() => oneKill(sc, { delay }));
  }
  let done = 0;
  const wrapped = tasks.map((t) => async () => {
    await t();
    if (++done % 50 === 0)
      log(
        `kills: ${done}/${tasks.length} runs, ${kills.killed} killed, ${kills.failures.length} failures`,
      );
  });
  await pool(wrapped, PARALLEL);
  // random delays that came after the command had finished landed no kill: top up until the target is met
  for (let extra = 0; kills.killed < target && extra < target;) {
    const more = Array.from({ length: Math.min(PARALLEL * 4, target - kills.killed) }, () => {
      const sc = SCENARIOS[extra++ % SCENARIOS.length];
      return () => oneKill(sc, { delay: Math.round(duration[sc.name] * (0.2 + 0.7 * rand())) });
    });
    await pool(more, PARALLEL);
  }
  const restorePct = kills.needRestore ? (100 * kills.restorable) / kills.needRestore : 100;
  row(
    'kills',
    `SIGKILLs landed (named points x${rounds} + random delays) across ${SCENARIOS.map((s) => s.name).join(', ')}`,
    `${kills.killed}`,
    `${kills.runs} runs`,
    `>= ${target}`,
    kills.killed >= target,
  );
  row(
    'kills',
    'half-written files after a kill',
    `${kills.half}`,
    `${kills.killed} kills`,
    '0',
    kills.half === 0,
  );
  row(
    'kills',
    'restorable from the checkpoint the run made',
    `${restorePct.toFixed(1)}%`,
    `${kills.restorable}/${kills.needRestore}`,
    '100%',
    restorePct === 100,
  );
  row(
    'kills',
    'the next command takes over cleanly',
    `${kills.nextOk}`,
    `${kills.runs} runs`,
    'all',
    kills.nextOk === kills.runs,
  );
  notes.push(
    `kills per command: ${Object.entries(perScenario)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  for (const f of kills.failures.slice(0, 20)) notes.push(`kill failure: ${f}`);
}

// ---------------------------------------------------------------------------
// properties: the numstat property test's generators and checks at soak scale

function soakProperties() {
  const batches = SHORT ? 20 : 200; // x 50 pairs
  // (each batch is one repository; a rename, a mode change, a NUL byte or a reindent is one pair in it)
  const t = Date.now();
  const countsFile = path.join(TMP, 'property-counts.jsonl');
  const r = vitestJson(['test/unit/numstat-property.test.ts'], {
    env: {
      GUARD_PROPERTY_RUNS: String(batches),
      GUARD_PROPERTY_SEED: String(SEED),
      GUARD_PROPERTY_COUNTS: countsFile,
    },
  });
  const ok = r.ok;
  // the test appends what each kind of pair came to (git's own view: its -M pairing, its binary, its -b)
  let k = {};
  try {
    const last = fs.readFileSync(countsFile, 'utf8').trim().split('\n').pop();
    k = JSON.parse(last);
  } catch {
    notes.push('properties: the test wrote no counts');
  }
  const pairs = k.pairs ?? 0;
  const goal = SHORT ? 1000 : 10_000;
  row(
    'properties',
    'generated base/new pairs agreeing with git diff --numstat (and hunks)',
    `${ok ? pairs : 0}`,
    `${batches * 50} pairs`,
    `>= ${goal.toLocaleString('en')}`,
    ok && pairs >= goal,
  );
  const kind = (what, n, min) =>
    row(
      'properties',
      `  of which ${what}`,
      `${ok ? (n ?? 0) : 0}`,
      `${pairs} pairs`,
      `>= ${min}`,
      ok && (n ?? 0) >= min,
    );
  const share = (f) => Math.floor((goal * f) / 100);
  kind('NUL bytes (binary to git and to guard)', k.nul, share(5));
  kind('whitespace-only changes (git -b: no change)', k.whitespaceOnly, share(1));
  kind('mode changes 100644 <-> 100755', k.modeChange, share(5));
  kind('renames with edits (git diff --cached -M: R < 100)', k.renameEdited, share(2));
  kind('renames without edits (R100)', k.renameExact, share(5));
  kind('moves git splits into delete + add', k.renameSplit, share(1));
  notes.push(
    `properties: ${batches} batches of 50 pairs (NUL bytes, mode changes, renames, whitespace-only edits, CRLF, invalid UTF-8, long lines), seed ${SEED}, ${((Date.now() - t) / 1000).toFixed(0)} s`,
  );
  if (!ok) notes.push(`properties failed: ${r.failures.slice(0, 3).join(' | ')}`);
  // renames: 20 moves per batch, with and without edits, against git diff --numstat -M
  const moves = SHORT ? 1000 : 10_000;
  const t3 = Date.now();
  const m = vitestJson(['test/unit/rename-property.test.ts'], {
    env: { GUARD_PROPERTY_RUNS: String(moves / 20) },
  });
  const seenMoves = m.tests.find((x) => x.meta?.renames)?.meta.renames;
  row(
    'properties',
    'moved files (renames, with and without edits) agreeing with git diff --numstat -M',
    `${m.ok ? moves : 0}`,
    `${moves} moves`,
    SHORT ? '>= 1,000' : '>= 10,000',
    m.ok,
  );
  notes.push(
    `renames: ${seenMoves ? JSON.stringify(seenMoves) : '?'} (renamed: git paired them; split: git saw a delete and an add), ${((Date.now() - t3) / 1000).toFixed(0)} s`,
  );
  if (!m.ok) notes.push(`rename property failed: ${m.failures.slice(0, 3).join(' | ')}`);
  // the hunk and strategy properties (test/unit/hunks.test.ts: 4, strategies.test.ts: 1) at the same scale
  const cases = SHORT ? 1000 : 10_000;
  const t2 = Date.now();
  const h = vitestJson(['test/unit/hunks.test.ts', 'test/unit/strategies.test.ts'], {
    env: { GUARD_PROPERTY_CASES: String(cases) },
  });
  row(
    'properties',
    'hunk (4) and strategy (1) properties, generated cases each',
    `${h.ok ? cases : 0}`,
    `5 x ${cases}`,
    SHORT ? '>= 1,000 each' : '>= 10,000 each',
    h.ok,
  );
  notes.push(
    `hunk and strategy properties: 5 properties x ${cases} cases, ${((Date.now() - t2) / 1000).toFixed(0)} s`,
  );
  if (!h.ok) notes.push(`hunk/strategy properties failed: ${h.failures.slice(0, 3).join(' | ')}`);
}

// ---------------------------------------------------------------------------
// concurrency

function soakCommits() {
  const r = vitestJson(['test/e2e/concurrency.test.ts'], {
    env: { GUARD_SOAK: '1' },
    testNamePattern: 'processes x',
  });
  const t = r.tests.find((x) => /processes x \d+ commits/.test(x.title));
  const m = t?.meta ?? {};
  const ok = r.ok && t?.status === 'passed';
  row(
    'concurrency',
    `${m.lanes ?? 8} agents x ${m.commits ?? 20} commits through the pre-commit hook at once`,
    ok ? 'pass' : 'FAIL',
    `${m.attempts ?? '?'} attempts`,
    'nothing lost, a ref per refusal',
    ok && m.refs === m.blocked,
  );
  if (!ok) notes.push(`commits: ${r.failures.slice(0, 4).join(' | ')}`);
}

async function soakHookCalls() {
  const AGENTS = 8;
  const CALLS = SHORT ? 8 : 20;
  const files = Object.fromEntries(
    Array.from({ length: AGENTS }, (_, a) => [`agent${a}/big.py`, lines(200, `def a${a}`)]),
  );
  const dir = makeRepo(files);
  const results = await Promise.all(
    Array.from({ length: AGENTS }, async (_, a) => {
      const out = { allowed: 0, denied: 0, errors: [] };
      for (let c = 0; c < CALLS; c++) {
        const file = path.join(dir, `agent${a}`, c % 4 === 3 ? 'big.py' : `new${c}.py`);
        // every fourth call replaces the 200-line module with a stub: needs a person, so it is denied in auto mode
        const content = c % 4 === 3 ? `# stub ${a}.${c}\n` : lines(5, `agent ${a} call ${c}`);
        const r = await guard(dir, ['hook', 'claude'], {
          input: hookPayload(dir, 'Write', { file_path: file, content }, `toolu_${a}_${c}`),
          env: { GUARD_SESSION: `agent-${a}` },
        });
        let decision = 'allow';
        try {
          decision = r.stdout.trim()
            ? (JSON.parse(r.stdout).hookSpecificOutput?.permissionDecision ?? 'allow')
            : 'allow';
        } catch {
          out.errors.push(`bad answer: ${r.stdout.slice(0, 80)}`);
        }
        if (r.code !== 0)
          out.errors.push(`exit ${r.code}: ${r.stderr.trim().split('\n').slice(-1)[0]}`);
        if (decision === 'allow') {
          out.allowed++;
          write(dir, path.relative(dir, file), content); // the harness writes what guard allowed
        } else out.denied++;
      }
      return out;
    }),
  );
  const allowed = results.reduce((s, r) => s + r.allowed, 0);
  const denied = results.reduce((s, r) => s + r.denied, 0);
  const errors = results.flatMap((r) => r.errors);
  const rejected = git(dir, ['for-each-ref', '--format=%(refname)', 'refs/guard/rejected/'])
    .split('\n')
    .filter(Boolean);
  const bigIntact = Array.from(
    { length: AGENTS },
    (_, a) =>
      fs.readFileSync(path.join(dir, `agent${a}`, 'big.py'), 'utf8') === files[`agent${a}/big.py`],
  ).every(Boolean);
  const ok =
    errors.length === 0 &&
    denied === AGENTS * Math.floor(CALLS / 4) &&
    rejected.length === denied &&
    bigIntact;
  row(
    'concurrency',
    `${AGENTS} agents x ${CALLS} tool calls through guard hook claude at once`,
    `${allowed} allowed, ${denied} denied`,
    `${rejected.length} rejected refs`,
    'a ref per refusal, no errors',
    ok,
  );
  if (!ok)
    notes.push(
      `hook calls: ${errors.length} errors (${errors.slice(0, 3).join(' | ')}); denied ${denied}, expected ${AGENTS * Math.floor(CALLS / 4)}; refs ${rejected.length}; modules intact ${bigIntact}`,
    );
}

// ---------------------------------------------------------------------------

/**
 * The loose objects of `repo` counted in all 256 fan-out folders (no process: a readdir each),
 * and whether a `git gc` holds its lock (gc.pid) now: the history soak's per-call trace.
 */
function looseNow(repo) {
  const objects = path.join(repo, '.git', 'objects');
  let n = 0;
  for (let h = 0; h < 256; h++) {
    const d = path.join(objects, h.toString(16).padStart(2, '0'));
    try {
      for (const f of fs.readdirSync(d)) if (/^[0-9a-f]{38}$/.test(f)) n++;
    } catch {
      // no folder: none there
    }
  }
  return { objects: n, gc: fs.existsSync(path.join(repo, '.git', 'gc.pid')) };
}

/**
 * S1: N calls of one session, then one more Write measured in that
 * repository and in a fresh clone of its start, interleaved (same run, same
 * load), plus the pre-hook time of the first and the last 200 writes.
 *
 * What drives the calls (--real-every N, default 16): every call's pre and
 * post hook run `guard hook claude` as the command runs it, either in the
 * real command's own process (node dist/cli/main.js hook claude, the
 * payload on stdin: the N-th calls, i % N === N - 1, writes and shell calls
 * both, N being prime to 5, and every measured S1 call) or in the resident
 * hook server (src/cli/resident-server.ts, what GUARD_RESIDENT=1 hands
 * calls to: the same runCli in a long-lived process, with each call's
 * folder, environment, umask and payload, its answer checked the same way),
 * over its socket without the client's node start (session-sim.mjs
 * residentHook). Both write the same records (refs, journal, session chain,
 * index; test/e2e/session-sim-driver.test.ts) and start the same background
 * packing from the same code (apply's packWhenLoose after the records), so
 * what the history is made of, and when git packs it, is what 10,000 real
 * calls leave; the calls only come faster (a node start less each), which
 * gives the background gc less time per call than a real session would.
 * --real-every 1: every call through the real command (~300 ms each here).
 */
async function soakHistory() {
  const sim = await import('./session-sim.mjs');
  const stateFile = path.join(TMP, 'history-state.json');
  const saved = RESUME ? JSON.parse(fs.readFileSync(stateFile, 'utf8')) : null;
  let calls = Number(arg('--calls') ?? saved?.calls ?? (SHORT ? 1000 : 10_000));
  const realEvery = Number(arg('--real-every') ?? saved?.realEvery ?? 16);
  // --until HH:MM (UTC, today): no new chunk past it (a loaded machine's budget); the rows say how many calls ran
  const until = arg('--until')
    ? new Date(`${new Date().toISOString().slice(0, 10)}T${arg('--until')}:00Z`)
    : null;
  const long = path.join(TMP, 'history');
  if (!saved) sim.makeSessionRepo(long, ENV);
  // the fresh clone of the start (a resumed run's own: --no-local copies main's objects alone)
  const fresh = path.join(TMP, `history-fresh${saved ? `-${saved.done}` : ''}`);
  sh('git', ['clone', '-q', ...(saved ? ['--no-local'] : []), long, fresh]);
  const st = saved ?? {
    calls,
    realEvery,
    // calls made, and the next call's index (S1's measured writes take indexes of their own)
    done: 0,
    next: 0,
    kindsBefore: sim.gitDirBreakdown(long),
    realWrites: 0,
    residentWrites: 0,
    firsts: [],
    lasts: [],
    firstsResident: [],
    lastsResident: [],
    // loose refs after every chunk, loose objects after every call: the most seen
    peak: { refs: 0, objects: 0, objectsAt: 0 },
    // each background gc seen: the loose objects when its lock appeared, the most while it ran, after
    gcs: [],
    chunks: [],
  };
  st.calls = calls;
  const chunk = 250;
  const resident =
    realEvery > 1
      ? await sim.residentHook({ node: NODE, cli: CLI, env: ENV, dir: path.join(TMP, 'resident') })
      : null;
  let gcOpen = null;
  const each = (i) => {
    const now = looseNow(long);
    if (now.objects > st.peak.objects)
      Object.assign(st.peak, { objects: now.objects, objectsAt: i + 1 });
    if (now.gc && !gcOpen) gcOpen = { call: i + 1, at: now.objects, most: now.objects };
    if (gcOpen) gcOpen.most = Math.max(gcOpen.most, now.objects);
    if (!now.gc && gcOpen) {
      st.gcs.push({ ...gcOpen, calls: i + 1 - gcOpen.call, after: now.objects });
      gcOpen = null;
    }
  };
  try {
    while (st.next < calls) {
      if (until && Date.now() > until.getTime()) {
        log(`history: --until ${arg('--until')} reached after ${st.done} calls (of ${calls})`);
        break;
      }
      const to = Math.min(calls, st.next + chunk);
      const t = Date.now();
      const r = await sim.runSessionMixed({
        node: NODE,
        cli: CLI,
        repo: long,
        env: ENV,
        from: st.next,
        to,
        session: 'soak-long',
        resident,
        realEvery,
        each,
      });
      st.done += to - st.next;
      st.next = to;
      st.realWrites += r.writePre.length;
      st.residentWrites += r.writePreResident.length;
      const keep = (xs, add, firsts) => {
        if (firsts) return xs.length < 200 ? [...xs, ...add.slice(0, 200 - xs.length)] : xs;
        return [...xs, ...add].slice(-200);
      };
      st.firsts = keep(st.firsts, r.writePre, true);
      st.lasts = keep(st.lasts, r.writePre, false);
      st.firstsResident = keep(st.firstsResident, r.writePreResident, true);
      st.lastsResident = keep(st.lastsResident, r.writePreResident, false);
      const now = sim.looseCounts(long);
      st.peak.refs = Math.max(st.peak.refs, now.refs);
      const med200 = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]?.toFixed(0);
      const line = `${to} calls in ${((Date.now() - t) / 1000).toFixed(0)} s; write pre-hook median, last 200: real command ${med200(st.lasts)} ms, resident ${med200(st.lastsResident)} ms; loose refs ${now.refs}, objects ${now.objects} (most so far ${st.peak.objects}, after call ${st.peak.objectsAt}); gc runs seen ${st.gcs.length}; load ${os.loadavg()[0].toFixed(1)}`;
      st.chunks.push(line);
      fs.writeFileSync(stateFile, JSON.stringify(st));
      log(`history: ${line}`);
    }
  } finally {
    resident?.stop();
  }
  // a Write of a file the long session wrote many times, in both (sim.measureS1), through the real command
  const s1 = sim.measureS1({
    node: NODE,
    cli: CLI,
    env: ENV,
    long: { repo: long, session: 'soak-long' },
    fresh: { repo: fresh, session: 'soak-fresh' },
    after: st.next,
    rounds: 21,
  });
  const made = st.done;
  const stopped = st.next < calls;
  historyRows(sim, long, st, s1, made, chunk);
  // S1's writes are calls of the session too, at indexes after+0, +10, ... +200: a resumed run goes on past them
  st.done += 21;
  st.next += 210;
  st.calls = calls + 210;
  fs.writeFileSync(stateFile, JSON.stringify(st));
  if (stopped)
    log(
      `history: to go on to ${calls.toLocaleString('en')} calls: node scripts/soak.mjs --only history --resume ${TMP}`,
    );
}

/** The history soak's rows (soakHistory): S1, the per-call cost at the end / the start, what is left loose, .git's growth. */
function historyRows(sim, long, st, s1, calls, chunk) {
  const counts = sim.looseCounts(long);
  const bytes = sim.gitDirBytes(long);
  const kindsAfter = sim.gitDirBreakdown(long);
  const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const n = calls.toLocaleString('en');
  const ratio = med(s1.long) / med(s1.fresh);
  row(
    'history',
    `PreToolUse Write after ${n} calls of one session / the same in a fresh clone after 40 calls (same run, real command)`,
    `${ratio.toFixed(2)}x`,
    `${med(s1.long).toFixed(0)} vs ${med(s1.fresh).toFixed(0)} ms, load ${os.loadavg()[0].toFixed(1)}`,
    '<= 1.05x',
    ratio <= 1.05,
  );
  // the first and last writes' pre-hook: at most 200 each, never overlapping
  const ends = (firsts, lasts, made) => {
    const k = Math.min(200, Math.floor(made / 2));
    return { a: firsts.slice(0, k), b: lasts.slice(-k), k };
  };
  for (const [what, f, l, made] of [
    ['real command', st.firsts, st.lasts, st.realWrites],
    ['resident', st.firstsResident, st.lastsResident, st.residentWrites],
  ]) {
    const { a, b, k } = ends(f, l, made);
    if (k < 10) continue;
    row(
      'history',
      `  write pre-hook (${what}), last ${k} / first ${k} of the ${n}: per-call cost at the end / the start (load moves this one)`,
      `${(med(b) / med(a)).toFixed(2)}x`,
      `${med(b).toFixed(0)} vs ${med(a).toFixed(0)} ms`,
      'flat',
      true,
    );
  }
  // left loose (git gc --auto past ~2,000 loose objects, git pack-refs past ~400 loose records: guard starts both): bounded, not growing with the calls
  const loose = [
    ['  loose refs under refs/guard/ left at the end', counts.refs, 1000],
    [`  loose refs under refs/guard/, most after any ${chunk} calls`, st.peak.refs, 1000],
    [
      `  loose objects, most after any call (after call ${st.peak.objectsAt.toLocaleString('en')})`,
      st.peak.objects,
      3000,
    ],
    ['  loose objects left at the end', counts.objects, 3000],
  ];
  for (const [what, v, goal] of loose)
    row('history', what, String(v), `${n} calls`, `<= ${goal.toLocaleString('en')}`, v <= goal);
  const g = st.gcs;
  if (g.length) {
    const at = g.map((x) => x.at).sort((a, b) => a - b);
    const most = Math.max(...g.map((x) => x.most));
    row(
      'history',
      `  background gc runs seen (gc.pid): loose objects when each began, min/median/max; most while one ran`,
      String(g.length),
      `${at[0]}/${at[at.length >> 1]}/${at[at.length - 1]}; ${most}`,
      'reported',
      true,
    );
  }
  row(
    'history',
    '  .git per 1,000 calls',
    `${(((bytes / calls) * 1000) / 1024).toFixed(0)} kB`,
    `${(bytes / 1048576).toFixed(1)} MB in all`,
    'reported',
    true,
  );
  growthRows(sim, long, st.kindsBefore, kindsAfter, calls);
}

/** What is kept with a bound (guard compacts or packs it past a size): the rest grows with the calls. */
const BOUNDED = {
  journal: 'bounded (compacted past 1 MB)',
  'loose objects': 'bounded (packed past ~2,000)',
  'loose refs (refs/guard/)': 'bounded (packed past ~400)',
  'checkpoint cache': 'bounded (one per work tree)',
};

/**
 * The growth of .git over the session by kind (session-sim.mjs gitDirBreakdown), per 1,000
 * calls, largest first, and against the bytes the agent wrote (issue 22, item 6).
 */
function growthRows(sim, repo, before, after, calls) {
  const grown = Object.keys(after)
    .map((k) => ({
      k,
      bytes: after[k].bytes - (before[k]?.bytes ?? 0),
      files: after[k].files - (before[k]?.files ?? 0),
    }))
    .filter((g) => Math.abs(g.bytes) >= 1024)
    .sort((a, b) => b.bytes - a.bytes);
  const per1000 = (x) => `${(((x / calls) * 1000) / 1024).toFixed(0)} kB`;
  const total = grown.reduce((n, g) => n + g.bytes, 0);
  const writes = calls - Math.floor((calls + 1) / 5);
  const written = writes * fs.statSync(path.join(repo, 'src', 'm0.py')).size;
  row(
    'history',
    `  .git growth per 1,000 calls / bytes the agent wrote (${writes.toLocaleString('en')} writes of a whole file)`,
    per1000(total),
    `${per1000(written)}, ${(total / written).toFixed(2)}x`,
    'reported',
    true,
  );
  for (const g of grown)
    row(
      'history',
      `    ${g.k}`,
      per1000(g.bytes),
      `${(g.bytes / 1024).toFixed(0)} kB, ${g.files} files`,
      BOUNDED[g.k] ?? 'reported',
      true,
    );
}

// ---------------------------------------------------------------------------
// the suite's load tests at soak size: the same test files `npm test` runs,
// with GUARD_SOAK=1 (test/scale.ts), read from vitest's JSON report

/** vitest on `files` in ENV plus `env`, read from its JSON report (scripts/lib.mjs). */
const vitestJson = (files, { env = {}, testNamePattern } = {}) =>
  lib.vitestJson(files, { env: { ...ENV, ...env }, testNamePattern, tmp: TMP });

/**
 * The load tests `npm test` runs small (docs/development.md, "Soak-sized
 * tests"): 30 random SIGKILLs of write and of review, files of 20 and 100 MB
 * over maxFileBytes, 10 rounds of two reviews started at once.
 */
function soakSuiteLoads() {
  const runs = [
    [
      'faults',
      'test/e2e/faults.test.ts',
      'SIGKILL after random delays',
      'random SIGKILLs (30 runs each): every file old or new, the checkpoint restores',
    ],
    [
      'large files',
      'test/e2e/hostile.test.ts',
      'large files',
      'files over maxFileBytes (20 and 100 MB): blocked, never held in memory',
    ],
    [
      'concurrency',
      'test/e2e/concurrency.test.ts',
      'started at the same moment',
      'two reviews started at once (10 rounds): none sees the other half written',
    ],
    [
      'checkpoints',
      'test/integration/checkpoint.test.ts',
      'rounds of random edits',
      'random edits, modes, symlinks, untracked files (30 rounds): every checkpoint the tree git add -A makes',
    ],
    [
      'doctor',
      'test/e2e/doctor.test.ts',
      'constant number of git processes',
      'doctor after 10 refused commits and two lanes: the same git processes as before',
    ],
  ];
  for (const [id, file, pattern, what] of runs) {
    log(`suite at soak size: ${file} (${pattern})`);
    const r = vitestJson([file], { env: { GUARD_SOAK: '1' }, testNamePattern: pattern });
    const ran = r.tests.filter((t) => t.status !== 'skipped' && t.status !== 'pending');
    const secs = ran.reduce((s, t) => s + (t.duration ?? 0), 0) / 1000;
    row(
      id,
      what,
      r.ok ? 'pass' : 'FAIL',
      `${ran.length} tests, ${secs.toFixed(0)} s`,
      'all pass',
      r.ok,
    );
    for (const f of r.failures.slice(0, 3)) notes.push(`${file}: ${f}`);
  }
}

const table = [];
const notes = [];
function row(id, what, value, of, goal, ok) {
  table.push({ id, what, value, of, goal, result: ok ? 'PASS' : 'FAIL' });
}

console.log(
  `guard soak${SHORT ? ' --short' : ''}: node ${process.version}, ${sh('git', ['--version']).stdout.trim()}, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}, ${PARALLEL} at once, seed ${SEED}`,
);
try {
  if (ONLY.has('properties')) {
    log('properties');
    soakProperties();
  }
  if (ONLY.has('concurrency')) {
    log('concurrency: hook calls');
    await soakHookCalls();
    log('concurrency: commits');
    soakCommits();
  }
  if (ONLY.has('suite')) {
    log('suite load tests at soak size');
    soakSuiteLoads();
  }
  if (ONLY.has('kills')) {
    log('kills');
    await soakKills();
  }
  if (ONLY.has('history')) {
    log('history');
    await soakHistory();
  }
} catch (e) {
  row('soak', 'could not run', 'ERR', '', '', false);
  notes.push(String(e?.stack ?? e));
}
console.log('');
printTable(
  { id: '', what: 'figure', value: 'value', of: 'of', goal: 'goal', result: 'result' },
  table,
  ['value', 'of'],
);
if (notes.length) {
  console.log('\nnotes:');
  for (const n of notes) console.log(`  - ${n}`);
}
console.log(`\ntotal ${((Date.now() - T0) / 1000).toFixed(0)} s${KEEP ? `; kept ${TMP}` : ''}`);
if (!KEEP) fs.rmSync(TMP, { recursive: true, force: true });
process.exit(table.every((r) => r.result === 'PASS') ? 0 : 1);
