import { access, constants } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Repo } from '../../git/repo.js';
import { resolveRev } from '../../git/moves.js';
import type { DoctorCheck } from './check.js';
import { REF_HOOK } from '../setup/branch-gate.js';
import { findBypass, readVerifiedTip } from '../gates/bypass.js';
import { probeHook } from './hook-probe.js';

/**
 * doctor's checks that RUN things instead of reading them: the hooks (with
 * the probe of hook-probe.ts) and the branches (against the tips the gate
 * verified).
 */
const executable = (file: string) =>
  promisify(access)(file, constants.X_OK).then(
    () => true,
    () => false,
  );

export interface PreCommitHook {
  hook: string;
  root: string;
  env: NodeJS.ProcessEnv;
  script: string;
  mentionsGuard: boolean;
}

/** Why the pre-commit hook would not block a commit, or null when it would. */
export async function preCommitBlocks({
  hook,
  root,
  env,
  script,
  mentionsGuard,
}: PreCommitHook): Promise<{ message: string; hint: string } | null> {
  // HUSKY=0 is reported on its own (husky-env); here: would the hook block where husky runs
  const { HUSKY: _husky, ...rest } = env;
  const r = await probeHook({ hook, root, env: rest, args: [], stdin: '' });
  if (r.blocks) return null;
  if (r.ran) {
    return {
      message: `${script} runs guard check but does not stop the commit when it fails (exit ${r.code ?? 'killed'}: behind || true, in the background, or its exit code dropped)`,
      hint: 'run guard init, or make `guard check` a plain line of its own so that its failure ends the hook',
    };
  }
  if (!mentionsGuard)
    return {
      message: `${script} does not run guard check`,
      hint: 'run guard init (it adds the line), or add `guard check` to it',
    };
  return {
    message: `${script} never runs guard check (an exit before it, a condition that is never true, a heredoc or an echo), or guard is not found`,
    hint: 'run guard init, or make `guard check` a plain line of its own near the top',
  };
}

/** The reference-transaction hook is there, executable, and refuses a move when guard says so. */
export async function branchGateCheck(
  main: Repo,
  hooksDir: string,
  env: NodeJS.ProcessEnv,
): Promise<DoctorCheck> {
  const file = path.join(hooksDir, REF_HOOK);
  const rel = path.relative(main.root, file);
  const hint =
    'run guard init (it installs the hook; on the global route and beside the pre-commit framework it needs a guard on PATH)';
  if (!(await executable(file))) {
    return {
      id: 'branch-gate',
      ok: false,
      severity: 'warning',
      message: `${rel} is missing or not executable: amend, merge, --no-verify and update-ref move branches unchecked`,
      hint,
    };
  }
  const head = (await resolveRev(main.root, 'HEAD')) ?? '1'.repeat(40);
  const fake = head.startsWith('2') ? '3'.repeat(head.length) : '2'.repeat(head.length);
  const { HUSKY: _husky, ...rest } = env;
  const r = await probeHook({
    hook: file,
    root: main.root,
    env: rest,
    args: ['prepared'],
    stdin: `${head} ${fake} refs/heads/guard-doctor-probe\n`,
  });
  if (r.blocks)
    return {
      id: 'branch-gate',
      ok: true,
      severity: 'info',
      message: `${rel} gates every branch move (commit, amend, merge, rebase, reset, update-ref)`,
    };
  return {
    id: 'branch-gate',
    ok: false,
    severity: 'warning',
    message: `${rel} would not refuse a branch move (${r.ran ? `guard ran but the hook exited ${r.code ?? 'killed'}` : 'guard never ran'})`,
    hint,
  };
}

/** The main tree's branch moved past the gate and brought in changes that need a person. */
export async function bypassChecks(main: Repo, head: string | null): Promise<DoctorCheck[]> {
  const b = await readVerifiedTip(main)
    .then((tip) => findBypass(main, head, tip))
    .catch(() => undefined);
  if (!b) return [];
  const paths = `${b.paths.slice(0, 5).join(', ')}${b.paths.length > 5 ? ', ...' : ''}`;
  return [
    {
      id: 'branch-bypass',
      ok: false,
      severity: 'warning',
      message: `${b.branch.replace(/^refs\/heads\//, '')} moved to ${b.commit.slice(0, 10)} past the gate; since ${b.base.slice(0, 10)} it has changes that need approval: ${paths}`,
      hint: `its next move is refused until a person approves (commit in a terminal); see them with git diff ${b.base.slice(0, 10)} ${b.commit.slice(0, 10)}; guard ci blocks them`,
    },
  ];
}
