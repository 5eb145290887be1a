import path from 'node:path';
import { git } from './run.js';

/*
 * Measuring two files on disk with git's own diff (`diff --no-index`), so
 * that `guard write` counts lines exactly as check and ci do through the
 * index. https://git-scm.com/docs/git-diff#Documentation/git-diff.txt-emgitdiffemltoptionsgt--no-index--ltpathgtltpathgt
 */

/**
 * - --no-index: two paths, no repository objects;
 * - --ignore-cr-at-eol: a difference in line endings alone is not a change (DESIGN metrics);
 * - --no-ext-diff --no-textconv --no-color: the user's diff drivers and colours must not change what is parsed.
 */
const NO_INDEX_ARGS = ['diff', '--no-index', '--ignore-cr-at-eol', '--no-ext-diff', '--no-textconv', '--no-color'] as const;

export interface FileNumstat {
  added: number;
  deleted: number;
  /** git saw binary content ("-\t-" in numstat). */
  binary: boolean;
}

/**
 * Lines added and deleted from `from` to `to` (absolute paths). Exit 1 means
 * "they differ"; `--numstat -z` prints "added TAB deleted TAB ..." (then the
 * two names), and nothing when only line endings differ.
 */
export async function numstatFiles(from: string, to: string): Promise<FileNumstat> {
  const r = await git([...NO_INDEX_ARGS, '-z', '--numstat', '--', from, to], { cwd: path.dirname(from), okCodes: [1] });
  const [a, d] = r.stdout.toString('utf8').split('\t');
  return {
    added: a && a !== '-' ? Number(a) : 0,
    deleted: d && d !== '-' ? Number(d) : 0,
    binary: a === '-',
  };
}

/**
 * Is the change from `from` to `to` empty when whitespace is ignored (a
 * reindent, a formatter run)? git's `-w` numstat prints nothing then.
 */
export async function whitespaceOnlyFiles(from: string, to: string): Promise<boolean> {
  const r = await git([...NO_INDEX_ARGS, '--numstat', '--ignore-all-space', '--', from, to], { cwd: path.dirname(from), okCodes: [1] });
  return r.stdout.length === 0;
}

/** The unified diff from `from` (an absolute path, or /dev/null for a new file) to `to`, with `contextLines` of context. */
export async function patchFiles(from: string, to: string, contextLines: number): Promise<string> {
  const r = await git([...NO_INDEX_ARGS, `-U${contextLines}`, '--', from, to], { cwd: path.dirname(to), okCodes: [1] });
  return r.stdout.toString('utf8');
}

/**
 * Flags for measuring many base/proposal pairs at once, as git's numstat does
 * for check: --no-index on two folders of temp files (one process for any
 * number of files), --no-renames (pairs are matched by name).
 */
const PAIRS_ARGS = [...NO_INDEX_ARGS, '--numstat', '-z', '--no-renames'] as const;

/**
 * Lines added and deleted per file name between `dir/a/NAME` and `dir/b/NAME`
 * (null for binary). `--numstat -z` on folders prints
 * "added TAB deleted TAB NUL a/NAME NUL b/NAME NUL"; a pair that differs only
 * in line endings is absent.
 */
export async function numstatFolders(dir: string): Promise<Map<string, [number | null, number | null]>> {
  const r = await git([...PAIRS_ARGS, 'a', 'b'], { cwd: dir, okCodes: [1] });
  const f = r.stdout.toString('utf8').split('\0');
  const counts = new Map<string, [number | null, number | null]>();
  for (let x = 0; x + 2 < f.length; x += 3) {
    const [a, d] = f[x]!.split('\t');
    counts.set(f[x + 2]!.slice(2), [a === '-' ? null : Number(a), d === '-' ? null : Number(d)]);
  }
  return counts;
}
