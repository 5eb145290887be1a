import { lstatSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * `guard doctor` does not read hook scripts to decide whether they gate: it
 * runs them. It sets GUARD_HOOK_PROBE to an empty file it made; `guard check`
 * and `guard verify-refs` then write their name into that file and block
 * (exit 1) without looking at anything. A hook is active only when guard ran
 * AND the hook exited non-zero: guard behind `|| true`, in the background,
 * after an early `exit 0`, echoed, in a heredoc or under `if false` fails
 * one or the other.
 *
 * The probe can only make guard block, never let anything through, so an
 * agent that sets the variable gains nothing. It writes only into an empty
 * regular file whose name says it is a probe, so it cannot be pointed at a
 * file that matters.
 */
export const PROBE_ENV = 'GUARD_HOOK_PROBE';
export const PROBE_PREFIX = 'guard-probe-';

/** True when this run is doctor's probe: the caller exits 1 at once. */
export function answerProbe(command: string): boolean {
  const file = process.env[PROBE_ENV];
  if (!file) return false;
  try {
    const st = lstatSync(file);
    if (st.isFile() && st.size === 0 && path.basename(file).startsWith(PROBE_PREFIX))
      writeFileSync(file, `${command}\n`, { flag: 'a' });
  } catch {
    /* not doctor's file: block all the same */
  }
  return true;
}

export interface ProbeResult {
  /** guard was started by the hook (it wrote into the probe file). */
  ran: boolean;
  /** The hook's exit code (null: killed, e.g. by the time limit). */
  code: number | null;
  /** The hook would stop a commit: guard ran and the hook failed. */
  blocks: boolean;
}

/** A hook that runs other tools (lint, tests) gets this long before it counts as not blocking. */
const PROBE_TIMEOUT_MS = 30_000;

export interface HookProbe {
  hook: string;
  root: string;
  env: NodeJS.ProcessEnv;
  args: string[];
  stdin: string;
}

/**
 * Run a hook as git would (from the top of the work tree, the same
 * environment) with the probe set, against a throwaway index that holds
 * HEAD's tree: nothing is staged, so tools the hook runs before guard
 * (lint-staged, formatters) find nothing to do, and the user's index is
 * never touched. `stdin` is what git would write to the hook.
 */
export async function probeHook({ hook, root, env, args, stdin }: HookProbe): Promise<ProbeResult> {
  const { mkdtemp, readFile, rm, writeFile } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { spawn } = await import('node:child_process');
  const { git } = await import('../../git/run.js');
  const dir = await mkdtemp(path.join(tmpdir(), PROBE_PREFIX));
  try {
    const file = path.join(dir, `${PROBE_PREFIX}${process.pid}`);
    await writeFile(file, '');
    const index = path.join(dir, 'index');
    // read-tree HEAD into the temp index; with no commits the index stays empty
    await git(['read-tree', 'HEAD'], { cwd: root, env: { GIT_INDEX_FILE: index }, okCodes: [128] });
    const childEnv: NodeJS.ProcessEnv = { ...env, [PROBE_ENV]: file, GIT_INDEX_FILE: index };
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(hook, args, {
        cwd: root,
        env: childEnv,
        stdio: ['pipe', 'ignore', 'ignore'],
        timeout: PROBE_TIMEOUT_MS,
      });
      child.on('error', () => resolve(null));
      child.on('close', (c) => resolve(c));
      child.stdin.on('error', () => {});
      child.stdin.end(stdin);
    });
    const ran = (await readFile(file, 'utf8').catch(() => '')).length > 0;
    return { ran, code, blocks: ran && code !== null && code !== 0 };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
