import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { adoptTips } from '../git/moves.js';
import type { Repo } from '../git/repo.js';

/**
 * The hooks that gate the ways a branch moves besides `git commit`:
 * - reference-transaction: every ref update (commit, --no-verify, HUSKY=0,
 *   amend, merge, rebase, reset, branch -f, update-ref); a plain script in
 *   husky's folder, not a husky stub, so HUSKY=0 does not skip it;
 * - pre-merge-commit: `git merge` runs it instead of pre-commit, so a merge
 *   commit is checked (and a person asked) like any other commit.
 */
export const REF_HOOK = 'reference-transaction';
export const MERGE_HOOK = 'pre-merge-commit';
const TEMPLATES = new URL('../../hooks/', import.meta.url);

/** Install both hooks into a husky setup at `root` (hooks folder `hooksDir`); the paths changed. */
export async function installBranchGate(repo: Repo, huskyDir: string, hooksDir: string, project: { folder: string; yarnPnp: boolean } = { folder: '', yarnPnp: false }): Promise<string[]> {
  const changed: string[] = [];
  const template = findsGuard(await readFile(fileURLToPath(new URL(REF_HOOK, TEMPLATES)), 'utf8'), project);
  // A relative core.hooksPath is resolved where git runs the hook: the top of the work tree,
  // except in receive-pack (`git push . evil:main`), which runs hooks in the git dir.
  for (const [where, refHook] of [
    [`${hooksDir}/${REF_HOOK}`, path.join(repo.root, hooksDir, REF_HOOK)],
    [`.git/${hooksDir}/${REF_HOOK} (for git push into this repository)`, path.join(repo.commonDir, hooksDir, REF_HOOK)],
  ] as const) {
    const current = await readFile(refHook, 'utf8').catch(() => null);
    if (current !== template) {
      await mkdir(path.dirname(refHook), { recursive: true });
      await writeFile(refHook, template, { mode: 0o755 });
      changed.push(`wrote ${where} (every branch move passes the gate)`);
    }
    await chmod(refHook, 0o755);
  }
  const mergeHook = path.join(repo.root, huskyDir, MERGE_HOOK);
  if (!existsSync(mergeHook)) {
    await copyFile(fileURLToPath(new URL(MERGE_HOOK, TEMPLATES)), mergeHook);
    await chmod(mergeHook, 0o755);
    changed.push(`wrote ${huskyDir}/${MERGE_HOOK} (runs guard check on git merge)`);
  }
  const adopted = await adoptTips(repo.root);
  if (adopted.length > 0) changed.push(`recorded ${adopted.length} branch tip${adopted.length === 1 ? '' : 's'} as the gate's starting point`);
  return changed;
}

/**
 * The hook finds guard the way the project's pre-commit hook does: a project
 * in a subfolder (web/package.json) has its node_modules/.bin there, and yarn
 * Plug'n'Play has none at all (guard runs through yarn).
 */
function findsGuard(template: string, project: { folder: string; yarnPnp: boolean }): string {
  let out = template;
  if (project.folder !== '') {
    const quoted = `'${project.folder.replace(/'/g, `'\\''`)}'`;
    out = out.replace('PATH="node_modules/.bin:$PATH"\n', `PATH="node_modules/.bin:$PATH"\nPATH=${quoted}/node_modules/.bin:"$PATH"\n`);
  }
  if (project.yarnPnp) {
    const cd = project.folder !== '' ? `cd '${project.folder.replace(/'/g, `'\\''`)}' && ` : '';
    out = out
      .replace(/command -v guard >\/dev\/null 2>&1 \|\| \{/, 'command -v yarn >/dev/null 2>&1 || {')
      .replace(/printf '%s' "\$moves" \| guard verify-refs/, `printf '%s' "$moves" | (${cd}yarn guard verify-refs)`);
  }
  return out;
}
