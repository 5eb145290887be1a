import { appendFileSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

/**
 * guard's journal of its own ref tips, outside refs/ (DESIGN "A net that
 * notices its own removal"):
 *
 *   <commonDir>/guard/journal     "<oid> <ref>" per ref guard wrote, "- <ref>" per ref guard removed
 *
 * Every ref guard writes through fast-import (records.ts) is noted here in
 * the same call; the refs guard removes itself (guard log --prune) are noted
 * as gone. A ref the journal holds that is not in the ref store was removed
 * by something else (`git update-ref -d`, `rm -r .git/refs/guard`, a
 * `for-each-ref | xargs` loop): every door says so (flows/integrity.ts), and
 * `guard recover` puts the refs back from the journal while git still has
 * their objects (a plain `git gc` keeps unreachable objects two weeks;
 * `git gc --prune=now` does not, and then the recovery names what is lost).
 *
 * Reading is file reads only (no git process): the journal's tail and, for
 * a ref that has no loose file, packed-refs once.
 */
const DIR = 'guard';
const FILE = 'journal';
/** How many of the latest live refs a door checks (each a stat). */
const CHECKED = 64;
/** The tail read by a door. */
const TAIL_BYTES = 64 << 10;
/** Past this size the journal is compacted to its live entries (the newest KEEP). */
const COMPACT_BYTES = 1 << 20;
const KEEP = 5_000;
const OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

export interface Tip {
  ref: string;
  oid: string;
}

export function journalFile(commonDir: string): string {
  return path.join(commonDir, DIR, FILE);
}

/**
 * The shared git dir of the work tree at `cwd` (or above it), read from the
 * file system: `.git` a folder, or a gitfile (`gitdir: X`) whose X/commondir
 * names the shared one. Null when there is none (guard then notes nothing).
 */
export function commonDirOf(cwd: string): string | null {
  let dir = path.resolve(cwd);
  for (;;) {
    const dotgit = path.join(dir, '.git');
    try {
      const st = statSync(dotgit);
      if (st.isDirectory()) return dotgit;
      const m = /^gitdir: (.+)$/m.exec(readFileSync(dotgit, 'utf8'));
      if (!m) return null;
      const gitDir = path.resolve(dir, m[1]!.trim());
      try {
        return path.resolve(gitDir, readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim());
      } catch {
        return gitDir;
      }
    } catch {
      const up = path.dirname(dir);
      if (up === dir) return null;
      dir = up;
    }
  }
}

/** Note refs guard just wrote. Never fails the caller: a journal that cannot be written only weakens the check. */
export function noteTips(commonDir: string | null, tips: readonly Tip[]): void {
  if (!commonDir || tips.length === 0) return;
  write(commonDir, tips.map((t) => `${t.oid} ${t.ref}\n`).join(''));
}

/** Note refs guard removed itself (pruning), so their absence is not news. */
export function noteGone(commonDir: string | null, refs: readonly string[]): void {
  if (!commonDir || refs.length === 0) return;
  write(commonDir, refs.map((r) => `- ${r}\n`).join(''));
}

function write(commonDir: string, text: string): void {
  const file = journalFile(commonDir);
  try {
    appendFileSync(file, text);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return;
    try {
      // (synchronous: a note is a few bytes and must be on disk before the caller answers)
      mkdirSync(path.dirname(file), { recursive: true });
      appendFileSync(file, text);
    } catch {
      return;
    }
  }
  try {
    if (statSync(file).size > COMPACT_BYTES) void compact(file);
  } catch {
    /* nothing to compact */
  }
}

/** Live entries of a journal text, oldest first: the last word on each ref. */
export function liveTips(text: string): Tip[] {
  const live = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.startsWith('- ')) live.delete(line.slice(2));
    else {
      const sp = line.indexOf(' ');
      const oid = line.slice(0, sp);
      const ref = line.slice(sp + 1);
      if (sp > 0 && OID.test(oid) && ref.startsWith('refs/')) {
        live.delete(ref);
        live.set(ref, oid);
      }
    }
  }
  return [...live].map(([ref, oid]) => ({ ref, oid }));
}

async function compact(file: string): Promise<void> {
  const tmp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    const tips = liveTips(await readFile(file, 'utf8')).slice(-KEEP);
    await writeFile(tmp, tips.map((t) => `${t.oid} ${t.ref}\n`).join(''));
    await rename(tmp, file);
  } catch {
    await rm(tmp, { force: true });
  }
}

/** Every live entry of the journal (guard recover), oldest first. */
export async function readJournal(commonDir: string): Promise<Tip[]> {
  return liveTips(await readFile(journalFile(commonDir), 'utf8').catch(() => ''));
}

/** The journal's tail (the newest entries), without reading a large file whole. */
async function tail(file: string): Promise<string> {
  const fh = await open(file, 'r').catch(() => null);
  if (!fh) return '';
  try {
    const { size } = await fh.stat();
    const from = Math.max(0, size - TAIL_BYTES);
    const buf = Buffer.alloc(size - from);
    await fh.read(buf, 0, buf.length, from);
    const text = buf.toString('utf8');
    return from === 0 ? text : text.slice(text.indexOf('\n') + 1);
  } finally {
    await fh.close();
  }
}

/** Does `ref` exist in the ref store (a loose file, or a line of packed-refs)? */
async function refExists(commonDir: string, ref: string, packed: () => Promise<Set<string>>): Promise<boolean> {
  if (ref.includes('..')) return false;
  const st = await stat(path.join(commonDir, ref)).catch(() => null);
  if (st?.isFile()) return true;
  return (await packed()).has(ref);
}

/**
 * The newest refs guard wrote (up to CHECKED) that are gone from the ref
 * store although guard never removed them. File reads only. A repository
 * with another ref store (reftable) is not checked here: doctor's own
 * for-each-ref sees it.
 */
export async function missingTips(commonDir: string, checked = CHECKED): Promise<Tip[]> {
  if (await stat(path.join(commonDir, 'reftable')).catch(() => null)) return [];
  const tips = liveTips(await tail(journalFile(commonDir))).slice(-checked);
  if (tips.length === 0) return [];
  let packedSet: Set<string> | null = null;
  const packed = async () => {
    if (!packedSet) {
      const text = await readFile(path.join(commonDir, 'packed-refs'), 'utf8').catch(() => '');
      packedSet = new Set(text.split('\n').filter((l) => /^[0-9a-f]{40}/.test(l)).map((l) => l.slice(l.indexOf(' ') + 1)));
    }
    return packedSet;
  };
  const here = await Promise.all(tips.map((t) => refExists(commonDir, t.ref, packed)));
  return tips.filter((_, i) => !here[i]);
}

/** Make sure guard's folder in the git dir exists (init, recover). */
export async function ensureGuardDir(commonDir: string): Promise<string> {
  const dir = path.join(commonDir, DIR);
  await mkdir(dir, { recursive: true });
  return dir;
}
