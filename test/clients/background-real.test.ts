/**
 * A command the model runs in the background from the shell tool, inside the real harness
 * binaries, offline against the scripted model (test/harness/): `(sleep 3; rm big_module.py) >
 * /dev/null 2>&1 &` over the user's uncommitted work (big_module.py, 200 lines where 20 are
 * committed). The shell call returns at once and its after event comes before the file goes;
 * three seconds later the detached command deletes (or empties) it. guard reads the `&` as a
 * background call (src/flows/hook/detached.ts) in every harness, flag or none, and tells the
 * model at the session's next call (src/flows/hook/hook-shell.ts, "background commands").
 *
 * Codex and Copilot CLI send no background flag for `&`; before this file that path was tested
 * only with payloads written from HARNESSES.md (adv8, holes7, adv10). One session per row of RUNS:
 *
 *   the detaching call(s)  the harness runs it and returns (both events, no flag: checked on the
 *                          payloads, which a wrapper around the real guard keeps)
 *   the next call          the model "thinks" until the detached command has done its work (the
 *                          server holds its answer: ModelServer `before`), then edits small.py:
 *                          guard refuses that call once, to tell what was destroyed and the
 *                          `guard restore` that brings it back (run here: byte for byte)
 *   the same edit again    it runs: the session carries on to the end
 *
 * Found here: Codex kills a plain `&`'s process group when the call returns (`setsid` escapes);
 * Copilot's own flag, `bash` with `mode: "async"`, was not read (fixed; test/e2e/bg-real-found);
 * two open commands got the same loss told twice (fixed; the same file).
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, cleanupRepos, outsideDir, type TestRepo } from '../helpers.js';
import { ensureHarnesses, type Installed, type RealHarness } from '../harness/install.js';
import { startModelServer, type Action, type ModelServer } from '../harness/model-server.js';
import { CHAT_VOCAB, HARNESS_API, runHarness, type HarnessRun } from '../harness/run.js';
import {
  buildProject,
  freshHome,
  SMALL,
  SMALL_EDITED,
  SMALL_NEW,
  SMALL_OLD,
  smallEditPatch,
  STATE,
  USER_WORK,
} from '../harness/scenario.js';

/** One session: the detaching call(s), then the model's next call (refused once to tell), the same call again, the end. */
interface Run {
  name: string;
  h: RealHarness;
  /** The detaching calls, in order; the last one is the one that takes big_module.py. */
  detach: Extract<Action, { kind: 'shell' }>[];
  /** Whether the file is gone (deleted or emptied): the model's next call waits for it. */
  gone: (dir: string) => boolean;
  /** What guard's report says happened to the file. */
  told: RegExp;
  /** How the harness tells the model a pre-tool deny (seen in the real binaries). */
  deny: RegExp;
  /** Whether the detaching call's payload carries the harness's own background flag. */
  flagged?: boolean;
}

/** Seconds the detached subshell sleeps before it takes the file: past the call's after event. */
const SLEEP_S = 3;
const deleted = (dir: string) => !existsSync(path.join(dir, 'big_module.py'));
const emptied = (dir: string) => readFileSync(path.join(dir, 'big_module.py'), 'utf8') === '';
const RM = `(sleep ${SLEEP_S}; rm big_module.py) > /dev/null 2>&1 &`;

const RUNS: Run[] = [
  {
    // Codex ends the call's whole process group when the command returns (SIGKILL: `nohup`, a
    // trapped TERM/HUP, `disown` die too): a plain `&` never outlives the call, `setsid` does.
    // Its exec policy also refuses `rm -f` by itself ("rm -f style commands are not permitted").
    name: 'codex: a plain & (ended with the call), then setsid ... &',
    h: 'codex',
    detach: [
      { kind: 'shell', command: `(sleep ${SLEEP_S}; rm state.py) > /dev/null 2>&1 &` },
      {
        kind: 'shell',
        command: `setsid sh -c 'sleep ${SLEEP_S}; rm big_module.py' > /dev/null 2>&1 &`,
      },
    ],
    gone: deleted,
    told: /big_module\.py was deleted \(200 lines\)/,
    deny: /Command blocked by PreToolUse hook: guard stopped this call to tell you first/,
  },
  {
    name: 'copilot: bash (sync) with &',
    h: 'copilot',
    detach: [
      { kind: 'shell', command: `(sleep ${SLEEP_S}; : > big_module.py) > /dev/null 2>&1 &` },
    ],
    gone: emptied,
    told: /big_module\.py lost 200 of 200 lines/,
    deny: /Denied by preToolUse hook: guard stopped this call to tell you first/,
  },
  {
    // its own background flag, which guard did not read before this file (no & in the command)
    name: 'copilot: bash with mode "async"',
    h: 'copilot',
    detach: [{ kind: 'shell', command: `sleep ${SLEEP_S}; rm big_module.py`, background: true }],
    gone: deleted,
    told: /big_module\.py was deleted \(200 lines\)/,
    deny: /Denied by preToolUse hook: guard stopped this call to tell you first/,
    flagged: true,
  },
  {
    name: 'claude: Bash with & (run_in_background not set)',
    h: 'claude',
    detach: [{ kind: 'shell', command: RM }],
    gone: deleted,
    told: /big_module\.py was deleted \(200 lines\)/,
    deny: /PreToolUse:Edit hook error: guard stopped this call to tell you first/,
  },
  {
    name: 'gemini: run_shell_command with &',
    h: 'gemini',
    detach: [{ kind: 'shell', command: RM }],
    gone: deleted,
    told: /big_module\.py was deleted \(200 lines\)/,
    deny: /Tool execution blocked: guard stopped this call to tell you first/,
  },
];

