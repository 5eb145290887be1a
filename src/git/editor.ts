import { git } from './run.js';

/**
 * Editors that return at once without touching the file. git runs a
 * commit's hooks with GIT_EDITOR=: when the message came from `-m` (no
 * editor will be needed), so the hook's `git var GIT_EDITOR` says `:`;
 * opening that for `e` would hand the hunk back unchanged, taken as if the
 * person had edited it.
 */
const NO_OP = /^(?::|true|\/bin\/true|\/usr\/bin\/true)$/;

export function isNoOpEditor(command: string): boolean {
  return NO_OP.test(command.trim());
}

/**
 * The editor a person chose for git: `git var GIT_EDITOR` resolves
 * $GIT_EDITOR, core.editor, $VISUAL, $EDITOR and git's default (vi) in git's
 * own order, so `e` at the prompt opens the editor `git add -p` would. When
 * $GIT_EDITOR is a no-op (`:` or `true`, as git sets it for the hooks of
 * `git commit -m`), it is asked again without it: the editor git itself
 * would open outside the hook. null when git names none, or only a no-op
 * (then editing is not possible here and the hunk stays undecided). Asked
 * only when the person presses `e`.
 * https://git-scm.com/docs/git-var#Documentation/git-var.txt-GITEDITOR
 */
export async function editorCommand(cwd: string): Promise<string | null> {
  const ask = async (env?: NodeJS.ProcessEnv) => {
    const r = await git(['var', 'GIT_EDITOR'], { cwd, okCodes: [1, 128], ...(env ? { env } : {}) });
    return r.code === 0 ? r.stdout.toString('utf8').trim() : '';
  };
  let command = await ask();
  // spawn leaves out a variable set to undefined: git then reads core.editor, VISUAL, EDITOR
  if (isNoOpEditor(command) && process.env.GIT_EDITOR !== undefined)
    command = await ask({ GIT_EDITOR: undefined });
  return command && !isNoOpEditor(command) ? command : null;
}
