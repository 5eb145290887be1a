/**
 * `guard hook` inside the real Claude Code, Gemini CLI and Codex binaries,
 * offline: each harness talks to a scripted model on 127.0.0.1
 * (test/harness/model-server.ts) that makes a small edit, writes a truncated
 * version of a 270-line file, runs `git checkout -- .` over uncommitted work
 * and ends (test/harness/scenario.ts). Everything is asserted through git,
 * the file system and the model server's request log.
 *
 * The binaries are installed on first use into a cache folder
 * (test/harness/install.ts), never into guard's dependencies.
 *
 * Two layers:
 * - "the loop": the same scenario with a tiny logging hook
 *   (test/harness/logging-hook.mjs). It proves the harness, the server and
 *   the hook wiring work on this machine, so a failure of the guard layer is
 *   guard's, not the rig's.
 * - "guard hook": the real `guard hook HARNESS`, installed in the project by
 *   `guard init --agent HARNESS` as a user would.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupRepos, outsideDir, ROOT } from '../helpers.js';
import { ensureHarnesses, type HarnessName, type Installed } from '../harness/install.js';
import { startModelServer, type ModelServer } from '../harness/model-server.js';
import {
  HARNESS_API,
  HOOK_EVENTS,
  runHarness,
  writeHookConfig,
  type HarnessRun,
} from '../harness/run.js';
import {
  BIG,
  buildProject,
  CHECKOUT,
  freshHome,
  scriptFor,
  SMALL,
  SMALL_EDITED,
  STATE,
  stepIndex,
  TRUNCATED,
  USER_WORK,
  type Step,
} from '../harness/scenario.js';
import type { TestRepo } from '../helpers.js';

const HARNESSES: HarnessName[] = ['claude', 'gemini', 'codex'];
const LOGGING_HOOK = path.join(ROOT, 'test', 'harness', 'logging-hook.mjs');

/** The tool names the pre-tool hook sees for the scripted calls (HARNESSES.md, "Seen in the real binaries"). */
const PRE_TOOLS: Record<HarnessName, string[]> = {
  claude: ['Edit', 'Write', 'Bash'],
  gemini: ['replace', 'write_file', 'run_shell_command'],
  // The heredoc patch arrives as a shell command, not as apply_patch.
  codex: ['apply_patch', 'apply_patch', 'Bash', 'Bash'],
};

const POST_TOOLS: Record<HarnessName, string[]> = {
  claude: ['Edit', 'Bash'],
  gemini: ['replace', 'run_shell_command'],
  codex: ['apply_patch', 'Bash'],
};

const installed = {} as Record<HarnessName, Installed>;
const timings: string[] = [];

beforeAll(async () => {
  for (const i of await ensureHarnesses(HARNESSES)) {
    installed[i.name] = i;
    timings.push(
      `install ${i.name}: ${i.installSeconds ? `${i.installSeconds.toFixed(1)} s` : 'cached'}`,
    );
  }
}, 300_000);

afterAll(() => {
  cleanupRepos();
  if (process.env.GUARD_HARNESS_TIMINGS) console.log(timings.join('\n'));
});

function bin(h: HarnessName): string {
  const i = installed[h];
  if (i.error) throw new Error(i.error);
  return i.bin;
}

interface Played {
  repo: TestRepo;
  steps: Step[];
  server: ModelServer;
  run: HarnessRun;
}

/** Build the project with `configure`, play the whole script through harness `h`. */
async function play(
  h: HarnessName,
  configure: (repo: TestRepo) => void,
  timeoutMs?: number,
): Promise<Played> {
  const repo = buildProject(configure);
  const steps = scriptFor(h, repo.dir);
  const server = await startModelServer(
    HARNESS_API[h],
    steps.map((s) => s.action),
  );
  let run: HarnessRun;
  try {
    run = await runHarness(h, {
      bin: bin(h),
      projectDir: repo.dir,
      home: freshHome(),
      server,
      timeoutMs,
    });
  } finally {
    await server.close();
  }
  timings.push(`${h} run: ${run.seconds.toFixed(1)} s`);
  return { repo, steps, server, run };
}