/**
 * The detaching calls, then the small edit three times and the end. The edit is refused once (the
 * report), then runs; the third is for Copilot's async mode, which adds a `read_bash` call of its
 * own to the conversation when the command ends (the script's turn is the number of calls so far).
 */
function script(r: Run, dir: string): Action[] {
  const edit: Action =
    r.h === 'codex'
      ? { kind: 'patch', patch: smallEditPatch() }
      : { kind: 'edit', file: path.join(dir, 'small.py'), old: SMALL_OLD, new: SMALL_NEW };
  const again: Action[] = r.flagged ? [edit, edit] : [edit];
  return [...r.detach, edit, ...again, { kind: 'end', text: 'Done.' }];
}

/** node_modules/.bin/guard as a wrapper: each payload kept in `log` (in order), then the real guard. */
function loggingGuard(repo: TestRepo, log: string): void {
  const bin = path.join(repo.dir, 'node_modules', '.bin', 'guard');
  rmSync(bin);
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  writeFileSync(
    bin,
    `#!/bin/sh\nf=${q(log)}/$(date +%s%N)-$$.json\ncat > "$f"\nexec ${q(CLI)} "$@" < "$f"\n`,
    { mode: 0o755 },
  );
}

function payloads(log: string): any[] {
  return readdirSync(log)
    .sort()
    .map((f) => JSON.parse(readFileSync(path.join(log, f), 'utf8')));
}

const installed = {} as Record<RealHarness, Installed>;

beforeAll(async () => {
  for (const i of await ensureHarnesses([...new Set(RUNS.map((r) => r.h))])) installed[i.name] = i;
}, 300_000);

afterAll(cleanupRepos);

interface Played {
  repo: TestRepo;
  steps: Action[];
  server: ModelServer;
  run: HarnessRun;
  log: string;
  /** Whether the detached command had done its work when the model answered its next call. */
  tookIt: boolean;
}

async function play(r: Run): Promise<Played> {
  const log = outsideDir();
  const repo = buildProject((x) => {
    const res = x.guard(['init', '--agent', r.h]);
    if (res.code !== 0) throw new Error(`guard init --agent ${r.h}: ${res.stderr}`);
  });
  // after the commit: node_modules is ignored
  loggingGuard(repo, log);
  const steps = script(r, repo.dir);
  const next = r.detach.length;
  let tookIt = false;
  const server = await startModelServer(HARNESS_API[r.h], steps, {
    ...(HARNESS_API[r.h] === 'chat' ? { vocab: CHAT_VOCAB.copilot } : {}),
    // the model takes its time before its next call: the detached command does its work meanwhile
    before: async (step) => {
      if (step !== next) return;
      const until = Date.now() + 20_000;
      while (!(tookIt = r.gone(repo.dir)) && Date.now() < until)
        await new Promise((ok) => setTimeout(ok, 100));
    },
  });
  let run: HarnessRun;
  try {
    const i = installed[r.h];
    if (i.error) throw new Error(i.error);
    run = await runHarness(r.h, { bin: i.bin, projectDir: repo.dir, home: freshHome(), server });
  } finally {
    await server.close();
  }
  return { repo, steps, server, run, log, tookIt };
}

function describeRun(p: Played): string {
  const reqs = p.server.requests
    .map((r) => `${r.method} ${r.url} loop=${r.agentLoop} step=${r.step ?? '-'}`)
    .join('\n');
  return `exit ${p.run.code} signal ${p.run.signal} timedOut ${p.run.timedOut} in ${p.run.seconds}s\nrequests:\n${reqs}\nstderr:\n${p.run.stderr.slice(-3000)}\nstdout:\n${p.run.stdout.slice(-3000)}`;
}

/** What the model read about its call at `step`: the tool results of the request that follows. */
function resultOf(p: Played, step: number): string {
  const next = p.server.requestAtStep(step + 1);
  expect(next, `the model was asked again after step ${step}\n${describeRun(p)}`).toBeDefined();
  return next!.toolResults.map((t) => t.text).join('\n');
}

const STOPPED = 'guard stopped this call to tell you first';

