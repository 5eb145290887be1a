/**
 * `guard hook` inside the real Copilot CLI and Qwen Code binaries (and what
 * Continue CLI does with hooks), offline: each talks OpenAI Chat Completions
 * to the scripted model on 127.0.0.1 (test/harness/model-server.ts, `chat`).
 * The project is set up by `guard init --agent NAME`, as a user would. One
 * run per harness (two for Copilot: its gpt-4.1 tools, then a GPT-5 model's
 * apply_patch with the raw patch as toolArgs); every check reads git, the
 * file system and the model's request log.
 *
 * The script (test/harness/scenario.ts chatScriptFor): read small.py, edit
 * it, read state.py, truncate state.py (270 lines -> 40 and an elision
 * comment), `git checkout -- .` over the user's uncommitted work, end.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupRepos, type TestRepo } from '../helpers.js';
import { ensureHarnesses, type Installed, type RealHarness } from '../harness/install.js';
import { startModelServer, type ModelServer } from '../harness/model-server.js';
import { CHAT_VOCAB, runHarness, type HarnessRun } from '../harness/run.js';
import {
  BIG,
  buildProject,
  chatScriptFor,
  CHECKOUT,
  freshHome,
  SMALL,
  SMALL_EDITED,
  STATE,
  stepIndex,
  TRUNCATED,
  USER_WORK,
  type Step,
} from '../harness/scenario.js';

type Chat = 'copilot' | 'qwen' | 'continue' | 'droid';
const CHAT: Chat[] = ['copilot', 'qwen', 'continue', 'droid'];

const installed = {} as Record<RealHarness, Installed>;
const timings: string[] = [];

beforeAll(async () => {
  for (const i of await ensureHarnesses<Chat>(CHAT)) {
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

interface Played {
  repo: TestRepo;
  steps: Step[];
  server: ModelServer;
  run: HarnessRun;
}

async function play(
  h: Chat,
  init: string[],
  opts: { patch?: boolean; model?: string } = {},
): Promise<Played> {
  const repo = buildProject((r) => {
    const res = r.guard(['init', '--agent', ...init]);
    if (res.code !== 0)
      throw new Error(`guard init --agent ${init.join(' ')} failed (${res.code}): ${res.stderr}`);
  });
  const steps = chatScriptFor(h, repo.dir, opts.patch);
  const server = await startModelServer(
    'chat',
    steps.map((s) => s.action),
    { vocab: CHAT_VOCAB[h] },
  );
  let run: HarnessRun;
  try {
    const i = installed[h];
    if (i.error) throw new Error(i.error);
    run = await runHarness(h, {
      bin: i.bin,
      projectDir: repo.dir,
      home: freshHome(),
      server,
      model: opts.model,
    });
  } finally {
    await server.close();
  }
  timings.push(`run ${h}${opts.model ? ` (${opts.model})` : ''}: ${run.seconds.toFixed(1)} s`);
  return { repo, steps, server, run };
}

function describeRun(p: Played): string {
  return [
    `exit ${p.run.code} signal ${p.run.signal} in ${p.run.seconds}s`,
    `stderr: ${p.run.stderr.slice(-1500)}`,
    `requests: ${p.server.requests.map((r) => `${r.url} loop=${r.agentLoop} step=${r.step}`).join('; ')}`,
  ].join('\n');
}

/** What the model read after step `name`: the tool messages of the next agent request. */
function resultOf(p: Played, name: Step['name']): string {
  const next = p.server.requestAtStep(stepIndex(p.steps, name) + 1);
  expect(next, `no model request after "${name}"\n${describeRun(p)}`).toBeDefined();
  return next!.toolResults.map((t) => t.text).join('\n');
}

function showBlob(repo: TestRepo, rev: string, file: string): string | null {
  const r = repo.gitRun(['cat-file', 'blob', `${rev}:${file}`]);
  return r.code === 0 ? r.stdout : null;
}

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

/** How each harness wraps a pre-tool deny for the model (seen in the real binaries). */
const DENY_WRAPPER: Record<'copilot' | 'qwen' | 'droid', RegExp> = {
  copilot: /^Denied by preToolUse hook: guard refused this write/m,
  qwen: /guard refused this write/,
  droid: /guard refused this write/,
};

const RUNS: { name: string; h: 'copilot' | 'qwen' | 'droid'; patch?: boolean; model?: string }[] = [
  { name: 'copilot (gpt-4.1: create/edit/bash)', h: 'copilot' },
  // GPT-5 models' only edit tool is apply_patch, whose toolArgs is the raw patch text
  { name: 'copilot (gpt-5.5: apply_patch)', h: 'copilot', patch: true, model: 'gpt-5.5' },
  { name: 'qwen', h: 'qwen' },
  { name: 'droid', h: 'droid' },
];

