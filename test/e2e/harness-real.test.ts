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
 * - "guard hook": the real `guard hook HARNESS`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupRepos, outsideDir, ROOT } from '../helpers.js';
import { ensureHarnesses, type HarnessName, type Installed } from '../harness/install.js';
import { startModelServer, type ModelServer } from '../harness/model-server.js';
import { HARNESS_API, HOOK_EVENTS, runHarness, writeHookConfig, type HarnessRun } from '../harness/run.js';
import { BIG, buildProject, CHECKOUT, freshHome, scriptFor, SMALL, STATE, stepIndex, type Step } from '../harness/scenario.js';
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
    timings.push(`install ${i.name}: ${i.installSeconds ? `${i.installSeconds.toFixed(1)} s` : 'cached'}`);
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
async function play(h: HarnessName, configure: (repo: TestRepo) => void): Promise<Played> {
  const repo = buildProject(configure);
  const steps = scriptFor(h, repo.dir);
  const server = await startModelServer(HARNESS_API[h], steps.map((s) => s.action));
  let run: HarnessRun;
  try {
    run = await runHarness(h, { bin: bin(h), projectDir: repo.dir, home: freshHome(), server });
  } finally {
    await server.close();
  }
  timings.push(`${h} run: ${run.seconds.toFixed(1)} s`);
  return { repo, steps, server, run };
}

function describeRun(p: Played): string {
  const reqs = p.server.requests.map((r) => `${r.method} ${r.url} loop=${r.agentLoop} step=${r.step ?? '-'}`).join('\n');
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
    const p = await play(h, (repo) => writeHookConfig(h, repo.dir, `node ${JSON.stringify(LOGGING_HOOK)} ${h} ${JSON.stringify(log)}`));
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
    expect(pre.map((x) => x.tool_name), JSON.stringify(payloads, null, 1).slice(0, 4000)).toEqual(PRE_TOOLS[h]);
    expect(toolSteps).toHaveLength(PRE_TOOLS[h].length);
    for (const x of payloads) expect(x.cwd).toBe(p.repo.dir);

    // The work tree just before the checkout (the checkout wipes the end
    // state): the small edit is there, the truncation is not.
    const beforeCheckout = lines.find((l) => l.payload.hook_event_name === HOOK_EVENTS[h].pre && JSON.stringify(l.payload.tool_input).includes(CHECKOUT));
    expect(beforeCheckout, JSON.stringify(payloads, null, 1).slice(0, 4000)).toBeDefined();
    expect(beforeCheckout!.status.split('\n').filter(Boolean).sort()).toEqual([' M big_module.py', ' M small.py']);
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
  });
});
