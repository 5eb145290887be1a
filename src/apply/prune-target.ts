import { deleteRefs } from '../git/records.js';
import type { Steps } from './steps.js';
import type { Cuts } from '../git/session-chain.js';

/**
 * log --prune: old checkpoints (and with them their session steps; rejected
 * refs and decision records when asked) deleted in ONE `update-ref --stdin`
 * transaction; each delete names the value it saw, so a ref moved meanwhile
 * is not lost. Then the session index, which may name steps that are gone:
 * rebuilt from the refs on next use.
 */
export interface PruneTarget {
  kind: 'prune';
  refs: ReadonlyArray<{ ref: string; oid: string }>;
  /** The session chains cut (git/session-chain.ts cutChains). */
  chains?: Cuts;
}

export const pruneSteps: Steps<PruneTarget, undefined> = {
  recordsFirst: true,
  changes: (t) => t.refs.length > 0 || (t.chains?.chains.length ?? 0) > 0,
  write: async (p, t) => {
    await deleteRefs(p.repo.root, t.refs);
    if (t.chains && t.chains.chains.length > 0) {
      const { cutChains } = await import('../git/session-chain.js');
      await cutChains(p.repo.root, p.now, t.chains);
    }
    const { dropIndex, indexRoot } = await import('../git/session-index.js');
    await dropIndex(indexRoot(p.repo));
    return undefined;
  },
};