/** The conversation as the model reads it, without the tool schemas and system prompt. */
function conversation(p: Played, body: any): string {
  const api = p.server.api;
  const c = api === 'openai' ? body?.input : api === 'gemini' ? body?.contents : body?.messages;
  return JSON.stringify(c ?? []);
}

/**
 * guard's report, as the model read it at the end of the session: exactly once in the whole
 * conversation (read from the last request, not the next one: Copilot's async mode puts a call of
 * its own, read_bash, between the refused call and the next request).
 */
function toldOnce(p: Played): string {
  const text = conversation(p, p.server.agentRequests().at(-1)?.body);
  const at = text.indexOf(STOPPED);
  expect(at, describeRun(p)).toBeGreaterThan(-1);
  expect(text.indexOf(STOPPED, at + 1), 'told once').toBe(-1);
  // as JSON text: the report names no file that needs escaping here
  return text.slice(Math.max(0, at - 120), at + 1500);
}

describe.each(RUNS)('a command detached inside the real $name', (r) => {
  let p: Played;
  const next = r.detach.length;
  beforeAll(async () => {
    p = await play(r);
  }, 150_000);

  it('plays the whole script: the session carries on past guard', () => {
    expect(p.run.timedOut, describeRun(p)).toBe(false);
    expect(p.run.code, describeRun(p)).toBe(0);
    const end = p.steps.length - 1;
    expect(
      p.server.agentRequests().some((q) => q.step === end),
      describeRun(p),
    ).toBe(true);
    expect(p.run.sessionId, describeRun(p)).toBeTruthy();
  });

  it('the harness runs the command and returns; its after event comes; then the detached command takes the file', () => {
    const all = payloads(p.log);
    // GUARD_HARNESS_SHOW=1: the payloads the real binary sent (for docs/harnesses/)
    if (process.env.GUARD_HARNESS_SHOW) console.log(`${r.name}:\n${JSON.stringify(all, null, 1)}`);
    for (const d of r.detach) {
      const input = (x: any) => x.tool_input ?? x.toolArgs ?? {};
      const events = all.filter((x) => input(x).command === d.command);
      // one before and one after event, with the command as the model sent it
      expect(events, JSON.stringify(all, null, 1).slice(0, 4000)).toHaveLength(2);
      for (const x of events) {
        const flags = Object.entries(input(x)).filter(
          ([k, v]) =>
            (/background|detach/i.test(k) && v === true) || (k === 'mode' && v === 'async'),
        );
        expect(flags.length > 0, JSON.stringify(x)).toBe(r.flagged === true);
      }
    }
    expect(p.tookIt, describeRun(p)).toBe(true);
    // the after event found the file whole: nothing to tell then
    for (let i = 0; i < next; i++) expect(resultOf(p, i)).not.toContain('big_module.py');
  });

  it("the model's next call is stopped once, to tell what the command destroyed and how to bring it back", () => {
    const told = toldOnce(p);
    expect(told, describeRun(p)).toMatch(r.deny);
    expect(told).toMatch(r.told);
    expect(told).toMatch(/` \(run in the background\) deleted or replaced work/);
    expect(told).toMatch(/to bring it back run: guard restore \S+ -- big_module\.py \(/);
    // the call it stopped is the model's next one, after the file went
    expect(resultOf(p, next - 1)).not.toContain(STOPPED);
    const stopped = p.server.agentRequests().find((q) => conversation(p, q.body).includes(STOPPED));
    expect(stopped?.step, describeRun(p)).toBeGreaterThan(next);
    // the same call sent again ran
    expect(p.repo.read('small.py')).toBe(SMALL_EDITED);
    if (r.h === 'codex') {
      // the plain & was ended with its call: state.py is whole, and the loss is told once, under
      // the newest command, naming the other (guard cannot tell which one took it)
      expect(p.repo.read('state.py')).toBe(STATE);
      expect(told).not.toMatch(/state\.py (was deleted|lost)/);
      expect(told.match(/big_module\.py was deleted/g)).toHaveLength(1);
      expect(told).toContain("the command `setsid sh -c 'sleep");
      expect(told).toContain('Another command of this session may still run in the background');
    }
  });

  it('the command guard gave brings the file back byte for byte, and leaves the edit alone', () => {
    expect(r.gone(p.repo.dir)).toBe(true);
    const cmd = toldOnce(p).match(/to bring it back run: (guard restore .+?) \(or undo/)?.[1];
    expect(cmd, toldOnce(p)).toBeDefined();
    const res = p.repo.guard(cmd!.split(' ').slice(1));
    expect(res.code, `${cmd}\n${res.stderr}`).toBe(0);
    expect(readFileSync(path.join(p.repo.dir, 'big_module.py'))).toEqual(Buffer.from(USER_WORK));
    expect(p.repo.read('small.py')).toBe(SMALL_EDITED);
    expect(SMALL_EDITED).not.toBe(SMALL);
  });
});
