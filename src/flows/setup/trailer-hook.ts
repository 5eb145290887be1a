import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { installFiles } from '../../apply/apply.js';
import path from 'node:path';
import { packagePath } from '../../runtime/package.js';

/**
 * The commit-msg hook that writes a `Guard-Approved:` trailer for each change
 * a person approved at the commit prompt (guard check leaves them in the git
 * dir: git/approval-trailers). Without it `guard ci` would refuse what the
 * person approved. Written beside pre-commit (husky's .husky/, or the plain
 * hooks folder). An existing shell hook of the user's gets guard's lines
 * FIRST, in a subshell: an `exit` anywhere in the user's hook would never
 * reach lines appended after it, and guard's own `exit 0` must not skip the
 * user's. A hook in another language (its shebang) gets them appended, as
 * before: they cannot run inside it anyway.
 */
const MARK = /guard-approved-trailers/;
const SHELL = /^#!\s*(?:\/usr)?\/bin\/(?:env\s+)?(?:sh|bash|dash|zsh|ksh)\b/;

export async function installTrailerHook(dir: string, shownDir: string): Promise<string | null> {
  const hook = path.join(dir, 'commit-msg');
  const script = await readFile(packagePath('hooks/commit-msg'), 'utf8');
  if (!existsSync(hook)) {
    await installFiles([{ op: 'write', path: hook, content: script, mode: 0o755 }]);
    return `wrote ${shownDir}/commit-msg (a Guard-Approved: trailer for what a person approves at the commit prompt)`;
  }
  const text = await readFile(hook, 'utf8');
  const body = script.replace(/^#!.*\n/, '');
  // guard's lines appended by an older guard init, after the user's: taken out and put first
  // (guard's own hook, the script alone, is not one)
  const rest = text.endsWith(body) ? text.slice(0, -body.length) : '';
  const appended = rest.replace(/^#!.*\n/, '').trim() !== '' ? rest.replace(/\n+$/, '\n') : null;
  if (MARK.test(text) && appended === null) return null;
  const user = appended ?? text;
  const shebang = /^#!.*\n/.exec(user)?.[0] ?? '';
  if (shebang !== '' && !SHELL.test(shebang)) {
    if (MARK.test(text)) return null;
    await installFiles([
      {
        op: 'append',
        path: hook,
        text: (text.endsWith('\n') || text === '' ? '' : '\n') + '\n' + body,
      },
      { op: 'mode', path: hook, mode: 0o755 },
    ]);
    return `added the Guard-Approved: trailer to ${shownDir}/commit-msg`;
  }
  const first = `${shebang}(\n${body.replace(/\n$/, '')}\n) || exit 1\n# guard's lines end here\n`;
  await installFiles([
    { op: 'write', path: hook, content: first + user.slice(shebang.length), mode: 0o755 },
  ]);
  return `added the Guard-Approved: trailer to ${shownDir}/commit-msg (before the hook's own lines, so an exit in them cannot skip it)`;
}
