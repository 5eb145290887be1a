import { adoptTips, keepDropped, markVerified, settleMoves, type Settled } from '../git/moves.js';
import type { Steps } from './steps.js';

/**
 * The branch gate's bookkeeping (git/moves.ts): where each branch was last
 * verified, the day's anchor, and the tips a move dropped, kept as refs;
 * each journaled, so a hand-moved one is noticed. After the plan's records
 * (the rejected refs and decisions of the moves), and only for a ref
 * transaction that goes through.
 */
export interface TipsTarget {
  kind: 'tips';
  /** Moves the gate let through: each branch's verified tip, the day's anchor, the tips they dropped. */
  settle?: { moves: readonly Settled[]; day: string; stale?: readonly string[] };
  /** One branch's verified tip: a commit that passed the gate some other way (guard check). */
  verified?: { branch: string; tip: string };
  /** Tips of deleted branches, kept. */
  dropped?: ReadonlyArray<{ ref: string; tip: string }>;
  /** Branches with no verified tip yet start from where they are (guard init). */
  adopt?: boolean;
}

export const tipsSteps: Steps<TipsTarget, { adopted: string[] }> = {
  recordsFirst: true,
  changes: (t) =>
    (t.settle?.moves.length ?? 0) > 0 ||
    t.verified !== undefined ||
    (t.dropped?.length ?? 0) > 0 ||
    t.adopt === true,
  nothing: async () => ({ adopted: [] }),
  write: async (p, t) => {
    const cwd = p.repo.root;
    if (t.settle && t.settle.moves.length > 0)
      await settleMoves(cwd, t.settle.moves, t.settle.day, t.settle.stale ?? []);
    if (t.verified) await markVerified(cwd, t.verified.branch, t.verified.tip);
    if (t.dropped && t.dropped.length > 0) await keepDropped(cwd, t.dropped);
    return { adopted: t.adopt ? await adoptTips(cwd) : [] };
  },
};
