import { lstat, readFile, readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import { MODE, fileMode } from '../core/modes.js';
import type { RecordCommit } from './records.js';
import { blobId } from './blob-id.js';
import { randomHex } from '../core/digest.js';

/**
 * What a whole-tree checkpoint keeps beside the work tree's own tree: the
 * files git never sees as changes (DESIGN "What people lose is what the
 * checkpoint holds"):
 *
 * - ignored files (`.env`, `config/local.json`): what `git clean -X` and
 *   `rm` take, in no ref anywhere;
 * - the work trees of nested repositories (a clone the agent made, a
 *   submodule): their uncommitted work is in no ref of theirs either.
 *
 * They go in a tree of their own (a parent commit of the checkpoint, so gc
 * keeps it), never in the checkpoint's tree: a restore or rewind of the work
 * tree is unchanged by them, and a restore only ever writes them back, never
 * removes one (a file guard did not keep is never touched).
 *
 * The rule that keeps this cheap and bounded, per checkpoint:
 * - a file larger than KEPT_FILE_MAX is not kept (named, reason `size`);
 * - at most KEPT_FILES_MAX files and KEPT_TOTAL_MAX bytes are kept; past
 *   that, the rest is named (`budget`), individually ignored files first,
 *   then nested repositories, then wholly ignored folders;
 * - a wholly ignored folder (git names it once: `node_modules/`) or a nested
 *   repository is walked only up to FOLDER_WALK_MAX files: a larger one is
 *   not descended into and is named whole (`folder`); while its own mtime
 *   holds, the next checkpoint does not walk it again;
 * - `.git` (a folder or a gitfile) is never walked; guard's own `.guard/`
 *   (lanes, reported on their own) and husky's generated `.husky/_/` (the
 *   hooks, watched by the integrity check) are left out.
 * - content-addressed: a file whose lstat (size, mtime, ctime, inode, mode)
 *   is what the last checkpoint saw is not read again; its blob id is
 *   reused, and when nothing changed the last kept commit itself is the
 *   parent (no object written at all).
 */
export const KEPT_FILE_MAX = 1 << 20;
export const KEPT_TOTAL_MAX = 16 << 20;
export const KEPT_FILES_MAX = 2_000;
export const FOLDER_WALK_MAX = 500;

/** One kept file as last seen: its lstat fingerprint and blob id. */
export interface KeptFile {
  path: string;
  mode: string;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  oid: string | null;
}

export interface KeptMemory {
  commit: string;
  files: KeptFile[];
  /** Folders named whole last time, with their mtime: not walked again while it holds. */
  folders?: Array<{ path: string; mtimeMs: number; files: number }>;
}

export interface KeptSkip {
  path: string;
  reason: 'size' | 'budget' | 'folder' | 'unreadable';
  bytes?: number;
  /** Why it is outside the work tree's own tree: an ignored file, or inside a nested repository. */
  kind: 'ignored' | 'nested';
}

export interface KeptPlan {
  /** The last kept commit holds exactly this: no new commit. */
  reuse: boolean;
  /** The tree of a new kept commit (from the empty tree), when not reused and not empty. */
  changes: RecordCommit['changes'];
  files: KeptFile[];
  skipped: KeptSkip[];
  /** Wholly ignored folders that were kept (their files change with every build: not reported as overwritten). */
  folders: string[];
  /** The nested repositories whose files were walked (their changes are reported as theirs). */
  nested: string[];
  bigFolders: Array<{ path: string; mtimeMs: number; files: number }>;
  bytes: number;
}

export interface KeptLimits {
  fileMax: number;
  totalMax: number;
  filesMax: number;
  walkMax: number;
}

function envNumber(name: string): number | undefined {
  const v = process.env[name];
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** The limits, with the test/soak overrides GUARD_KEPT_FILE_MAX, GUARD_KEPT_TOTAL_MAX, GUARD_KEPT_FILES_MAX, GUARD_KEPT_WALK_MAX. */
export function keptLimits(): KeptLimits {
  return {
    fileMax: envNumber('GUARD_KEPT_FILE_MAX') ?? KEPT_FILE_MAX,
    totalMax: envNumber('GUARD_KEPT_TOTAL_MAX') ?? KEPT_TOTAL_MAX,
    filesMax: envNumber('GUARD_KEPT_FILES_MAX') ?? KEPT_FILES_MAX,
    walkMax: envNumber('GUARD_KEPT_WALK_MAX') ?? FOLDER_WALK_MAX,
  };
}

/** Paths guard never keeps here: its own folder (lanes), husky's generated hooks, its atomic-write temp files. */
function leftOut(p: string): boolean {
  return (
    p === '.guard/' ||
    p.startsWith('.guard/') ||
    p === '.husky/_/' ||
    p.startsWith('.husky/_/') ||
    /(^|\/)\.[^/]*\.guard-tmp-[^/]*$/.test(p)
  );
}

/** A path component git refuses in a tree (`.git` in any letter case). */
function refusedName(p: string): boolean {
  return p
    .split('/')
    .some((c) => c.toLowerCase() === '.git' || c === '' || c === '.' || c === '..');
}

/** The files of a folder, without following links or entering `.git`; null when there are more than `max`. */
async function walk(root: string, dir: string, max: number): Promise<string[] | null> {
  const out: string[] = [];
  const queue = [dir.replace(/\/$/, '')];
  while (queue.length > 0) {
    const d = queue.shift()!;
    const ents = await readdir(path.join(root, d), { withFileTypes: true }).catch(() => []);
    for (const e of ents) {
      if (e.name.toLowerCase() === '.git') continue;
      const rel = `${d}/${e.name}`;
      if (e.isDirectory()) queue.push(rel);
      else {
        out.push(rel);
        if (out.length > max) return null;
      }
    }
  }
  return out;
}

export interface KeptPlanInput {
  input: { ignored: readonly string[]; nested: readonly string[] };
  previous: KeptMemory | null;
  algo: 'sha1' | 'sha256' | null;
  limits: KeptLimits;
}

/**
 * Plan the kept tree of a checkpoint: `ignored` as git lists it (`git
 * ls-files -o -i --exclude-standard --directory`: files, and wholly ignored
 * folders with a trailing `/`), `nested` the folders of nested repositories.
 * Reads files only when their lstat changed since `previous`.
 */
export async function planKept(
  root: string,
  { input, previous, algo, limits }: KeptPlanInput,
): Promise<KeptPlan> {
  const found = await groupsToKeep(root, input, previous, limits);
  const { files, changes, bytes, hits } = await readGroups(root, {
    groups: found.groups,
    previous,
    algo,
    limits,
    skipped: found.skipped,
  });
  const reuse =
    previous !== null &&
    hits === files.length &&
    files.length === previous.files.length &&
    files.length > 0;
  return {
    reuse,
    changes,
    files,
    skipped: found.skipped,
    folders: found.keptFolders,
    nested: found.keptNested,
    bigFolders: found.bigFolders,
    bytes,
  };
}

/** Files to keep together: the single ignored files (folder null), or one walked folder's. */
interface KeptGroup {
  kind: 'ignored' | 'nested';
  folder: string | null;
  files: string[];
}

/**
 * The single ignored files, then each nested repository's and wholly ignored folder's files,
 * walked while the count budget lasts; a folder too large to walk, or unchanged since it was,
 * is named whole (`bigFolders`).
 */
async function groupsToKeep(
  root: string,
  input: { ignored: readonly string[]; nested: readonly string[] },
  previous: KeptMemory | null,
  limits: KeptLimits,
): Promise<{
  groups: KeptGroup[];
  skipped: KeptSkip[];
  bigFolders: KeptPlan['bigFolders'];
  keptFolders: string[];
  keptNested: string[];
}> {
  const skipped: KeptSkip[] = [];
  const groups: KeptGroup[] = [];
  const bigFolders: KeptPlan['bigFolders'] = [];
  const keptFolders: string[] = [];
  const keptNested: string[] = [];
  const lastBig = new Map((previous?.folders ?? []).map((f) => [f.path, f]));

  const singles = input.ignored.filter((p) => !p.endsWith('/') && !leftOut(p)).sort();
  groups.push({ kind: 'ignored', folder: null, files: singles });
  let planned = singles.length;
  const folderOf = async (dir: string, kind: 'ignored' | 'nested') => {
    const st = await lstat(path.join(root, dir)).catch(() => null);
    if (!st?.isDirectory()) return;
    if (planned >= limits.filesMax) {
      // the count budget is spent: a thousand small ignored folders are named, not walked
      skipped.push({ path: dir, reason: 'budget', kind });
      return;
    }
    const last = lastBig.get(dir);
    if (last && last.mtimeMs === st.mtimeMs) {
      bigFolders.push(last);
      skipped.push({ path: dir, reason: 'folder', kind });
      return;
    }
    const files = await walk(root, dir, limits.walkMax);
    if (files === null) {
      bigFolders.push({ path: dir, mtimeMs: st.mtimeMs, files: limits.walkMax + 1 });
      skipped.push({ path: dir, reason: 'folder', kind });
      return;
    }
    if (kind === 'ignored') keptFolders.push(dir + '/');
    else keptNested.push(dir + '/');
    planned += files.length;
    groups.push({ kind, folder: dir, files: files.sort() });
  };
  const nested = [...new Set(input.nested.map((p) => p.replace(/\/$/, '')))]
    .filter((p) => p !== '' && !leftOut(p + '/'))
    .sort();
  for (const n of nested) await folderOf(n, 'nested');
  const folders = input.ignored
    .filter((p) => p.endsWith('/') && !leftOut(p))
    .map((p) => p.slice(0, -1))
    .filter((p) => !nested.includes(p))
    .sort();
  for (const f of folders) await folderOf(f, 'ignored');
  return { groups, skipped, bigFolders, keptFolders, keptNested };
}

interface ReadGroupsInput {
  groups: readonly KeptGroup[];
  previous: KeptMemory | null;
  algo: 'sha1' | 'sha256' | null;
  limits: KeptLimits;
  skipped: KeptSkip[];
}

/**
 * Each group's files as tree changes, under the size and count budgets (what is left out goes to
 * `skipped`); `hits` counts the files whose blob the last kept tree already had.
 */
async function readGroups(
  root: string,
  { groups, previous, algo, limits, skipped }: ReadGroupsInput,
): Promise<{ files: KeptFile[]; changes: RecordCommit['changes']; bytes: number; hits: number }> {
  const last = new Map((previous?.files ?? []).map((f) => [f.path, f]));
  const files: KeptFile[] = [];
  const changes: RecordCommit['changes'] = [];
  let bytes = 0;
  let hits = 0;
  for (const g of groups) {
    if (files.length >= limits.filesMax) {
      // past the count budget: named without a stat each (a tree of 10,000 ignored files costs no more)
      for (const p of g.files) skipped.push({ path: p, reason: 'budget', kind: g.kind });
      continue;
    }
    const stats = await Promise.all(
      g.files.map((p) => lstat(path.join(root, p)).catch(() => null)),
    );
    // small files first among single ignored files: many large ones cannot push .env out of the budget
    const order = g.files.map((p, i) => ({ p, st: stats[i] ?? null }));
    if (g.folder === null)
      order.sort((x, y) => (x.st?.size ?? 0) - (y.st?.size ?? 0) || (x.p < y.p ? -1 : 1));
    for (const { p, st } of order) {
      if (!st || refusedName(p)) continue;
      const mode = st.isSymbolicLink() ? MODE.symlink : st.isFile() ? fileMode(st.mode) : null;
      if (mode === null) continue;
      if (st.size > limits.fileMax) {
        skipped.push({ path: p, reason: 'size', bytes: st.size, kind: g.kind });
        continue;
      }
      if (files.length >= limits.filesMax || bytes + st.size > limits.totalMax) {
        skipped.push({ path: p, reason: 'budget', bytes: st.size, kind: g.kind });
        continue;
      }
      const f: KeptFile = {
        path: p,
        mode,
        size: st.size,
        mtimeMs: st.mtimeMs,
        ctimeMs: st.ctimeMs,
        ino: st.ino,
        oid: null,
      };
      const kept = await keptChange(root, f, last.get(p), algo);
      if (kept === null) {
        skipped.push({ path: p, reason: 'unreadable', bytes: st.size, kind: g.kind });
        continue;
      }
      changes.push(kept.change);
      if (kept.reused) hits++;
      bytes += f.size;
      files.push(f);
    }
  }
  return { files, changes, bytes, hits };
}

/**
 * One file as a tree change: the last kept blob while its lstat is the same, else its bytes read
 * now (`f` takes the size read and the blob id); null when it cannot be read.
 */
async function keptChange(
  root: string,
  f: KeptFile,
  seen: KeptFile | undefined,
  algo: 'sha1' | 'sha256' | null,
): Promise<{ change: RecordCommit['changes'][number]; reused: boolean } | null> {
  const { path: p, mode } = f;
  if (
    seen &&
    seen.oid &&
    seen.mode === mode &&
    seen.size === f.size &&
    seen.mtimeMs === f.mtimeMs &&
    seen.ctimeMs === f.ctimeMs &&
    seen.ino === f.ino
  ) {
    f.oid = seen.oid;
    return { change: { kind: 'blob', path: p, mode, oid: seen.oid }, reused: true };
  }
  const data = await (
    mode === MODE.symlink
      ? readlink(path.join(root, p), { encoding: 'buffer' })
      : readFile(path.join(root, p))
  ).catch(() => null);
  if (data === null) return null;
  f.size = data.length;
  f.oid = algo ? blobId(data, algo) : null;
  return { change: { kind: 'inline', path: p, mode, data }, reused: false };
}

/** Nested repositories named by `.gitmodules` (`path = sub`): read, no git process. */
export async function submodulePaths(root: string): Promise<string[]> {
  const text = await readFile(path.join(root, '.gitmodules'), 'utf8').catch(() => '');
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*path\s*=\s*(.+?)\s*$/gm)) {
    const p = m[1]!.replace(/^"(.*)"$/, '$1');
    if (!p.startsWith('/') && !p.split('/').includes('..')) out.push(p);
  }
  return out;
}

