import { git } from '../git/run.js';
import type { Steps } from './steps.js';

/**
 * guard recover: refs of guard's journal put back where git still has their
 * commits, in one `update-ref --stdin -z` transaction each: missing ones
 * created (never over a ref that came back meanwhile), moved ones pointed
 * back only if they still hold what the check saw (a symbolic ref: whatever
 * it holds, --no-deref).
 */
export interface RefsTarget {
  kind: 'refs';
  create: ReadonlyArray<{ ref: string; oid: string }>;
  update: ReadonlyArray<{ ref: string; oid: string; now: string }>;
}

export const refsSteps: Steps<RefsTarget, undefined> = {
  recordsFirst: true,
  changes: (t) => t.create.length > 0 || t.update.length > 0,
  write: async (p, t) => {
    const cwd = p.repo.root;
    // https://git-scm.com/docs/git-update-ref  --stdin -z: "create SP <ref> NUL <new-oid> NUL"
    if (t.create.length > 0)
      await git(['update-ref', '--no-deref', '--stdin', '-z'], {
        cwd,
        input: t.create.map((x) => `create ${x.ref}\0${x.oid}\0`).join(''),
      });
    // "update SP <ref> NUL <new-oid> NUL <old-oid> NUL"
    if (t.update.length > 0) {
      await git(['update-ref', '--no-deref', '--stdin', '-z'], {
        cwd,
        input: t.update
          .map((x) => `update ${x.ref}\0${x.oid}\0${x.now === 'symbolic' ? '' : x.now}\0`)
          .join(''),
      });
    }
    return undefined;
  },
};