function describeRun(p: Played): string {
  const reqs = p.server.requests
    .map((r) => `${r.method} ${r.url} loop=${r.agentLoop} step=${r.step ?? '-'}`)
    .join('\n');
  return `exit ${p.run.code} signal ${p.run.signal} timedOut ${p.run.timedOut}\nrequests:\n${reqs}\nstderr:\n${p.run.stderr.slice(-3000)}\nstdout:\n${p.run.stdout.slice(-3000)}`;
}

/** What the model was told about the call made at step `name` (the tool results of the following request). */
function resultOf(p: Played, name: Step['name']): string {
  const next = p.server.requestAtStep(stepIndex(p.steps, name) + 1);
  expect(next, `the model was asked again after "${name}"\n${describeRun(p)}`).toBeDefined();
  return next!.toolResults.map((t) => t.text).join('\n');
}

/** The logging hook's lines: each payload with `git status --porcelain` at the time of the call. */
function readLog(file: string): { status: string; payload: any }[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

describe.each(HARNESSES)('the loop: %s with a logging hook', (h) => {
  it('runs every scripted tool call through the hook; a deny stops the write and its reason reaches the model', async () => {
    const log = path.join(outsideDir(), 'hook.log');
    const p = await play(h, (repo) =>
      writeHookConfig(
        h,
        repo.dir,
        `node ${JSON.stringify(LOGGING_HOOK)} ${h} ${JSON.stringify(log)}`,
      ),
    );
    expect(p.run.timedOut, describeRun(p)).toBe(false);
    expect(p.run.code, describeRun(p)).toBe(0);
    // The whole script was played: the model was asked after its last tool call.
    expect(p.server.requestAtStep(stepIndex(p.steps, 'end')), describeRun(p)).toBeDefined();

    const lines = readLog(log);
    const payloads = lines.map((l) => l.payload);
    const pre = payloads.filter((x) => x.hook_event_name === HOOK_EVENTS[h].pre);
    const post = payloads.filter((x) => x.hook_event_name === HOOK_EVENTS[h].post);
    // One pre-tool call per scripted tool call, in order.
    const toolSteps = p.steps.filter((s) => s.action.kind !== 'end');
    expect(
      pre.map((x) => x.tool_name),
      JSON.stringify(payloads, null, 1).slice(0, 4000),
    ).toEqual(PRE_TOOLS[h]);
    expect(toolSteps).toHaveLength(PRE_TOOLS[h].length);
    for (const x of payloads) expect(x.cwd).toBe(p.repo.dir);

    // The work tree just before the checkout (the checkout wipes the end
    // state): the small edit is there, the truncation is not.
    const beforeCheckout = lines.find(
      (l) =>
        l.payload.hook_event_name === HOOK_EVENTS[h].pre &&
        JSON.stringify(l.payload.tool_input).includes(CHECKOUT),
    );
    expect(beforeCheckout, JSON.stringify(payloads, null, 1).slice(0, 4000)).toBeDefined();
    expect(beforeCheckout!.status.split('\n').filter(Boolean).sort()).toEqual([
      ' M big_module.py',
      ' M small.py',
    ]);
    // The model read why the truncation was refused.
    expect(resultOf(p, 'truncate')).toContain('LOGHOOK-DENY');
    if (h === 'codex') expect(resultOf(p, 'truncate-heredoc')).toContain('LOGHOOK-DENY');
    // A post-tool event follows only a tool that ran: the edit and the
    // checkout, never the refused writes.
    expect(post.map((x) => x.tool_name)).toEqual(POST_TOOLS[h]);
    expect(resultOf(p, 'edit')).not.toContain('LOGHOOK-DENY');
    // The checkout took the small edit and the user's uncommitted work with
    // it: exactly the loss guard's checkpoint is for.
    expect(p.repo.read('small.py')).toBe(SMALL);
    expect(p.repo.read('big_module.py')).toBe(BIG);
    expect(p.repo.read('state.py')).toBe(STATE);
  }, 120_000);
});

// ------------------------------------------------------------------ guard hook

/** Where each harness reads a project's hook configuration (HARNESSES.md). */
const HOOK_CONFIG_FILES: Record<HarnessName, string[]> = {
  claude: ['.claude/settings.json', '.claude/settings.local.json'],
  gemini: ['.gemini/settings.json'],
  codex: ['.codex/hooks.json', '.codex/config.toml'],
};

/** guard's hook in the project, as a user installs it: `guard init --agent H`. */
function configureGuard(h: HarnessName, repo: TestRepo): void {
  const r = repo.guard(['init', '--agent', h]);
  if (r.code !== 0) throw new Error(`guard init --agent ${h} failed (${r.code}): ${r.stderr}`);
  const written = HOOK_CONFIG_FILES[h].filter(
    (f) =>
      existsSync(path.join(repo.dir, f)) &&
      readFileSync(path.join(repo.dir, f), 'utf8').includes(`hook ${h}`),
  );
  if (written.length === 0)
    throw new Error(
      `guard init --agent ${h} wrote no hook calling "guard hook ${h}" into ${HOOK_CONFIG_FILES[h].join(' or ')}:\n${r.stdout}${r.stderr}`,
    );
}

/** The conversation text of a model request (what the model reads), without the tool schemas and system prompt. */
function conversation(api: ModelServer['api'], body: any): string {
  if (api === 'anthropic') return JSON.stringify(body?.messages ?? []);
  if (api === 'gemini') return JSON.stringify(body?.contents ?? []);
  return JSON.stringify(body?.input ?? []);
}

function showBlob(repo: TestRepo, rev: string, file: string): string | null {
  const r = repo.gitRun(['cat-file', 'blob', `${rev}:${file}`]);
  return r.code === 0 ? r.stdout : null;
}

/** How each harness wraps a pre-tool deny when it tells the model (HARNESSES.md, "Seen in the real binaries"). */
const DENY_WRAPPER: Record<HarnessName, RegExp> = {
  claude: /PreToolUse:Write hook error: /,
  gemini: /Tool execution blocked: /,
  codex: /Command blocked by PreToolUse hook: /,
};

describe.each(HARNESSES)('guard hook %s, real binary', (h) => {
  let p: Played;
  beforeAll(async () => {
    p = await play(h, (repo) => configureGuard(h, repo));
  }, 120_000);

  it('plays the whole script', () => {
    expect(p.run.timedOut, describeRun(p)).toBe(false);
    expect(p.run.code, describeRun(p)).toBe(0);
    expect(p.server.requestAtStep(stepIndex(p.steps, 'end')), describeRun(p)).toBeDefined();
    expect(p.run.sessionId, describeRun(p)).toBeTruthy();
  });

  it('refuses the truncation, keeps it as a rejected ref, and tells the model why and where it is kept', () => {
    const rejected = p.repo.refs('refs/guard/rejected/');
    const truncations = (name: Step['name']) => {
      const reason = resultOf(p, name);
      expect(reason, `what the model read after "${name}"`).toMatch(DENY_WRAPPER[h]);
      expect(reason).toContain('state.py');
      const kept = reason.match(/refs\/guard\/rejected\/[^\s"'`,;)]+/);
      expect(kept, `the reason names the rejected ref: ${reason}`).not.toBeNull();
      const ref = kept![0].replace(/[.]$/, '');
      expect(rejected).toContain(ref);
      // The ref holds exactly what was refused, on top of what it was measured against.
      expect(showBlob(p.repo, ref, 'state.py')).toBe(TRUNCATED);
      expect(showBlob(p.repo, `${ref}^`, 'state.py')).toBe(STATE);
      return ref;
    };
    const refs = [truncations('truncate')];
    // Codex: the same patch sent through the shell as a heredoc is refused too.
    if (h === 'codex') refs.push(truncations('truncate-heredoc'));
    expect(new Set(refs).size).toBe(refs.length);
  });

  it('lets the small edit through, and the truncation never reached the disk', () => {
    expect(resultOf(p, 'edit')).not.toMatch(DENY_WRAPPER[h]);
    // The checkout wipes the end state; the whole-tree checkpoint taken just
    // before it shows the tree as the first two turns left it.
    const before = preCheckoutCheckpoint(p.repo);
    expect(
      before,
      `checkpoints: ${p.repo.refs('refs/guard/checkpoints/').join(', ')}`,
    ).toBeDefined();
    expect(showBlob(p.repo, before!, 'small.py')).toBe(SMALL_EDITED);
    expect(showBlob(p.repo, before!, 'state.py')).toBe(STATE);
  });

  it('tells the model what the checkout destroyed and the command that brings it back', () => {
    const after = p.server.requestAtStep(stepIndex(p.steps, 'checkout') + 1);
    expect(after).toBeDefined();
    const text = conversation(p.server.api, after!.body);
    const told = text.slice(text.lastIndexOf(CHECKOUT));
    expect(told).toContain('big_module.py');
    expect(told).toMatch(/guard (rewind|restore)/);
  });

  it('records the session: guard log --session lists its decisions and checkpoints', () => {
    const r = p.repo.guardJson(['log', '--session', p.run.sessionId!]);
    expect(r.code, r.stderr).toBe(0);
    const entries: any[] = r.json.entries;
    const decisions = entries.filter((e) => e.kind === 'decision');
    expect(decisions.find((e) => e.path === 'small.py')?.decision).toBe('allowed');
    const refused = decisions.filter((e) => e.path === 'state.py');
    expect(refused.length).toBe(h === 'codex' ? 2 : 1);
    for (const e of refused) {
      expect(['blocked', 'rejected']).toContain(e.decision);
      expect(p.repo.refs('refs/guard/rejected/')).toContain(e.ref);
    }
    const before = preCheckoutCheckpoint(p.repo)!;
    expect(
      entries
        .filter((e) => e.kind === 'checkpoint')
        .map((e) => e.ref ?? `refs/guard/checkpoints/${e.id}`),
    ).toContain(before);
  });

  it('guard rewind brings back what the checkout wiped, byte for byte, and leaves other files alone', () => {
    const sid = p.run.sessionId!;
    const before = preCheckoutCheckpoint(p.repo)!;
    // A file the session never touched, written after it ended.
    p.repo.write('scratch.txt', 'mine\n');
    const refsBefore = new Set(p.repo.refs('refs/guard/checkpoints/'));

    // To the point just before the checkout: the user's work and the small edit.
    const to = p.repo.guard([
      'rewind',
      sid,
      '--to',
      before.slice('refs/guard/checkpoints/'.length),
    ]);
    expect(to.code, to.stderr).toBe(0);
    expect(readFileSync(path.join(p.repo.dir, 'big_module.py'))).toEqual(Buffer.from(USER_WORK));
    expect(p.repo.read('small.py')).toBe(SMALL_EDITED);
    expect(p.repo.read('state.py')).toBe(STATE);
    expect(p.repo.read('scratch.txt')).toBe('mine\n');
    // It checkpointed first, so the rewind itself can be undone: a new
    // checkpoint holds the wiped state.
    const fresh = p.repo.refs('refs/guard/checkpoints/').filter((r) => !refsBefore.has(r));
    expect(fresh.some((r) => showBlob(p.repo, r, 'big_module.py') === BIG)).toBe(true);

    // To the session's start: the user's work as it was, the session's own edit undone.
    const start = p.repo.guard(['rewind', sid]);
    expect(start.code, start.stderr).toBe(0);
    expect(readFileSync(path.join(p.repo.dir, 'big_module.py'))).toEqual(Buffer.from(USER_WORK));
    expect(p.repo.read('small.py')).toBe(SMALL);
    expect(p.repo.read('state.py')).toBe(STATE);
    expect(p.repo.read('scratch.txt')).toBe('mine\n');
  });

  it('the command guard gave the model brings the wiped work back', () => {
    // Runs after the rewind to the session start (the work is back, the
    // small edit undone): the command from the warning puts back the state
    // just before the checkout, small edit included.
    const after = p.server.requestAtStep(stepIndex(p.steps, 'checkout') + 1)!;
    const text = conversation(p.server.api, after.body);
    const told = JSON.parse(
      `"${text.slice(text.lastIndexOf(CHECKOUT)).match(/guard (?:restore|rewind) [^"()]*?(?=\s*\(|\.\s|\.?\\n|\.?"|\.$|$)/)?.[0] ?? ''}"`,
    ) as string;
    expect(told, text.slice(text.lastIndexOf(CHECKOUT), text.lastIndexOf(CHECKOUT) + 1500)).toMatch(
      /^guard (restore|rewind) /,
    );
    const r = p.repo.guard(told.split(/\s+/).slice(1));
    expect(r.code, `${told}\n${r.stderr}`).toBe(0);
    expect(readFileSync(path.join(p.repo.dir, 'big_module.py'))).toEqual(Buffer.from(USER_WORK));
    expect(p.repo.read('small.py')).toBe(told.startsWith('guard restore') ? SMALL_EDITED : SMALL);
    expect(p.repo.read('state.py')).toBe(STATE);
  });
});

describe.each(HARNESSES)('guard hook %s, real binary, when guard itself fails', (h) => {
  // All three harnesses fail open (HARNESSES.md): a hook that exits 1 lets
  // the tool run. guard must answer its own failures in the blocking form.
  // The failure here: a committed guard.config.json with a wrong type, so no
  // write can be measured. A shell call needs no policy (only its
  // checkpoint): it may run, but then nothing it wipes may be lost.
  it("refuses every write in the harness's blocking form and says why; nothing is lost", async () => {
    const p = await play(h, (repo) => {
      configureGuard(h, repo);
      repo.write('guard.config.json', '{ "lineThreshold": "many" }\n');
    });
    expect(p.run.timedOut, describeRun(p)).toBe(false);
    expect(p.server.requestAtStep(stepIndex(p.steps, 'end')), describeRun(p)).toBeDefined();
    const writes: Step['name'][] =
      h === 'codex' ? ['edit', 'truncate', 'truncate-heredoc'] : ['edit', 'truncate'];
    for (const name of writes) {
      const told = resultOf(p, name);
      expect(told, `what the model read after "${name}"`).toMatch(
        h === 'gemini'
          ? /Tool execution blocked: /
          : /blocked by PreToolUse hook: |PreToolUse:\w+ hook error: /,
      );
      expect(told).toMatch(/guard\.config\.json|lineThreshold/);
    }
    // Neither the edit nor the truncation ran (the checkout would not bring
    // back a truncation it never saw: it restores from HEAD, so look at the
    // files' history through the hook's checkpoints too).
    expect(p.repo.read('small.py')).toBe(SMALL);
    expect(p.repo.read('state.py')).toBe(STATE);
    for (const r of p.repo.refs('refs/guard/checkpoints/')) {
      expect([SMALL, null]).toContain(showBlob(p.repo, r, 'small.py'));
      expect([STATE, null]).toContain(showBlob(p.repo, r, 'state.py'));
    }
    // The user's work: still on disk (the checkout was refused), or in a checkpoint.
    const onDisk = readFileSync(path.join(p.repo.dir, 'big_module.py'), 'utf8') === USER_WORK;
    const kept = p.repo
      .refs('refs/guard/checkpoints/')
      .some((r) => showBlob(p.repo, r, 'big_module.py') === USER_WORK);
    expect(
      onDisk || kept,
      `checkpoints: ${p.repo.refs('refs/guard/checkpoints/').join(', ')}`,
    ).toBe(true);
  }, 120_000);
});

describe.each(HARNESSES)('guard hook %s, real binary, when guard dies without answering', (h) => {
  // A guard killed mid-call (power loss, OOM, a broken install) cannot
  // answer at all, and every harness runs the tool when its hook dies
  // (HARNESSES.md). The hook command that `guard init --agent` writes must
  // turn that into the harness's blocking exit. Here the project's guard is
  // replaced, after init, by one that SIGKILLs itself.
  it('the hook command guard init --agent wrote blocks the edit, the truncation and the checkout', async () => {
    const p = await play(h, (repo) => {
      configureGuard(h, repo);
      const bin = path.join(repo.dir, 'node_modules', '.bin', 'guard');
      rmSync(bin);
      writeFileSync(bin, '#!/bin/sh\ncat >/dev/null\nkill -9 $$\n', { mode: 0o755 });
    });
    expect(p.run.timedOut, describeRun(p)).toBe(false);
    expect(p.server.requestAtStep(stepIndex(p.steps, 'end')), describeRun(p)).toBeDefined();
    for (const step of p.steps.filter((s) => s.action.kind !== 'end')) {
      expect(resultOf(p, step.name), `what the model read after "${step.name}"`).toMatch(
        h === 'gemini'
          ? /Tool execution blocked: /
          : /blocked by PreToolUse hook: |PreToolUse:\w+ hook error: /,
      );
    }
    expect(p.repo.read('small.py')).toBe(SMALL);
    expect(p.repo.read('state.py')).toBe(STATE);
    expect(readFileSync(path.join(p.repo.dir, 'big_module.py'))).toEqual(Buffer.from(USER_WORK));
  }, 120_000);
});

/** Seconds the harness gives guard's hook in the hanging-guard test: short, so three timed-out calls fit in a run. */
const HUNG_TIMEOUT_S = 3;
/**
 * How long the hanging guard sleeps: past HUNG_TIMEOUT_S, and short, because
 * Gemini CLI SIGTERMs only the shell it spawned on a timeout and then waits
 * for the hook's pipes to close (the sleeping guard holds them): each of its
 * calls waits out the whole hang, twice (BeforeTool and AfterTool).
 */
const HANG_S = 8;
/** The harness run's own limit in the hanging-guard test (Gemini: 3 calls x 2 hooks x HANG_S, loaded). */
const HUNG_RUN_MS = 130_000;

/**
 * After init: the project's guard replaced by one that hangs (reads its
 * payload, then sleeps past the harness's timeout), and every guard hook
 * entry's timeout lowered to HUNG_TIMEOUT_S. `keepOnFailure` false also drops
 * Claude Code's onFailure (back to its default, "continue").
 */
function hangGuard(h: HarnessName, repo: TestRepo, keepOnFailure = true): void {
  configureGuard(h, repo);
  const bin = path.join(repo.dir, 'node_modules', '.bin', 'guard');
  rmSync(bin);
  writeFileSync(bin, `#!/bin/sh\ncat >/dev/null\nexec sleep ${HANG_S}\n`, { mode: 0o755 });
  const file = path.join(repo.dir, HOOK_CONFIG_FILES[h][0]!);
  const settings = JSON.parse(readFileSync(file, 'utf8'));
  for (const groups of Object.values<any[]>(settings.hooks)) {
    for (const hook of groups.flatMap((g) => g.hooks)) {
      hook.timeout = h === 'gemini' ? HUNG_TIMEOUT_S * 1000 : HUNG_TIMEOUT_S;
      if (!keepOnFailure) delete hook.onFailure;
    }
  }
  writeFileSync(file, JSON.stringify(settings, null, 2));
}

/** The run played the whole script, and the model was never told a hook blocked a call: every tool ran. */
function expectEveryToolRan(p: Played): void {
  expect(p.run.timedOut, describeRun(p)).toBe(false);
  // The hook ran and was waited for at each of the three calls (not skipped).
  expect(p.run.seconds, describeRun(p)).toBeGreaterThanOrEqual(3 * HUNG_TIMEOUT_S);
  expect(p.server.requestAtStep(stepIndex(p.steps, 'end')), describeRun(p)).toBeDefined();
  for (const step of p.steps.filter((s) => s.action.kind !== 'end')) {
    expect(resultOf(p, step.name), `what the model read after "${step.name}"`).not.toMatch(
      /blocked by PreToolUse hook|PreToolUse:\w+ hook error|Tool execution blocked/,
    );
  }
  // The checkout ran: the user's uncommitted work is gone from the disk
  // (and the edit and the truncation before it were wiped back to HEAD).
  expect(readFileSync(path.join(p.repo.dir, 'big_module.py'), 'utf8')).not.toBe(USER_WORK);
}

describe.each(HARNESSES)(
  "guard hook %s, real binary, when guard hangs past the harness's hook timeout",
  (h) => {
    // A hook the harness times out (kills) is not a crash: guard's
    // `|| exit 2` never runs, and the harness treats the timeout as a failed
    // hook. Claude Code's default for a failed hook is "continue" (the tool
    // runs); `guard init --agent claude` writes onFailure: "block", under which
    // a timeout counts as exit code 2. Gemini CLI and Codex have no such
    // setting (docs/harnesses/): there guard's own budget has to answer first.
    if (h === 'claude') {
      it('with the settings guard init wrote, the edit, the truncation and the checkout are blocked', async () => {
        const p = await play(h, (repo) => hangGuard(h, repo), HUNG_RUN_MS);
        expect(p.run.timedOut, describeRun(p)).toBe(false);
        expect(p.server.requestAtStep(stepIndex(p.steps, 'end')), describeRun(p)).toBeDefined();
        for (const step of p.steps.filter((s) => s.action.kind !== 'end')) {
          expect(resultOf(p, step.name), `what the model read after "${step.name}"`).toMatch(
            /PreToolUse:\w+ hook error: .*timed out; blocking because onFailure is "block"/,
          );
        }
        expect(p.repo.read('small.py')).toBe(SMALL);
        expect(p.repo.read('state.py')).toBe(STATE);
        expect(readFileSync(path.join(p.repo.dir, 'big_module.py'))).toEqual(
          Buffer.from(USER_WORK),
        );
      }, 180_000);

      // The same run without onFailure pins the harness's fail-open default
      // that the setting closes (and shows the test above can fail).
      it('without onFailure, Claude Code runs every tool when the hook times out', async () => {
        expectEveryToolRan(await play(h, (repo) => hangGuard(h, repo, false), HUNG_RUN_MS));
      }, 180_000);
    } else {
      // Pins the hole guard cannot close from its settings: if this starts
      // failing, the harness began to block on a timed-out hook (update
      // docs/harnesses/ and the matrix).
      it('a timed-out hook lets every tool run (no setting makes it block)', async () => {
        expectEveryToolRan(await play(h, (repo) => hangGuard(h, repo), HUNG_RUN_MS));
      }, 180_000);
    }
  },
);

/** The whole-tree checkpoint guard took before the checkout: the user's work and the small edit in it. */
function preCheckoutCheckpoint(repo: TestRepo): string | undefined {
  return repo
    .refs('refs/guard/checkpoints/')
    .find(
      (r) =>
        showBlob(repo, r, 'big_module.py') === USER_WORK &&
        showBlob(repo, r, 'small.py') === SMALL_EDITED,
    );
}