/** The lanes of a main tree whose work trees are there now (`.guard/lanes/<name>/.git`). */
export async function presentLanes(root: string): Promise<string[]> {
  const dir = path.join(root, '.guard', 'lanes');
  const names = await readdir(dir).catch(() => [] as string[]);
  const here = await Promise.all(
    names.map((n) =>
      lstat(path.join(dir, n, '.git')).then(
        () => n,
        () => null,
      ),
    ),
  );
  return here.filter((n): n is string => n !== null).sort();
}

/** Where flows/hook/lane-keep.ts marks the lane checkpoint it took before a shell command in the main tree (under the common git dir). */
export const LANE_KEPT = path.join('guard', 'lanes-kept');

/** Mark lane NAME as kept by checkpoint `id`, taken with the main tree's checkpoint `for` (written whole, by rename). */
export async function noteLaneKept(
  commonDir: string,
  name: string,
  mark: { id: string; for: string },
): Promise<void> {
  const { mkdir, rename, rm, writeFile } = await import('node:fs/promises');
  const file = path.join(commonDir, LANE_KEPT, encodeURIComponent(name));
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}-${randomHex(4)}`;
  await writeFile(tmp, JSON.stringify(mark));
  await rename(tmp, file).catch(() => rm(tmp, { force: true }));
}
