import { git } from './run.js';

/**
 * The pager a person chose for git: `git var GIT_PAGER` resolves $GIT_PAGER,
 * core.pager, $PAGER and git's default (less) in git's own order, so guard
 * pages a diff exactly where `git diff` would. Asked only when the person
 * presses the key that shows the whole diff.
 * https://git-scm.com/docs/git-var#Documentation/git-var.txt-GITPAGER
 */
export async function pagerCommand(cwd: string): Promise<string> {
  const r = await git(['var', 'GIT_PAGER'], { cwd, okCodes: [1, 128] });
  const command = r.code === 0 ? r.stdout.toString('utf8').trim() : '';
  return command || 'less -R';
}
