import { git } from './run.js';

/** core.hooksPath as git commit would use it, and where it was set. */
export interface HooksPath {
  /** As configured, or null when unset (hooks in the shared `.git/hooks`). */
  value: string | null;
  /** local, global, system, worktree, command (git config --show-scope). */
  scope: string | null;
}

/**
 * `git config --get` resolves every level (system, global, local, worktree)
 * the way git commit does; exit 1 when unset.
 * https://git-scm.com/docs/git-config#Documentation/git-config.txt---show-scope
 */
export async function readHooksPath(cwd: string): Promise<HooksPath> {
  // --show-scope (git 2.26+): "local\t.husky/_"
  const r = await git(['config', '--show-scope', '--get', 'core.hooksPath'], { cwd, okCodes: [1] });
  if (r.code !== 0) return { value: null, scope: null };
  const line = r.stdout.toString('utf8').replace(/\n$/, '');
  const tab = line.indexOf('\t');
  return tab === -1
    ? { value: line, scope: null }
    : { value: line.slice(tab + 1), scope: line.slice(0, tab) };
}
