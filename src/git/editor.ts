import { git } from './run.js';

/**
 * The editor a person chose for git: `git var GIT_EDITOR` resolves
 * $GIT_EDITOR, core.editor, $VISUAL, $EDITOR and git's default (vi) in git's
 * own order, so `e` at the prompt opens the editor `git add -p` would. null
 * when git names none (a dumb terminal with no editor set). Asked only when
 * the person presses `e`.
 * https://git-scm.com/docs/git-var#Documentation/git-var.txt-GITEDITOR
 */
export async function editorCommand(cwd: string): Promise<string | null> {
  const r = await git(['var', 'GIT_EDITOR'], { cwd, okCodes: [1, 128] });
  const command = r.code === 0 ? r.stdout.toString('utf8').trim() : '';
  return command || null;
}
