import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { commitTimes, resolveRev, verifiedTip } from '../../git/moves.js';
import type { TipsTarget } from '../../apply/apply.js';
import type { Repo } from '../../git/repo.js';

/**
 * A branch that moved past the gate: git ran no reference-transaction hook
 * (hooks switched off with `-c core.hooksPath=`, the hook deleted, a ref file
 * written by hand), and what it brought in since the last tip that passed the
 * gate needs a person. Reported by every `guard check` and by `guard doctor`
 * until the branch moves through the gate again (which measures the same
 * range and refuses or asks) or is reset to a verified tip: a commit
 * message, one more commit on top, or a line in a file changes nothing.
 */
export interface Bypass {
  branch: string;
  /** The branch's tip now. */
  commit: string;
  /** What it was measured against. */
  base: string;
  paths: string[];
}

/** The branch `HEAD` of this work tree names, read from its HEAD file ("ref: refs/heads/main"); null when detached. */
async function currentBranch(repo: Repo): Promise<string | null> {
  const text = await readFile(path.join(repo.gitDir, 'HEAD'), 'utf8').catch(() => '');
  const m = /^ref: (refs\/heads\/\S.*)$/m.exec(text);
  return m ? m[1]! : null;
}

/** The branch HEAD names and its last verified tip: reads only, so it may run beside the gate. */
export interface VerifiedTip {
  branch: string;
  verified: string | null;
}

/**
 * One git process (none when detached, or when the journaled tip is `head`, a commit git has):
 * the verified tip of the current branch.
 */
export async function readVerifiedTip(repo: Repo, head?: string): Promise<VerifiedTip | null> {
  const branch = await currentBranch(repo);
  if (!branch) return null;
  // the journaled tip wins over one moved outside guard (git/moves.ts verifiedTip)
  return { branch, verified: await verifiedTip(repo.root, branch, head) };
}

/**
 * No git process when the branch is where the gate left it (the usual case;
 * `tip` was read beside the gate); otherwise the move is measured (about
 * five more). Runs after the gate: it may record a verified tip, and a check
 * that stops (a timeout, Ctrl-C) must leave no ref behind.
 */
export async function findBypass(
  repo: Repo,
  head: string | null,
  tip: VerifiedTip | null,
): Promise<Bypass | undefined> {
  if (!head || !tip) return undefined;
  const { branch, verified } = tip;
  if (verified === head) return undefined;
  const [{ measureMove }, { approvalKey, personApprovals }] = await Promise.all([
    import('./ref-gate.js'),
    import('../../git/person-approvals.js'),
  ]);
  // No verified tip yet (guard installed before the hook existed): the last commit alone.
  const anchor = verified ?? (await resolveRev(repo.root, `${head}^`));
  if (!anchor) {
    await verify(repo, { verified: { branch, tip: head } });
    return undefined;
  }
  const m = await measureMove(repo.root, anchor, head, { brokenConfig: 'defaults' });
  let open = m.needing;
  if (open.length > 0) {
    const byPath = new Map(m.entries.map((e) => [e.path, e]));
    const since = (await commitTimes(repo.root, [m.base])).get(m.base) ?? 0;
    const approved = await personApprovals(repo.root, since);
    open = open.filter(
      (c) =>
        !approved.has(
          approvalKey(c.path, byPath.get(c.path)?.newOid ?? null, byPath.get(c.path)?.newMode),
        ),
    );
  }
  if (open.length === 0) {
    // nothing in it needed a person: catch up, so the next command is one process again
    if (verified && m.base !== verified) {
      // it moved back past every hook (a reset with hooks off, a ref file written by hand): the
      // verified tip is all that still held what it dropped, so it is kept as the branch gate keeps it
      const [{ DROPPED_REFS, anchorDay }, { newRef }] = await Promise.all([
        import('../../git/moves.js'),
        import('../../git/records.js'),
      ]);
      const dropped = [{ ref: newRef(DROPPED_REFS, new Date()), tip: verified }];
      await verify(repo, {
        settle: { moves: [{ branchRef: branch, to: head, dropped }], day: anchorDay(new Date()) },
      });
    } else await verify(repo, { verified: { branch, tip: head } });
    return undefined;
  }
  return { branch, commit: head, base: m.base, paths: open.map((c) => c.path) };
}

/** Catch the branch gate up (apply's tips target); a tip it cannot write is only a later, longer check. */
async function verify(repo: Repo, tips: Omit<TipsTarget, 'kind'>): Promise<void> {
  const { apply } = await import('../../apply/apply.js');
  await apply({
    gate: 'ref-gate',
    repo,
    now: new Date(),
    records: [],
    target: { kind: 'tips', ...tips },
  }).catch(() => undefined);
}
