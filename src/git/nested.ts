import { existsSync } from 'node:fs';
import path from 'node:path';
import { GuardError } from '../core/errors.js';
import { MODE } from '../core/modes.js';
import { checkpoint, checkpointId } from './checkpoint.js';
import { REFS, newRef } from './records.js';
import { openRepo, type Repo } from './repo.js';
import { git, splitZ } from './run.js';
import { commonDirOf, journaledRefWrite, noteGone } from './journal.js';
import { randomHex } from '../core/digest.js';

export interface KeptNested {
  /** The nested repository's folder, relative to the work tree. */
  path: string;
  /** A checkpoint of it (its commits, its uncommitted and untracked files), now in the outer object store. */
  checkpoint: string;
  commit: string;
}

/**
 * Repositories inside a work tree (a submodule, or a clone the agent made):
 * a checkpoint of the outer tree holds each only as a gitlink, a commit id
 * whose objects live in the nested repository, so removing the work tree
 * would lose its history and its uncommitted work. Found from the outer
 * checkpoint's tree (every gitlink, whatever its depth: `git add -A` turns an
 * embedded repository into one) with one ls-tree.
 *
 * https://git-scm.com/docs/git-ls-tree#_output_format  "<mode> SP <type> SP <object> TAB <path>"
 */
export async function nestedRepos(root: string, tree: string): Promise<string[]> {
  const r = await git(['ls-tree', '-r', '-z', tree], { cwd: root });
  return splitZ(r.stdout)
    .filter((line) => line.startsWith(`${MODE.gitlink} `))
    .map((line) => line.slice(line.indexOf('\t') + 1))
    .filter((p) => existsSync(path.join(root, p, '.git')));
}

/**
 * A repository the agent made (or could edit) inside its lane is not trusted:
 * its own config and hooks could make guard, run by a person outside any
 * sandbox the agent is in, execute the agent's commands. Every git process
 * guard runs there gets config on the command-line level (GIT_CONFIG_COUNT,
 * which outranks the repository's) that turns off whatever would run a
 * command: hooks, the fsmonitor, commit signing, and each clean/smudge
 * filter the repository defines. Reading its config runs nothing.
 * https://git-scm.com/docs/git-config#Documentation/git-config.txt-GITCONFIGCOUNT
 */
export async function untrustedRepoEnv(root: string): Promise<NodeJS.ProcessEnv> {
  const pairs: Array<[string, string]> = [
    ['core.hooksPath', '/dev/null'],
    ['core.fsmonitor', 'false'],
    ['commit.gpgSign', 'false'],
  ];
  const r = await git(['config', '-z', '--get-regexp', '^filter\\.'], { cwd: root, okCodes: [1] });
  const names = new Set<string>();
  for (const entry of splitZ(r.stdout)) {
    // "filter.<name>.<key>\n<value>": the name may hold dots, the key may not
    const key = entry.split('\n')[0]!;
    const m = /^filter\.(.+)\.[^.]+$/i.exec(key);
    if (m) names.add(m[1]!);
  }
  // an empty command is no filter at all
  for (const n of names)
    pairs.push(
      [`filter.${n}.clean`, ''],
      [`filter.${n}.smudge`, ''],
      [`filter.${n}.process`, ''],
      [`filter.${n}.required`, 'false'],
    );
  const env: NodeJS.ProcessEnv = { GIT_CONFIG_COUNT: String(pairs.length) };
  pairs.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k;
    env[`GIT_CONFIG_VALUE_${i}`] = v;
  });
  return env;
}

/**
 * Keep each nested repository's whole state in the OUTER repository: a
 * guard checkpoint taken inside it (its own temp index; its files, index and
 * refs untouched), then fetched into the outer object store as a checkpoint
 * ref there, so `guard log` lists it and git can check it out after the
 * folder is gone. A few git processes per nested repository (they are rare).
 * Throws, naming the repository, when one cannot be kept: the caller must
 * not remove anything then.
 */
export async function keepNested(
  outer: Repo,
  paths: readonly string[],
  opts: { reason: string; command: string; lane: string | null },
): Promise<KeptNested[]> {
  const kept: KeptNested[] = [];
  for (const rel of paths) {
    const dir = path.join(outer.root, rel);
    try {
      const inner = await openRepo(dir);
      const env = await untrustedRepoEnv(inner.root);
      const cp = await checkpoint(inner, {
        reason: `${opts.reason} (nested repository ${rel})`,
        command: opts.command,
        lane: opts.lane,
        env,
      });
      // A ref to fetch by (fetching a bare commit id needs uploadpack.allowAnySHA1InWant).
      // (both refs written the one way guard writes refs: named in each repository's journal first)
      const exportRef = `refs/guard/export/${randomHex(6)}`;
      await journaledRefWrite(inner.root, [exportRef], async () => {
        await git(['update-ref', '--no-deref', exportRef, cp.commit], { cwd: inner.root, env });
        return [{ ref: exportRef, oid: cp.commit }];
      });
      const ref = newRef(REFS.checkpoints);
      try {
        // --no-write-fetch-head: FETCH_HEAD is the user's; --no-tags: only the checkpoint and its history
        await journaledRefWrite(outer.root, [ref], async () => {
          await git(
            ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', dir, `${exportRef}:${ref}`],
            { cwd: outer.root },
          );
          return [{ ref, oid: cp.commit }];
        });
      } finally {
        await git(['update-ref', '--no-deref', '-d', exportRef], {
          cwd: inner.root,
          env,
          okCodes: [1, 128],
        });
        noteGone(commonDirOf(inner.root), [exportRef]);
      }
      kept.push({ path: rel, checkpoint: checkpointId(ref), commit: cp.commit });
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new GuardError(
        'E_NESTED_REPO',
        `${rel} is a git repository inside the lane and could not be kept (${why.split('\n')[0]}); nothing was removed`,
        `keep its work yourself (commit and push it, or move ${rel} out of the lane), then run the command again`,
      );
    }
  }
  return kept;
}
