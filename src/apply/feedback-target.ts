import { GuardError } from '../core/errors.js';
import { MODE } from '../core/modes.js';
import { writeFileAtomic } from '../worktree/atomic.js';
import type { Steps } from './steps.js';

/** review: the agent's feedback file in its lane (what was refused, and why). */
export interface FeedbackTarget {
  kind: 'feedback';
  /** The lane's work tree, and the file in it. */
  dir: string;
  rel: string;
  content: Buffer;
}

/**
 * Written atomically inside the lane. The lane is the agent's: its .guard/
 * may hold a symlink planted to make guard write elsewhere; then nothing is
 * written (`written: false`), and the review stands.
 */
export const feedbackSteps: Steps<FeedbackTarget, { written: boolean }> = {
  recordsFirst: true,
  changes: () => true,
  write: async (_p, t) => {
    try {
      await writeFileAtomic(t.dir, t.rel, t.content, MODE.file);
      return { written: true };
    } catch (err) {
      if (err instanceof GuardError && err.code === 'E_PATH_ESCAPE') return { written: false };
      throw err;
    }
  },
};