describe.each(RUNS)('guard hook inside the real $name', ({ h, patch, model }) => {
  let p: Played;
  beforeAll(async () => {
    p = await play(h, [h], { patch, model });
  }, 150_000);

  it('plays the whole script', () => {
    expect(p.run.timedOut, describeRun(p)).toBe(false);
    expect(p.run.code, describeRun(p)).toBe(0);
    expect(p.server.requestAtStep(stepIndex(p.steps, 'end')), describeRun(p)).toBeDefined();
    expect(p.run.sessionId, describeRun(p)).toBeTruthy();
  });

  it('reads pass untouched, and the small edit goes through', () => {
    expect(resultOf(p, 'read')).toContain('_UNITS = ["B", "KiB", "MiB", "GiB", "TiB"]');
    expect(resultOf(p, 'read-state')).toContain(STATE.split('\n')[0]);
    expect(resultOf(p, 'edit')).not.toMatch(/[Dd]enied|guard refused|guard could not/);
    // a read records nothing: the only decisions are the edit's and the truncation's
    const entries: any[] = p.repo.guardJson(['log', '--session', p.run.sessionId!]).json.entries;
    expect(new Set(entries.filter((e) => e.kind === 'decision').map((e) => e.path))).toEqual(
      new Set(['small.py', 'state.py']),
    );
  });

  it('refuses the truncation, keeps it under refs/guard/rejected/, and the model reads why and where', () => {
    const reason = resultOf(p, 'truncate');
    // GUARD_HARNESS_SHOW=1: what each harness tells the model (for docs/harnesses/)
    if (process.env.GUARD_HARNESS_SHOW)
      console.log(
        `${h}${model ? ` ${model}` : ''} after the truncation:\n${reason}\nafter the checkout:\n${resultOf(p, 'checkout')}`,
      );
    expect(reason, describeRun(p)).toMatch(DENY_WRAPPER[h]);
    expect(reason).toContain('state.py would lose 230 of 270 lines');
    // never an `ask` nobody can answer (Copilot -p: "unable to ask user for confirmation")
    expect(reason).not.toMatch(/unable to ask|Approve only if/);
    const ref = reason.match(/refs\/guard\/rejected\/[^\s"'`,;)]+/)?.[0].replace(/[.]$/, '');
    expect(ref, reason).toBeDefined();
    expect(p.repo.refs('refs/guard/rejected/')).toContain(ref);
    expect(showBlob(p.repo, ref!, 'state.py')).toBe(TRUNCATED);
    expect(showBlob(p.repo, `${ref}^`, 'state.py')).toBe(STATE);
    // the truncation never reached the disk: the checkpoint before the checkout has state.py whole
    const before = preCheckoutCheckpoint(p.repo);
    expect(
      before,
      `checkpoints: ${p.repo.refs('refs/guard/checkpoints/').join(', ')}`,
    ).toBeDefined();
    expect(showBlob(p.repo, before!, 'state.py')).toBe(STATE);
  });

  it('tells the model what the checkout destroyed, and guard rewind --to brings it back byte for byte', () => {
    const after = p.server.requestAtStep(stepIndex(p.steps, 'checkout') + 1);
    expect(after).toBeDefined();
    const text = JSON.stringify(after!.body.messages);
    const told = text.slice(text.lastIndexOf(CHECKOUT));
    expect(told).toContain('big_module.py');
    expect(told).toMatch(/guard (rewind|restore)/);
    // the checkout really ran: the user's work is gone from the disk
    expect(p.repo.read('big_module.py')).toBe(BIG);
    const before = preCheckoutCheckpoint(p.repo)!;
    p.repo.write('scratch.txt', 'mine\n');
    const r = p.repo.guard([
      'rewind',
      p.run.sessionId!,
      '--to',
      before.slice('refs/guard/checkpoints/'.length),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(path.join(p.repo.dir, 'big_module.py'))).toEqual(Buffer.from(USER_WORK));
    expect(p.repo.read('small.py')).toBe(SMALL_EDITED);
    expect(p.repo.read('state.py')).toBe(STATE);
    expect(p.repo.read('scratch.txt')).toBe('mine\n');
  });
});

describe('Continue CLI 1.5.47, real binary', () => {
  // Its hook engine reads .claude/settings.json and .continue/settings.json
  // (package source), but 1.5.47 never fires PreToolUse for its tools: guard
  // cannot gate it. This test says so, and fails the day a version runs the
  // hook (then: pin it, and turn this into the checks above).
  it('runs the whole script without calling any hook, even with guard in .claude/ and .continue/', async () => {
    const p = await play('continue', ['claude', 'continue']);
    expect(p.run.code, describeRun(p)).toBe(0);
    expect(p.server.requestAtStep(stepIndex(p.steps, 'end')), describeRun(p)).toBeDefined();
    for (const ns of ['checkpoints', 'rejected', 'sessions'])
      expect(p.repo.refs(`refs/guard/${ns}/`)).toEqual([]);
    // the truncation went through (the checkout then put state.py back from HEAD)
    expect(resultOf(p, 'truncate')).toMatch(/Successfully|wrote|created/i);
    expect(p.repo.read('state.py')).toBe(STATE);
    expect(p.repo.read('small.py')).toBe(SMALL);
  }, 150_000);
});

describe.each(['copilot', 'qwen', 'droid'] as const)(
  'guard hook inside the real %s, when guard dies without answering',
  (h) => {
    // Every harness runs the tool when its hook dies (Copilot denies on exit 1,
    // but not on a kill of the whole shell); the command `guard init --agent`
    // wrote must turn that into the harness's block. The project's guard is
    // replaced, after init, by one that SIGKILLs itself.
    it('the edit, the truncation and the checkout are all refused; nothing is lost', async () => {
      const repo = buildProject((r) => {
        const res = r.guard(['init', '--agent', h]);
        if (res.code !== 0) throw new Error(res.stderr);
        const bin = path.join(r.dir, 'node_modules', '.bin', 'guard');
        rmSync(bin);
        writeFileSync(bin, '#!/bin/sh\ncat >/dev/null\nkill -9 $$\n', { mode: 0o755 });
      });
      const steps = chatScriptFor(h, repo.dir);
      const server = await startModelServer(
        'chat',
        steps.map((s) => s.action),
        { vocab: CHAT_VOCAB[h] },
      );
      let run: HarnessRun;
      try {
        run = await runHarness(h, {
          bin: installed[h].bin,
          projectDir: repo.dir,
          home: freshHome(),
          server,
        });
      } finally {
        await server.close();
      }
      const p: Played = { repo, steps, server, run };
      expect(run.timedOut, describeRun(p)).toBe(false);
      expect(server.requestAtStep(stepIndex(steps, 'end')), describeRun(p)).toBeDefined();
      for (const name of ['edit', 'truncate', 'checkout'] as const)
        expect(resultOf(p, name), name).toMatch(/guard hook failed without answering/);
      expect(repo.read('small.py')).toBe(SMALL);
      expect(repo.read('state.py')).toBe(STATE);
      expect(readFileSync(path.join(repo.dir, 'big_module.py'))).toEqual(Buffer.from(USER_WORK));
    }, 150_000);
  },
);

/** Where `guard init --agent H` writes the hook, and the unit of its timeout. */
const HOOK_FILE: Record<'copilot' | 'qwen' | 'droid', { file: string; ms: boolean }> = {
  copilot: { file: '.github/hooks/guard.json', ms: false },
  qwen: { file: '.qwen/settings.json', ms: true },
  droid: { file: '.factory/settings.json', ms: false },
};

describe.each(['copilot', 'qwen', 'droid'] as const)(
  'guard hook inside the real %s, when guard hangs past the hook timeout',
  (h) => {
    // A hook the harness times out (kills) is not a crash: the `||` fallback
    // `guard init --agent` wrote never runs. None of these harnesses has a
    // setting that makes a timed-out hook block (docs/harnesses/), so guard's
    // own budget (20 s, GUARD_HOOK_TIMEOUT) must answer first. This pins the
    // harness's behaviour: if it starts failing, the harness began to block
    // on a timeout (update docs/harnesses/ and the matrix).
    it('a timed-out hook lets every tool run (no setting makes it block)', async () => {
      const repo = buildProject((r) => {
        const res = r.guard(['init', '--agent', h]);
        if (res.code !== 0) throw new Error(res.stderr);
        const bin = path.join(r.dir, 'node_modules', '.bin', 'guard');
        rmSync(bin);
        writeFileSync(bin, '#!/bin/sh\ncat >/dev/null\nexec sleep 8\n', { mode: 0o755 });
        const file = path.join(r.dir, HOOK_FILE[h].file);
        const settings = JSON.parse(readFileSync(file, 'utf8'));
        for (const entries of Object.values<any[]>(settings.hooks)) {
          for (const hook of entries.flatMap((e) => e.hooks ?? [e])) {
            if (h === 'copilot') hook.timeoutSec = 3;
            else hook.timeout = HOOK_FILE[h].ms ? 3000 : 3;
          }
        }
        writeFileSync(file, JSON.stringify(settings, null, 2));
      });
      const steps = chatScriptFor(h, repo.dir);
      const server = await startModelServer(
        'chat',
        steps.map((s) => s.action),
        { vocab: CHAT_VOCAB[h] },
      );
      let run: HarnessRun;
      try {
        run = await runHarness(h, {
          bin: installed[h].bin,
          projectDir: repo.dir,
          home: freshHome(),
          server,
          timeoutMs: 130_000,
        });
      } finally {
        await server.close();
      }
      const p: Played = { repo, steps, server, run };
      expect(run.timedOut, describeRun(p)).toBe(false);
      // The hook ran and was waited for at each of the three calls (not skipped).
      expect(run.seconds, describeRun(p)).toBeGreaterThanOrEqual(3 * 3);
      expect(server.requestAtStep(stepIndex(steps, 'end')), describeRun(p)).toBeDefined();
      for (const name of ['edit', 'truncate', 'checkout'] as const)
        expect(resultOf(p, name), name).not.toMatch(
          /guard hook failed without answering|denied|blocked/i,
        );
      // The checkout ran: the user's uncommitted work is gone from the disk.
      expect(readFileSync(path.join(repo.dir, 'big_module.py'), 'utf8')).not.toBe(USER_WORK);
    }, 180_000);
  },
);
