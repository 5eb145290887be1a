import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { packagePath } from '../../runtime/package.js';
import type { Repo } from '../../git/repo.js';

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
const hookTemplate = (name: string) => packagePath(`hooks/${name}`);

/** Install both hooks into a husky setup at `root` (hooks folder `hooksDir`); the paths changed. */
export async function installBranchGate(
  repo: Repo,
  huskyDir: string,
  hooksDir: string,
  project: { folder: string; yarnPnp: boolean } = { folder: '', yarnPnp: false },
): Promise<string[]> {
  const changed: string[] = [];
  const template = findsGuard(await readFile(hookTemplate(REF_HOOK), 'utf8'), project);
  // A relative core.hooksPath is resolved where git runs the hook: the top of the work tree,
  // except in receive-pack (`git push . evil:main`), which runs hooks in the git dir.
  for (const [where, refHook] of [
    [`${hooksDir}/${REF_HOOK}`, path.join(repo.root, hooksDir, REF_HOOK)],
    [
      `.git/${hooksDir}/${REF_HOOK} (for git push into this repository)`,
      path.join(repo.commonDir, hooksDir, REF_HOOK),
    ],
  ] as const) {
    if (await writeHook(refHook, template))
      changed.push(`wrote ${where} (every branch move passes the gate)`);
  }
  const mergeHook = path.join(repo.root, huskyDir, MERGE_HOOK);
  if (!existsSync(mergeHook)) {
    const { installFiles } = await import('../../apply/apply.js');
    await installFiles([
      {
        op: 'write',
        path: mergeHook,
        content: await readFile(hookTemplate(MERGE_HOOK)),
        mode: 0o755,
      },
    ]);
    changed.push(`wrote ${huskyDir}/${MERGE_HOOK} (runs guard check on git merge)`);
  }
  changed.push(...(await adopt(repo)));
  return changed;
}

/**
 * The same gate for a plain hooks folder (the global route, the pre-commit
 * framework): `dirs` are where git runs hooks from (the folder, and for a
 * relative core.hooksPath also that path inside the git dir, for receive-pack).
 * A hook of the same name that is not guard's is left alone and named in
 * `warnings`: the branch is then not gated, and doctor says the same.
 */
export async function installPlainBranchGate(
  repo: Repo,
  dirs: ReadonlyArray<{ dir: string; shown: string }>,
): Promise<{ changed: string[]; warnings: string[] }> {
  const changed: string[] = [];
  const warnings: string[] = [];
  const ref = await readFile(hookTemplate(REF_HOOK), 'utf8');
  // husky runs its hooks through sh; git runs a plain hook itself, so it needs the #! line
  const merge = '#!/bin/sh\n' + (await readFile(hookTemplate(MERGE_HOOK), 'utf8'));
  for (const [i, { dir, shown }] of dirs.entries()) {
    for (const [name, text, what] of [
      [REF_HOOK, ref, 'every branch move passes the gate'],
      [MERGE_HOOK, merge, 'runs guard check on git merge'],
    ] as const) {
      const file = path.join(dir, name);
      const current = await readFile(file, 'utf8').catch(() => null);
      if (
        current !== null &&
        !current.includes(name === REF_HOOK ? 'guard verify-refs' : 'guard check')
      ) {
        // the user's own hook: never overwritten
        if (i === 0)
          warnings.push(
            `${shown}/${name} exists and does not run guard, so ${name === REF_HOOK ? 'branch moves (--no-verify, amend, reset, update-ref) are not gated' : 'git merge is not gated'}: add \`${name === REF_HOOK ? 'guard verify-refs' : 'guard check'}\` to it (see docs/install.md)`,
          );
        continue;
      }
      if (await writeHook(file, text)) changed.push(`wrote ${shown}/${name} (${what})`);
    }
  }
  changed.push(...(await adopt(repo)));
  return { changed, warnings };
}

/** Write `text` to the hook file unless it holds it already; executable either way. True when written. */
async function writeHook(file: string, text: string): Promise<boolean> {
  const current = await readFile(file, 'utf8').catch(() => null);
  const { installFiles } = await import('../../apply/apply.js');
  await installFiles([
    current !== text
      ? { op: 'write', path: file, content: text, mode: 0o755 }
      : { op: 'mode', path: file, mode: 0o755 },
  ]);
  return current !== text;
}

async function adopt(repo: Repo): Promise<string[]> {
  const { apply } = await import('../../apply/apply.js');
  const { done } = await apply({
    gate: 'setup',
    repo,
    now: new Date(),
    records: [],
    target: { kind: 'tips', adopt: true },
  });
  const adopted = done.adopted;
  return adopted.length > 0
    ? [
        `recorded ${adopted.length} branch tip${adopted.length === 1 ? '' : 's'} as the gate's starting point`,
      ]
    : [];
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
    out = out.replace(
      'PATH="node_modules/.bin:$PATH"\n',
      `PATH="node_modules/.bin:$PATH"\nPATH=${quoted}/node_modules/.bin:"$PATH"\n`,
    );
    // a lane's fallback to the main tree's guard, in the same subfolder there (inside double quotes)
    out = out.replace(
      '--git-common-dir)/../node_modules/.bin',
      `--git-common-dir)/../${project.folder.replace(/["$\`\\]/g, '\\$&')}/node_modules/.bin`,
    );
  }
  if (project.yarnPnp) {
    const cd = project.folder !== '' ? `cd '${project.folder.replace(/'/g, `'\\''`)}' && ` : '';
    out = out
      .replace(/command -v guard >\/dev\/null 2>&1 \|\| \{/, 'command -v yarn >/dev/null 2>&1 || {')
      .replace(
        /printf '%s' "\$moves" \| guard verify-refs/,
        `printf '%s' "$moves" | (${cd}yarn guard verify-refs)`,
      );
  }
  return out;
}
