import { RECORD_VERSION } from '../core/record.js';
import { CONFIG_FILE } from '../core/config.js';
import { MODE } from '../core/modes.js';
import { refsInFolder } from './packed-refs.js';
import { newRef, type RecordCommit } from './records.js';
import { git } from './run.js';
import { sessionPrefix } from './session.js';
import { sha256Hex } from '../core/digest.js';

/**
 * A session's policy anchors: which committed guard.config.json the calls
 * of a session found at HEAD, one ref per config (not per call), so a hook
 * call reads the strictest policy its session saw from the ref files of a
 * few refs (or ONE for-each-ref where they cannot say), however long the
 * session (issue 22, S1):
 *
 *   refs/guard/sessions/<harness>/<session key>/policy/<h(worktree)>/<time>-<random>
 *
 * each a commit whose tree holds the config as it was (a shell call's step
 * anchors HEAD itself, as its parent with HEAD's tree; a call that read the
 * config anchors a commit of that one blob; no config: an empty tree), its
 * message not a session event (readSessionEvents skips it; `guard log
 * --prune` takes it with age, like the session's steps).
 *
 * What counts is every config an anchor holds, the session's steps hold
 * (when they are read: flows/hook/hook-common.ts readSessionPolicy) and
 * HEAD's, the strictest of them: a forged anchor can only add one, so it
 * cannot loosen the gate. The session index's `c-` entry lists the blobs
 * the anchors held (git/session-index.ts), so an anchor removed is noticed
 * and the steps are read again.
 */
export function policyPrefix(harness: string, session: string, worktree: string): string {
  const h = sha256Hex(worktree).slice(0, 16);
  return `${sessionPrefix(harness, session)}policy/${h}/`;
}

export interface PolicyAnchor {
  ref: string;
  oid: string;
}

/**
 * The anchors of a session in a work tree: from the ref files (no process; packed-refs.ts
 * refsInFolder), else one for-each-ref of their names.
 */
export async function readAnchors(
  repo: { root: string; commonDir: string },
  prefix: string,
): Promise<PolicyAnchor[]> {
  const files = refsInFolder(repo.commonDir, prefix);
  if (files) return files;
  const r = await git(['for-each-ref', '--format=%(refname) %(objectname)', prefix], {
    cwd: repo.root,
  });
  return r.stdout
    .toString('utf8')
    .split('\n')
    .flatMap((l) => {
      const [ref, oid] = l.split(' ');
      return ref && oid ? [{ ref, oid }] : [];
    });
}

export interface AnchorOf {
  harness: string;
  session: string;
  worktree: string;
}

/**
 * The commit of one anchor, written with the call's own records: `head`,
 * HEAD itself (its tree holds the config, whatever it is: no object read),
 * or `blob`, the config blob (`""`: none committed).
 */
export function anchorCommit(
  a: AnchorOf,
  what: { head: string } | { blob: string },
  now: Date,
): RecordCommit {
  const body = {
    v: RECORD_VERSION,
    kind: 'policy',
    harness: a.harness,
    session: a.session,
    worktree: a.worktree,
    ...('blob' in what ? { config: what.blob } : { head: what.head }),
  };
  const message = `guard session ${a.harness} ${a.session}: policy anchor\n\n${JSON.stringify(body)}\n`;
  const ref = newRef(policyPrefix(a.harness, a.session, a.worktree), now);
  if ('head' in what) return { ref, parent: what.head, message, changes: [] };
  const changes: RecordCommit['changes'] = what.blob
    ? [{ kind: 'blob', path: CONFIG_FILE, mode: MODE.file, oid: what.blob }]
    : [];
  return { ref, parent: null, message, changes };
}
