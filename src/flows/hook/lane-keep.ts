import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { takeCheckpoint } from '../../apply/apply.js';
import { LANE_KEPT, noteLaneKept, presentLanes } from '../../git/kept.js';
import type { Repo } from '../../git/repo.js';

/**
 * Lanes' uncommitted work, kept before a shell command in the main tree
 * (issue 20): `git clean -ffdx`, `git worktree remove --force` or `rm -rf
 * .guard` run in the main tree take the lanes' work trees (`.guard/lanes/`),
 * which no checkpoint of the main tree holds (lanes are left out of it). So
 * before every shell command in a main tree that has lanes, each lane's work
 * tree gets a whole-tree checkpoint of its own, as the lane's own agent's
 * hook would take; an unchanged lane reuses its last one (no new object).
 * A mark in `.git/guard/lanes-kept/<name>` (no `git clean` or `git worktree
 * remove` reaches it) ties it to this call's main checkpoint (its id), so
 * the report after the command can say it was kept just before.
 *
 * Cost: nothing without lanes (presentLanes is a readdir), nothing for a
 * command that only reads (readOnly: `ls`, `git status | grep x`); else per
 * lane a file read for its git dir and one whole-tree checkpoint (about
 * three git processes; measured under load here, +150-200 ms per lane).
 */
const READERS = new Set([
  'ls',
  'cat',
  'head',
  'tail',
  'grep',
  'egrep',
  'fgrep',
  'rg',
  'ag',
  'wc',
  'echo',
  'printf',
  'pwd',
  'which',
  'type',
  'file',
  'stat',
  'du',
  'df',
  'less',
  'more',
  'diff',
  'cut',
  'tr',
  'jq',
  'true',
  'false',
  'test',
  '[',
  'cd',
  'nl',
  'od',
  'hexdump',
  'md5sum',
  'sha1sum',
  'sha256sum',
  'basename',
  'dirname',
  'realpath',
  'readlink',
  'whoami',
  'id',
  'uname',
  'hostname',
]);
// Not here, though they read: programs that also write a file they are given
// (`sort -o F`, `uniq IN OUT`, `xxd IN OUT`, `tree -o F`, `date -s`), and git's
// `reflog` (expire), `remote` and `config` (they write), and any git reader
// given `--output` (below).
const GIT_READERS = new Set([
  'status',
  'diff',
  'log',
  'show',
  'blame',
  'grep',
  'ls-files',
  'ls-tree',
  'rev-parse',
  'cat-file',
  'describe',
  'shortlog',
  'whatchanged',
  'help',
  'version',
  '--version',
]);

/**
 * A command made only of readers, in every part of a list or pipeline:
 * no redirection, no substitution, no `-exec`/`-delete`, each part's
 * program one that cannot remove a folder. Anything else, unknown programs
 * and interpreters included, is taken as one that may.
 */
export function readOnly(command: string): boolean {
  if (/[<>`]|\$\(|\b(?:xargs|exec|eval|-delete|-exec)\b/.test(command)) return false;
  for (const part of command.split(/&&|\|\||[;|\n&]/)) {
    const words = part
      .trim()
      .split(/\s+/)
      .filter((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w));
    if (words.length === 0) continue;
    const [prog, sub] = words as [string, string | undefined];
    if (prog === 'git') {
      const args = words
        .slice(1)
        .filter(
          (w, i, all) =>
            !(w.startsWith('-') || (i > 0 && (all[i - 1] === '-C' || all[i - 1] === '-c'))),
        );
      if (!GIT_READERS.has(args[0] ?? sub ?? '') || words.some((w) => w.startsWith('--output')))
        return false;
      continue;
    }
    if (!READERS.has(prog)) return false;
  }
  return true;
}

const markFile = (commonDir: string, name: string) =>
  path.join(commonDir, LANE_KEPT, encodeURIComponent(name));

/** The lane's own git dir, from its `.git` file (`gitdir: X`). */
async function laneGitDir(lane: string): Promise<string | null> {
  const text = await readFile(path.join(lane, '.git'), 'utf8').catch(() => null);
  const m = text ? /^gitdir: (.+)$/m.exec(text) : null;
  return m ? path.resolve(lane, m[1]!.trim()) : null;
}

export async function keepLanes(
  main: Repo,
  command: string,
  now: Date,
  mainCheckpoint: string,
): Promise<void> {
  if (main.gitDir !== main.commonDir || readOnly(command)) return;
  const names = await presentLanes(main.root);
  for (const name of names) {
    const root = path.join(main.root, '.guard', 'lanes', name);
    const gitDir = await laneGitDir(root);
    if (!gitDir) continue;
    const lane: Repo = { root, gitDir, commonDir: main.commonDir };
    try {
      const cp = await takeCheckpoint('hook', lane, {
        reason: `lane ${name}, before a shell command in the main tree: ${command.replace(/\s+/g, ' ').slice(0, 200)}`,
        command: 'hook',
        lane: name,
        now,
      });
      await noteLaneKept(main.commonDir, name, { id: cp.id, for: mainCheckpoint });
    } catch {
      // a lane guard cannot checkpoint (a broken work tree) is reported as not kept after the command
    }
  }
}

/** The lane checkpoint keepLanes took last, and the main checkpoint it was taken with. */
export async function laneKept(
  commonDir: string,
  name: string,
): Promise<{ id: string; for: string } | null> {
  try {
    const mark = JSON.parse(await readFile(markFile(commonDir, name), 'utf8')) as {
      id?: unknown;
      for?: unknown;
    };
    return typeof mark.id === 'string' && typeof mark.for === 'string'
      ? { id: mark.id, for: mark.for }
      : null;
  } catch {
    return null;
  }
}
