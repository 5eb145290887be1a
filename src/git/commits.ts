import { GuardError } from '../core/errors.js';
import { git } from './run.js';

/** A commit object's header fields guard reads, and its message. */
export interface CommitObject {
  tree: string;
  parents: string[];
  message: string;
}

/**
 * Parse a commit object as `cat-file` gives it (git's raw format,
 * https://git-scm.com/docs/signature-format#_commits):
 *
 *   tree 9bedf67800b2923982bdf60c89c57ce6986d6ef8
 *   parent 1b7c1f4e3e2a7b2d0e1f6a0c3c2e3b7a1c0d9e8f
 *   author A U Thor <author@example.com> 1700000000 +0000
 *   committer C O Mitter <committer@example.com> 1700000000 +0000
 *   gpgsig -----BEGIN PGP SIGNATURE-----
 *    (continuation lines of a header start with one space)
 *    -----END PGP SIGNATURE-----
 *
 *   the message
 *
 * The headers end at the first empty line; only they are read as headers, so
 * a message line that says "parent ..." is message. Null when the object is
 * not a well-formed commit.
 */
export function parseCommit(raw: Buffer | string): CommitObject | null {
  const text = typeof raw === 'string' ? raw : raw.toString('utf8');
  const end = text.indexOf('\n\n');
  const head = end === -1 ? text.replace(/\n$/, '') : text.slice(0, end);
  const message = end === -1 ? '' : text.slice(end + 2);
  let tree: string | null = null;
  const parents: string[] = [];
  for (const line of head.split('\n')) {
    if (line.startsWith(' ')) continue; // a continuation of gpgsig, mergetag, ...
    const sp = line.indexOf(' ');
    const key = line.slice(0, sp);
    const value = line.slice(sp + 1);
    if (key === 'tree' && tree === null) tree = value;
    else if (key === 'parent') parents.push(value);
  }
  return tree === null ? null : { tree, parents, message };
}

/**
 * The best common ancestor of two commits, or null when they share no
 * history. https://git-scm.com/docs/git-merge-base: exit 1 and no output
 * when there is none.
 */
export async function mergeBase(cwd: string, a: string, b: string): Promise<string | null> {
  const r = await git(['merge-base', a, b], { cwd, okCodes: [1] });
  const mb = r.stdout.toString('utf8').trim();
  return r.code === 0 && mb ? mb : null;
}

/**
 * `git commit` of exactly these paths (whatever else is staged stays
 * staged), with the message on stdin, through the user's hooks; the new
 * HEAD. `env` reaches the hooks (review passes the record the pre-commit
 * hook's `guard check` honours).
 */
export async function commitPaths(
  cwd: string,
  paths: readonly string[],
  message: string,
  env: NodeJS.ProcessEnv = {},
): Promise<string> {
  if (paths.length === 0)
    throw new GuardError('E_INTERNAL', 'commitPaths with no paths would commit the whole index');
  const { literal } = await import('./checkpoint.js'); // not on check's hot path
  await git(['commit', '-q', '-F', '-', '--', ...paths.map(literal)], { cwd, input: message, env });
  return (await git(['rev-parse', 'HEAD'], { cwd })).stdout.toString('utf8').trim();
}

/** The message of a commit (everything after the header). */
export async function commitMessage(cwd: string, commit: string): Promise<string> {
  const r = await git(['log', '-1', '--format=%B', commit], { cwd });
  return r.stdout.toString('utf8');
}
