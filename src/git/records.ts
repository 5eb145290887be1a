import { randomBytes } from 'node:crypto';
import { GuardError } from '../core/errors.js';
import { recordId } from '../core/record.js';
import type { DiffEntry } from './diff.js';
import { git } from './run.js';

export const REFS = {
  root: 'refs/guard/',
  checkpoints: 'refs/guard/checkpoints/',
  rejected: 'refs/guard/rejected/',
  decisions: 'refs/guard/decisions/',
} as const;

export function newRef(prefix: string, now = new Date()): string {
  return prefix + recordId(now, randomBytes(4).toString('hex'));
}

/** What a commit under refs/guard/ should hold. */
export interface RecordCommit {
  /** The ref to create; omit for an intermediate commit that only a later one names by `mark`. */
  ref?: string;
  /** fast-import mark (a positive number), so a later commit can name this one as `:N`. */
  mark?: number;
  message: string;
  /** Parent commit (an id, or `:N` for a marked commit above); null for a root commit (empty tree, plus the changes below). */
  parent: string | null;
  /** Tree changes relative to the parent's tree. */
  changes: Array<
    | { kind: 'blob'; path: string; mode: string; oid: string }
    | { kind: 'inline'; path: string; mode: string; data: Buffer }
    | { kind: 'delete'; path: string }
  >;
}

const COMMITTER = 'guard <guard@localhost>';
/** git's null object id: "no object" in update-index input and in trailers for a deletion. */
export const ZERO_OID = '0000000000000000000000000000000000000000';
/** fast-import needs a ref for every commit; `reset` to the null id at the end deletes it. */
const SCRATCH_PREFIX = 'refs/guard/tmp/';

/** fast-import's C-style path quoting: always quoted, so spaces, quotes and newlines survive. */
export function quotePath(p: string): string {
  let out = '"';
  for (const ch of p) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f) out += '\\' + c.toString(8).padStart(3, '0');
    else out += ch;
  }
  return out + '"';
}

function data(buf: Buffer): Buffer[] {
  return [Buffer.from(`data ${buf.length}\n`), buf, Buffer.from('\n')];
}

/**
 * Write any number of commits and their refs with ONE `git fast-import`
 * process: no per-record commit-tree/update-ref, and the refs are created
 * together or (if fast-import fails) not at all.
 * https://git-scm.com/docs/git-fast-import
 */
export async function writeRecords(cwd: string, commits: readonly RecordCommit[], now = new Date()): Promise<void> {
  if (commits.length === 0) return;
  const when = `${Math.floor(now.getTime() / 1000)} +0000`;
  const parts: Buffer[] = [Buffer.from('feature done\n')];
  const SCRATCH = SCRATCH_PREFIX + randomBytes(6).toString('hex');
  for (const c of commits) {
    // an intermediate commit goes on a scratch ref that is deleted at the end
    parts.push(Buffer.from(`commit ${c.ref ?? SCRATCH}\n`));
    if (c.mark) parts.push(Buffer.from(`mark :${c.mark}\n`));
    parts.push(Buffer.from(`committer ${COMMITTER} ${when}\n`));
    parts.push(...data(Buffer.from(c.message, 'utf8')));
    if (c.parent) parts.push(Buffer.from(`from ${c.parent}\n`));
    for (const ch of c.changes) {
      if (ch.kind === 'delete') parts.push(Buffer.from(`D ${quotePath(ch.path)}\n`));
      else if (ch.kind === 'blob') parts.push(Buffer.from(`M ${ch.mode} ${ch.oid} ${quotePath(ch.path)}\n`));
      else parts.push(Buffer.from(`M ${ch.mode} inline ${quotePath(ch.path)}\n`), ...data(ch.data));
    }
    parts.push(Buffer.from('\n'));
  }
  if (commits.some((c) => !c.ref)) parts.push(Buffer.from(`reset ${SCRATCH}\nfrom ${'0'.repeat(40)}\n\n`));
  parts.push(Buffer.from('done\n'));
  try {
    // --quiet: no statistics on stderr; refs are new and unique, so no --force.
    await git(['fast-import', '--quiet'], { cwd, input: Buffer.concat(parts) });
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new GuardError('E_RECORD', `could not record guard's decision under refs/guard/: ${why}`, 'check that .git is writable and has space; guard fails closed');
  }
}

export interface RefRecord {
  ref: string;
  oid: string;
  /** committer time, unix seconds */
  time: number;
  parent: string | null;
  message: string;
}

/**
 * Every ref under refs/guard/ with its commit message, in one for-each-ref.
 * Fields are separated by NUL and records by NUL NUL... except messages may
 * not contain NUL, so the format below is unambiguous.
 */
export async function listRecords(cwd: string, prefix: string = REFS.root): Promise<RefRecord[]> {
  const fmt = '%(refname)%00%(objectname)%00%(committerdate:unix)%00%(parent)%00%(contents)%00%01';
  const r = await git(['for-each-ref', `--format=${fmt}`, prefix], { cwd });
  const text = r.stdout.toString('utf8');
  const out: RefRecord[] = [];
  for (const rec of text.split('\0\x01\n')) {
    if (!rec) continue;
    const [ref, oid, time, parent, ...rest] = rec.split('\0');
    if (!ref || !oid) continue;
    out.push({ ref, oid, time: Number(time) || 0, parent: parent ? parent.split(' ')[0]! : null, message: rest.join('\0') });
  }
  return out;
}

/**
 * The tree change that turns a base into a proposed version of one diff
 * entry, for a rejected ref: `git diff REF^ REF` then shows the proposal.
 */
export function proposalChanges(e: DiffEntry): RecordCommit['changes'] {
  const changes: RecordCommit['changes'] = [];
  if (e.oldPath !== undefined) changes.push({ kind: 'delete', path: e.oldPath });
  if (e.newOid && e.newMode) changes.push({ kind: 'blob', path: e.path, mode: e.newMode, oid: e.newOid });
  else changes.push({ kind: 'delete', path: e.path });
  return changes;
}

/**
 * Delete refs in one transaction, each only if it still points where it was
 * seen (a ref moved meanwhile fails the whole deletion, nothing is lost).
 * https://git-scm.com/docs/git-update-ref  --stdin -z: "delete SP <ref> NUL <old-oid> NUL"
 */
export async function deleteRefs(cwd: string, refs: ReadonlyArray<{ ref: string; oid: string }>): Promise<void> {
  if (refs.length === 0) return;
  const input = refs.map((r) => `delete ${r.ref}\0${r.oid}\0`).join('');
  await git(['update-ref', '--stdin', '-z'], { cwd, input });
}

export interface RefType {
  ref: string;
  /** commit, tree, blob or tag: a ref may point at a non-commit after a hand edit. */
  type: string;
  oid: string;
}

/** Every ref under `prefix` with the type of the object it points at, in one for-each-ref. */
export async function listRefTypes(cwd: string, prefix: string = REFS.root): Promise<RefType[]> {
  // "refs/guard/checkpoints/20250101T000000Z-ab12cd34 commit <oid>" (ref names hold no spaces: git check-ref-format)
  const r = await git(['for-each-ref', '--format=%(refname) %(objecttype) %(objectname)', prefix], { cwd });
  const out: RefType[] = [];
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const [ref, type, oid] = line.split(' ');
    if (ref && type && oid) out.push({ ref, type, oid });
  }
  return out;
}
