import { readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * A pre-commit hook written by an older `guard init` still runs guard check,
 * so the other checks pass; what it lacks shows only in a lane or in CI:
 * - husky's `.husky/pre-commit` without the lane fallback (the line that
 *   finds the main tree's guard through `git rev-parse --git-common-dir`):
 *   an agent in a lane cannot commit ("guard is not installed here");
 * - no `commit-msg` hook beside it writing the `Guard-Approved:` trailer: what
 *   a person approves at the commit prompt, `guard ci` refuses.
 * Only guard's own script is judged (its first comment line); yarn Plug'n'Play
 * runs guard through yarn and needs no fallback. File reads only. Null when
 * nothing is missing.
 */
export async function oldHookProblem(
  script: string,
  scriptText: string | null,
  shown: string,
): Promise<{ message: string; hint: string } | null> {
  if (scriptText === null || !scriptText.includes('# guard: the commit gate')) return null;
  const husky = scriptText.includes('husky puts node_modules/.bin first on PATH');
  const missing: string[] = [];
  if (husky && !scriptText.includes('--git-common-dir'))
    missing.push("the lane fallback (an agent's commit in a lane finds no guard and is refused)");
  const commitMsg = await readFile(path.join(path.dirname(script), 'commit-msg'), 'utf8').catch(
    () => '',
  );
  if (!commitMsg.includes('guard-approved-trailers')) {
    missing.push(
      'the commit-msg hook (what a person approves at the commit prompt gets no Guard-Approved: trailer, so guard ci refuses it)',
    );
  }
  if (missing.length === 0) return null;
  return {
    message: `${shown} was set up by an older guard init: it lacks ${missing.join(' and ')}`,
    hint: 'run guard init (it adds what is missing and keeps the rest of the hook)',
  };
}
