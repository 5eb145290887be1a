import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WHITESPACE_ARG } from './diff.js';
import { git } from './run.js';
import { randomHex } from '../core/digest.js';

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
const NO_INDEX_ARGS = [
  'diff',
  '--no-index',
  '--ignore-cr-at-eol',
  '--no-ext-diff',
  '--no-textconv',
  '--no-color',
] as const;

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
  const r = await git([...NO_INDEX_ARGS, '-z', '--numstat', '--', from, to], {
    cwd: path.dirname(from),
    okCodes: [1],
  });
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
  const r = await git([...NO_INDEX_ARGS, '--numstat', WHITESPACE_ARG, '--', from, to], {
    cwd: path.dirname(from),
    okCodes: [1],
  });
  return r.stdout.length === 0;
}

/** The unified diff from `from` (an absolute path, or /dev/null for a new file) to `to`, with `contextLines` of context. */
export async function patchFiles(from: string, to: string, contextLines: number): Promise<string> {
  const r = await git([...NO_INDEX_ARGS, `-U${contextLines}`, '--', from, to], {
    cwd: path.dirname(to),
    okCodes: [1],
  });
  return r.stdout.toString('utf8');
}

/**
 * Numstat for many pairs at once: `dir/a/NAME` against `dir/b/NAME`, one
 * process for any number of files (guard hook measures every file of a
 * multi-file patch this way). With `ignoreSpace`, git's `-w` counts (a
 * pair missing from the result is then whitespace-only).
 * --no-renames: pairs are matched by name. Output per pair:
 *   "added TAB deleted TAB NUL a/NAME NUL b/NAME NUL"   ("-" for binary)
 */
export async function numstatFolders(
  dir: string,
  ignoreSpace = false,
): Promise<Map<string, { added: number | null; deleted: number | null }>> {
  const args = [
    ...NO_INDEX_ARGS,
    '-z',
    '--numstat',
    '--no-renames',
    ...(ignoreSpace ? ['--ignore-all-space'] : []),
    'a',
    'b',
  ];
  const r = await git(args, { cwd: dir, okCodes: [1] });
  const f = r.stdout.toString('utf8').split('\0');
  const out = new Map<string, { added: number | null; deleted: number | null }>();
  for (let x = 0; x + 2 < f.length; x += 3) {
    const [a, d] = f[x]!.split('\t');
    out.set(f[x + 2]!.slice(2), {
      added: a === '-' ? null : Number(a),
      deleted: d === '-' ? null : Number(d),
    });
  }
  return out;
}

export interface PairCounts {
  /** Per pair (by its index in the call): lines added and deleted (null: binary to git). */
  counts: Map<number, { added: number | null; deleted: number | null }>;
  /** The pairs asked about in `whitespace` that are empty when whitespace is ignored (a reindent). */
  whitespaceOnly: Set<number>;
}

/**
 * Many base/next pairs measured with git's own diff: written side by side
 * into a scratch folder of guard's in the git dir (`a/N`, `b/N`), one
 * `diff --no-index --numstat` for all, and a second with `-w` for the pairs
 * `whitespace` picks from the counts (a would-be replacement that is empty
 * when whitespace is ignored is a reindent, DESIGN whitespaceOnly). The
 * folder is removed afterwards, whatever happens.
 */
export async function numstatPairs(
  gitDir: string,
  pairs: ReadonlyArray<{ i: number; base: Buffer; next: Buffer }>,
  whitespace: (counts: PairCounts['counts']) => number[],
  /** A pair `whitespace` is certain to pick (core/lines.ts surelyReplaces): the `-w` count then runs beside the first. */
  surely: (pair: { base: Buffer; next: Buffer }) => boolean = () => false,
): Promise<PairCounts> {
  const counts: PairCounts['counts'] = new Map();
  const whitespaceOnly = new Set<number>();
  if (pairs.length === 0) return { counts, whitespaceOnly };
  const { mkdir, rm, writeFile } = await import('node:fs/promises');
  const dir = path.join(gitDir, `guard-hook-${process.pid}-${randomHex(4)}`);
  try {
    await mkdir(path.join(dir, 'a'), { recursive: true });
    await mkdir(path.join(dir, 'b'), { recursive: true });
    await Promise.all(
      pairs.flatMap(({ i, base, next }) => [
        writeFile(path.join(dir, 'a', String(i)), base),
        writeFile(path.join(dir, 'b', String(i)), next),
      ]),
    );
    const early = pairs.some(surely) ? numstatFolders(dir, true) : null;
    early?.catch(() => {});
    // (the early count is awaited before the folder goes, whatever happens)
    const plain = await numstatFolders(dir).finally(() => early?.catch(() => {}));
    for (const [name, n] of plain) counts.set(Number(name), n);
    const ask = whitespace(counts);
    if (early && ask.length === 0) await early.catch(() => {});
    if (ask.length > 0) {
      const w = await (early ?? numstatFolders(dir, true));
      for (const i of ask)
        if (!w.has(String(i)) || (w.get(String(i))!.added === 0 && w.get(String(i))!.deleted === 0))
          whitespaceOnly.add(i);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return { counts, whitespaceOnly };
}

/**
 * A buffer as a file for git's `diff --no-index` (a base guard holds in
 * memory, measured against a file on disk): written to a scratch folder of
 * its own under the system's temp folder, given to `use`, removed afterwards.
 */
export async function withScratchFile<T>(
  content: Buffer,
  use: (file: string) => Promise<T>,
): Promise<T> {
  const [{ mkdtemp, rm, writeFile }, { tmpdir }] = await Promise.all([
    import('node:fs/promises'),
    import('node:os'),
  ]);
  const dir = await mkdtemp(path.join(tmpdir(), 'guard-base-'));
  try {
    const file = path.join(dir, 'base');
    await writeFile(file, content);
    return await use(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * withScratchFile's file, written at once (synchronously: a few small writes, no turn of the
 * event loop between reading a base and git's first look at it); `remove` takes it away again.
 */
export function scratchFile(content: Buffer): { file: string; remove: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'guard-base-'));
  const file = path.join(dir, 'base');
  try {
    writeFileSync(file, content);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
