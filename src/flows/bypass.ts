import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { approvalKey, personApprovals } from '../git/person-approvals.js';
import { commitTimes, markVerified, resolveRev, verifiedRef } from '../git/moves.js';
import type { Repo } from '../git/repo.js';
import { measureMove } from './ref-gate.js';

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

/**
 * One git process when the branch is where the gate left it (the usual
 * case); otherwise the move is measured (about five more).
 */
export async function findBypass(repo: Repo, head: string | null): Promise<Bypass | undefined> {
  if (!head) return undefined;
  const branch = await currentBranch(repo);
  if (!branch) return undefined;
  const verified = await resolveRev(repo.root, verifiedRef(branch));
  if (verified === head) return undefined;
  // No verified tip yet (guard installed before the hook existed): the last commit alone.
  const anchor = verified ?? (await resolveRev(repo.root, `${head}^`));
  if (!anchor) {
    await markVerified(repo.root, branch, head).catch(() => undefined);
    return undefined;
  }
  const m = await measureMove(repo.root, anchor, head, { brokenConfig: 'defaults' });
  let open = m.needing;
  if (open.length > 0) {
    const byPath = new Map(m.entries.map((e) => [e.path, e]));
    const since = (await commitTimes(repo.root, [m.base])).get(m.base) ?? 0;
    const approved = await personApprovals(repo.root, since);
    open = open.filter((c) => !approved.has(approvalKey(c.path, byPath.get(c.path)?.newOid ?? null)));
  }
  if (open.length === 0) {
    // nothing in it needed a person: catch up, so the next command is one process again
    await markVerified(repo.root, branch, head).catch(() => undefined);
    return undefined;
  }
  return { branch, commit: head, base: m.base, paths: open.map((c) => c.path) };
}
