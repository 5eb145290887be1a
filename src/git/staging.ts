import type { DiffEntry } from './diff.js';
import { ZERO_OID } from './records.js';
import { git } from './run.js';

/*
 * Index writes: what check and review stage once a decision is made. Each is
 * one git process however many paths it gets.
 */

/** One index entry as `update-index --index-info` takes it. */
export interface IndexEntry {
  mode: string;
  oid: string;
  path: string;
}

/**
 * Stage paths as they now are in the work tree (deleted ones removed), in one
 * process. https://git-scm.com/docs/git-update-index: --add/--remove, -z --stdin.
 */
export async function stagePaths(cwd: string, paths: readonly string[]): Promise<void> {
  if (paths.length === 0) return;
  await git(['update-index', '--add', '--remove', '-z', '--stdin'], {
    cwd,
    input: paths.join('\0') + '\0',
  });
}

/**
 * Set index entries to given blobs, in one process; the work tree is not
 * touched. https://git-scm.com/docs/git-update-index#_using_index_info
 *   "<mode> SP <sha1> TAB <path>" (NUL-terminated with -z); mode 0 removes the entry.
 */
export async function stageBlobs(cwd: string, entries: readonly IndexEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const lines = entries.map((e) => `${e.mode} ${e.oid}\t${e.path}`);
  await git(['update-index', '-z', '--index-info'], { cwd, input: lines.join('\0') + '\0' });
}

/**
 * Put the index entries of staged changes back as they are in the base
 * (HEAD), in one process: a new file leaves the index, a rename comes back
 * under its old name. The work tree files are not touched.
 */
export async function unstagePaths(cwd: string, entries: readonly DiffEntry[]): Promise<void> {
  const out: IndexEntry[] = [];
  for (const e of entries) {
    if (e.oldPath !== undefined) {
      out.push({ mode: '0', oid: ZERO_OID, path: e.path });
      out.push({ mode: e.oldMode!, oid: e.oldOid!, path: e.oldPath });
    } else if (e.oldMode && e.oldOid) out.push({ mode: e.oldMode, oid: e.oldOid, path: e.path });
    else out.push({ mode: '0', oid: ZERO_OID, path: e.path });
  }
  await stageBlobs(cwd, out);
}

/**
 * Store content as a blob in the object store; its id.
 * https://git-scm.com/docs/git-hash-object: -w writes, --stdin reads the content.
 */
export async function writeBlob(cwd: string, content: Buffer): Promise<string> {
  return (await git(['hash-object', '-w', '--stdin'], { cwd, input: content })).stdout
    .toString('utf8')
    .trim();
}

/**
 * The tree of the index as it is now, or null when the index cannot be
 * written as a tree (unmerged entries: exit 128).
 * https://git-scm.com/docs/git-write-tree
 */
export async function indexTree(cwd: string): Promise<string | null> {
  const r = await git(['write-tree'], { cwd, okCodes: [128] });
  const tree = r.stdout.toString('utf8').trim();
  return r.code === 0 && tree ? tree : null;
}
