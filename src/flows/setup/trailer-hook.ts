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
 * hooks folder); an existing commit-msg hook gets it appended once.
 */
const MARK = /guard-approved-trailers/;

export async function installTrailerHook(dir: string, shownDir: string): Promise<string | null> {
  const hook = path.join(dir, 'commit-msg');
  const script = await readFile(packagePath('hooks/commit-msg'), 'utf8');
  if (!existsSync(hook)) {
    await installFiles([{ op: 'write', path: hook, content: script, mode: 0o755 }]);
    return `wrote ${shownDir}/commit-msg (a Guard-Approved: trailer for what a person approves at the commit prompt)`;
  }
  const text = await readFile(hook, 'utf8');
  if (MARK.test(text)) return null;
  await installFiles([
    { op: 'append', path: hook, text: (text.endsWith('\n') || text === '' ? '' : '\n') + '\n' + script.replace(/^#!.*\n/, '') },
    { op: 'mode', path: hook, mode: 0o755 },
  ]);
  return `added the Guard-Approved: trailer to ${shownDir}/commit-msg`;
}
