import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { inflateSync } from 'node:zlib';
import { objectsHere } from './object-here.js';
import { packedLookup, packedRefsBytes } from './packed-refs.js';
import {
  dropSeal,
  lockSeal,
  readSeal,
  journalSealProblem,
  resealJournal,
  sealedAppend,
  sealOfFile,
  trustedAt,
  trustedText,
} from './journal-seal.js';
import { randomHex } from '../core/digest.js';
import { faultPoint } from '../runtime/faults.js';

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
 * `for-each-ref | xargs` loop): every door says so (flows/doctor/integrity.ts), and
 * `guard recover` puts the refs back from the journal while git still has
 * their objects (a plain `git gc` keeps unreachable objects two weeks;
 * `git gc --prune=now` does not, and then the recovery names what is lost).
 *
 * Reading is file reads only (no git process): the journal's tail and, for
 * a ref that has no loose file, packed-refs once.
 */
const DIR = 'guard';
const FILE = 'journal';
/**
 * The refs guard writes once and keeps for as long as a thing lives (a lane's
 * base, `refs/guard/lanes/NAME`, from `guard start` to `guard discard`) are
 * noted in the journal and again in this small file, read whole by every door:
 * the door checks only the journal's newest CHECKED tips, which a lane's
 * start, long past, is not among.
 */
const PINNED_FILE = 'journal-pinned';
const PINNED = ['refs/guard/lanes/'];
const pinned = (ref: string) => PINNED.some((p) => ref.startsWith(p));
/**
 * The refs guard writes again under the same name (the branch gate's verified tips and day
 * anchors, a lane started again after a discard); every other ref under refs/guard/ is a record
 * with a name of its own, written once.
 */
const REWRITTEN = ['refs/guard/verified/', 'refs/guard/anchor/', 'refs/guard/lanes/'];
const rewritten = (ref: string) => REWRITTEN.some((p) => ref.startsWith(p));
/** How many of the latest live refs a door checks (each a stat). */
const CHECKED = 64;
/** The tail read by a door. */
const TAIL_BYTES = 64 << 10;
/** Past this size the journal is compacted to its live entries (the newest KEEP). */
const COMPACT_BYTES = 1 << 20;
const KEEP = 5_000;
const WRITE_BASE = 'refs/guard/write-base/';
/** guard write's named sessions (git/session-base.ts): their records are read from the journal. */
const WRITE_SESSIONS = 'refs/guard/sessions/cli/';
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
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
  // git's own discovery, by files: GIT_DIR / GIT_COMMON_DIR first, then up
  // from cwd to a GIT_CEILING_DIRECTORIES entry, taking only a folder git
  // would take for a repository (HEAD beside objects/ or a commondir file).
  // A stray `.git` folder above the repository (in /tmp, in a home folder)
  // is not one: the journal must never be written into it.
  const env = process.env;
  if (env.GIT_COMMON_DIR) return path.resolve(cwd, env.GIT_COMMON_DIR);
  if (env.GIT_DIR) return commonOf(path.resolve(cwd, env.GIT_DIR));
  const ceilings = (env.GIT_CEILING_DIRECTORIES ?? '')
    .split(path.delimiter)
    .filter((d) => d && path.isAbsolute(d))
    .map((d) => path.resolve(d));
  let dir = path.resolve(cwd);
  for (;;) {
    const dotgit = path.join(dir, '.git');
    let st: ReturnType<typeof statSync> | undefined;
    try {
      st = statSync(dotgit);
    } catch {
      st = undefined;
    }
    if (st?.isDirectory() && isGitDir(dotgit)) return commonOf(dotgit);
    if (st?.isFile()) {
      const m = /^gitdir: (.+)$/m.exec(readText(dotgit) ?? '');
      const gitDir = m ? path.resolve(dir, m[1]!.trim()) : null;
      return gitDir && isGitDir(gitDir) ? commonOf(gitDir) : null;
    }
    const up = path.dirname(dir);
    if (up === dir || ceilings.includes(up)) return null;
    dir = up;
  }
}

function readText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** As git's is_git_directory: a HEAD, and objects/ here or through commondir. */
function isGitDir(dir: string): boolean {
  const exists = (p: string) => {
    try {
      statSync(p);
      return true;
    } catch {
      return false;
    }
  };
  return (
    exists(path.join(dir, 'HEAD')) &&
    (exists(path.join(dir, 'commondir')) || exists(path.join(dir, 'objects')))
  );
}

function commonOf(gitDir: string): string {
  const common = readText(path.join(gitDir, 'commondir'));
  return common === null ? gitDir : path.resolve(gitDir, common.trim());
}

/**
 * A file's bytes; null when it is absent, unreadable, or not a regular file. Opened without
 * blocking and checked on the open file: a FIFO planted where guard reads
 * (`mkfifo .git/guard/journal`) would block the read, and node cannot exit while a
 * thread-pool read is blocked, so every door would hang.
 */
export async function readRegular(file: string): Promise<Buffer | null> {
  return readRegularSync(file);
}

/**
 * readRegular without the thread pool: these are small files (a ref, the journal's tail, a hook),
 * and a hook call reads up to ~70 of them; four thread-pool round trips each cost more than the
 * reads (docs/performance.md, "One hook process"). Safe the same way: the open does not block, and
 * only a regular file is read.
 */
function readRegularSync(file: string): Buffer | null {
  // absent (most of a door's refs, once packed): no open, whose ENOENT costs an exception (~5x a stat)
  let fd: number;
  try {
    if (!statSync(file, { throwIfNoEntry: false })) return null;
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    return fstatSync(fd).isFile() ? readFileSync(fd) : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Note refs guard just wrote. Never fails the caller: a journal that cannot be written only weakens the check. */
function noteTips(commonDir: string | null, tips: readonly Tip[]): void {
  if (!commonDir || tips.length === 0) return;
  note(commonDir, tips.map((t) => `${t.oid} ${t.ref}\n`).join(''));
  const kept = tips.filter((t) => pinned(t.ref));
  if (kept.length > 0)
    note(commonDir, kept.map((t) => `${t.oid} ${t.ref}\n`).join(''), PINNED_FILE);
}

/**
 * The one way guard writes refs under refs/guard/ (records' fast-import, lanes, the branch gate's
 * tips; DESIGN "A net that notices its own removal"): every ref's name is noted as coming
 * (`+ REF`) before it can exist, `write` writes the refs and answers what it wrote, and each tip is
 * noted. So a ref under refs/guard/ that the journal has no word on was never written by guard
 * through this journal (unjournaledRefs: the journal was replaced), even for the moment between a
 * first call's fast-import and its note (eight first calls at once: one read another's new ref that
 * way), and a writer cannot forget a step. The journal is made by the first note.
 */
export async function journaledRefWrite(
  cwd: string,
  refs: readonly string[],
  write: () => Promise<readonly Tip[]>,
): Promise<readonly Tip[]> {
  const commonDir = commonDirOf(cwd);
  if (commonDir && refs.length > 0) note(commonDir, refs.map((r) => `+ ${r}\n`).join(''));
  const tips = await write();
  faultPoint('journal:before-note');
  noteTips(commonDir, tips);
  return tips;
}

/**
 * What is wrong with the pinned file against its seal (journal-seal.ts): rewritten, removed, or
 * its seal replaced; null when it holds or was never sealed. File reads only.
 */
export function pinnedProblem(commonDir: string): string | null {
  const seal = readSeal(commonDir, 'pinned');
  if (seal === null) return null;
  if (seal !== 'bad' && !statSyncOrNull(pinnedFile(commonDir)))
    return 'it was removed (its seal says guard kept one)';
  return journalSealProblem(commonDir, pinnedFile(commonDir), 'pinned');
}

function statSyncOrNull(file: string): ReturnType<typeof statSync> | null {
  try {
    return statSync(file);
  } catch {
    return null;
  }
}

/**
 * The pinned file begun anew (`guard recover`, a person's call, when pinnedProblem has a word):
 * the lane bases there are among `tips`, and the gate record's digest the journal last noted.
 */
export function restartPinned(commonDir: string, tips: readonly Tip[]): void {
  const buf = readRegularSync(journalFile(commonDir));
  const gate = buf ? lastGate(trustedText(commonDir, buf, 0)) : null;
  rmSync(pinnedFile(commonDir), { force: true });
  dropSeal(commonDir, 'pinned');
  const text =
    tips
      .filter((t) => pinned(t.ref))
      .map((t) => `${t.oid} ${t.ref}\n`)
      .join('') + (gate ? `gate ${gate}\n` : '');
  if (text) note(commonDir, text, PINNED_FILE);
}

/** A journal begun anew from `tips` (`guard recover` after .git/guard/ was removed whole): the file exists even with none. */
export function startJournal(commonDir: string, tips: readonly Tip[]): void {
  note(commonDir, tips.map((t) => `${t.oid} ${t.ref}\n`).join(''));
  noteTips(
    commonDir,
    tips.filter((t) => pinned(t.ref)),
  );
}

/**
 * Note that a session started a background command (`bg <time> <harness>
 * <session key>`): the marker file the hook keeps for it is a cache an agent
 * can delete with the same command that wipes work, so the journal says it
 * too. liveTips skips these lines (no id).
 */
export function noteBackground(
  commonDir: string | null,
  harness: string,
  sessionKey: string,
  time: Date,
): void {
  if (!commonDir || /\s/.test(harness + sessionKey)) return;
  note(commonDir, `bg ${time.toISOString()} ${harness} ${sessionKey}\n`);
}

export interface BackgroundQuery {
  harness: string;
  sessionKey: string;
  now: Date;
  windowMs: number;
}

/** Whether the journal's tail notes a background command of this session started within `windowMs` of `now` (one read). */
export async function backgroundNoted(
  commonDir: string,
  { harness, sessionKey, now, windowMs }: BackgroundQuery,
): Promise<boolean> {
  const text = await tail(commonDir);
  const suffix = ` ${harness} ${sessionKey}`;
  for (const line of text.split('\n').reverse()) {
    if (!line.startsWith('bg ') || !line.endsWith(suffix)) continue;
    const t = Date.parse(line.slice(3, line.indexOf(' ', 3)));
    // unreadable or in the future: open (the safe side)
    return Number.isNaN(t) || t > now.getTime() || now.getTime() - t < windowMs;
  }
  return false;
}

/** Note refs guard removed itself (pruning), so their absence is not news. */
export function noteGone(commonDir: string | null, refs: readonly string[]): void {
  if (!commonDir || refs.length === 0) return;
  note(commonDir, refs.map((r) => `- ${r}\n`).join(''));
  const kept = refs.filter(pinned);
  if (kept.length > 0) note(commonDir, kept.map((r) => `- ${r}\n`).join(''), PINNED_FILE);
}

/**
 * Append to a regular file only (opened to read as well: the seal reads what it closes on): opened without blocking (a FIFO planted as the journal would
 * block this synchronous open, and the whole process with it, before any answer), and left
 * alone when it is anything else (the doors then say the journal is not a regular file).
 */
function append(file: string, text: string, commonDir: string | null): void {
  const of = sealOfFile(path.basename(file));
  const fd = openSync(
    file,
    constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK,
    0o644,
  );
  try {
    // the journal and the pinned file are sealed with each note (git/journal-seal.ts)
    if (!fstatSync(fd).isFile()) return;
    if (commonDir && of) sealedAppend(commonDir, fd, text, { file, of });
    else writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

function note(commonDir: string, text: string, name = FILE): void {
  const file = path.join(commonDir, DIR, name);
  const sealed = commonDir;
  try {
    append(file, text, sealed);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return;
    try {
      // (synchronous: a note is a few bytes and must be on disk before the caller answers)
      mkdirSync(path.dirname(file), { recursive: true });
      append(file, text, sealed);
    } catch {
      return;
    }
  }
  try {
    if (statSync(file).size > COMPACT_BYTES) compact(commonDir, file);
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
      // guard only ever writes under refs/guard/: a line naming another ref (refs/heads/main) is not guard's, and recover never touches it
      if (sp > 0 && OID.test(oid) && ref.startsWith('refs/guard/') && !ref.includes('..')) {
        live.delete(ref);
        live.set(ref, oid);
      }
    }
  }
  return [...live].map(([ref, oid]) => ({ ref, oid }));
}

/**
 * Rewrite the journal (or the pinned file) to its live entries. The journal is compacted under
 * its seal's lock, from the lines guard wrote only (journal-seal.ts), and sealed anew.
 */
function compact(commonDir: string, file: string): void {
  const tmp = `${file}.${process.pid}-${randomHex(4)}`;
  const journal = path.basename(file) === FILE;
  const of = journal ? 'journal' : 'pinned';
  const release = lockSeal(commonDir, of);
  try {
    const buf = readRegularSync(file);
    if (!buf || buf.length <= COMPACT_BYTES) return;
    const text = trustedText(commonDir, buf, 0, of);
    // the pinned file keeps every live entry (a lane a person has not discarded is never forgotten)
    const live = liveTips(text);
    // and today's and yesterday's write bases, and guard write's named sessions, however many refs
    // came after: guard write reads a file's base from the journal alone (git/session-base.ts), so
    // one dropped here is a sum restarted
    const bases = new Set([0, 1].map((d) => `${WRITE_BASE}${dayOf(Date.now() - d * 864e5)}/`));
    const tips = !journal
      ? live
      : [
          ...live
            .slice(0, -KEEP)
            .filter(
              (t) =>
                bases.has(t.ref.slice(0, WRITE_BASE.length + 11)) ||
                t.ref.startsWith(WRITE_SESSIONS),
            ),
          ...live.slice(-KEEP),
        ];
    // a session step guard removed stays noted: provenance trusts no absence while recent ones are gone
    const gone = goneRefs(text)
      .filter((r) => r.startsWith('refs/guard/sessions/'))
      .slice(-KEEP);
    const gate = lastGate(text);
    writeFileSync(
      tmp,
      gone.map((r) => `- ${r}\n`).join('') +
        tips.map((t) => `${t.oid} ${t.ref}\n`).join('') +
        (gate ? `gate ${gate}\n` : ''),
    );
    renameSync(tmp, file);
    resealJournal(commonDir, file, of);
  } catch {
    rmSync(tmp, { force: true });
  } finally {
    release();
  }
}

/**
 * Note the digest of the gate record `guard init` just wrote (`<commonDir>/guard/gate.json`), in
 * the journal and the pinned file: the record lists what the net checks, so removing or editing
 * it by hand would switch those checks off without a word. liveTips skips these lines.
 */
export function noteGate(commonDir: string, digest: string): void {
  note(commonDir, `gate ${digest}\n`);
  note(commonDir, `gate ${digest}\n`, PINNED_FILE);
}

/** The newest gate digest in a journal text; null when there is none. */
function lastGate(text: string): string | null {
  const at = text.lastIndexOf('\ngate ');
  const line = at >= 0 ? text.slice(at + 1) : text.startsWith('gate ') ? text : '';
  const m = /^gate ([0-9a-f]{64})$/m.exec(line);
  return m ? m[1]! : null;
}

/** The digest of the gate record guard last wrote (noteGate), from the pinned file, else the journal's tail. */
export async function journaledGate(commonDir: string): Promise<string | null> {
  return lastGate(await readPinned(commonDir)) ?? lastGate(await tail(commonDir));
}

/** Every live entry of the journal (guard recover), oldest first. */
export async function readJournal(commonDir: string): Promise<Tip[]> {
  const [pins, text] = await Promise.all([readPinned(commonDir), journalText(commonDir)]);
  // the journal's word wins where it has one (it is written first); a compacted journal may have dropped a lane's
  return liveTips(pins + text);
}

/** The pinned file's text (refs guard keeps for long: lane bases), the lines guard wrote (its seal); '' when there is none. */
async function readPinned(commonDir: string): Promise<string> {
  return pinnedText(commonDir);
}

function pinnedText(commonDir: string): string {
  const buf = readRegularSync(pinnedFile(commonDir));
  const text = buf ? trustedText(commonDir, buf, 0, 'pinned') : '';
  // whole lines (trustedText joins what it keeps without a last newline): readers append the journal's text to it
  return text && !text.endsWith('\n') ? `${text}\n` : text;
}

export function pinnedFile(commonDir: string): string {
  return path.join(commonDir, DIR, PINNED_FILE);
}

/** The live entries and the refs whose last word is "removed by guard" (`- REF`: a prune, a recover that found the objects gone), with one read. */
export async function readJournalWithGone(
  commonDir: string,
): Promise<{ live: Tip[]; gone: string[] }> {
  const text = await journalText(commonDir);
  return { live: liveTips(text), gone: goneRefs(text) };
}

/** The refs whose last word in a journal text is "removed by guard", oldest removal first. */
function goneRefs(text: string): string[] {
  const gone = new Set<string>();
  for (const line of text.split('\n')) {
    if (line.startsWith('- ')) {
      gone.delete(line.slice(2));
      gone.add(line.slice(2));
    } else gone.delete(line.slice(line.indexOf(' ') + 1));
  }
  return [...gone];
}

/**
 * The journaled value of refs under `prefix` (the newest word on each): the
 * tail first, the whole journal only when the tail names none of `wanted`.
 * File reads only.
 */
export async function journaledUnder(
  commonDir: string,
  prefix: string,
  wanted: readonly string[] = [],
): Promise<Map<string, string>> {
  const pick = (tips: Tip[]) =>
    new Map(tips.filter((t) => t.ref.startsWith(prefix)).map((t) => [t.ref, t.oid]));
  const recent = pick(liveTips(await tail(commonDir)));
  if (wanted.length > 0 && wanted.every((w) => recent.has(w))) return recent;
  return pick(await readJournal(commonDir));
}

/**
 * Which of `refs` guard's journal has any word on (`+ REF` before it was written, its tip, a
 * chain's `~` lines): the tail first, the whole journal only when the tail lacks one. null when
 * there is no journal to ask (none yet, or not a regular file). File reads only.
 */
export async function journalNames(
  commonDir: string,
  refs: readonly string[],
): Promise<Set<string> | null> {
  const named = (text: string) =>
    new Set(
      refs.filter(
        (r) =>
          text.includes(`+ ${r}\n`) ||
          text.includes(` ${r}\n`) ||
          text.endsWith(` ${r}`) ||
          text.includes(`~ ${r} `),
      ),
    );
  if (!readRegularSync(journalFile(commonDir))) return null;
  const recent = named(await tail(commonDir));
  return recent.size === refs.length ? recent : named(await journalText(commonDir));
}

/** The journal's lines guard wrote (git/journal-seal.ts: none appended by hand), whole. */
async function journalText(commonDir: string): Promise<string> {
  const buf = readRegularSync(journalFile(commonDir));
  return buf ? trustedText(commonDir, buf, 0) : '';
}

/** The journal's tail (the newest entries guard wrote), without reading a large file whole. */
async function tail(commonDir: string): Promise<string> {
  let fd: number;
  try {
    fd = openSync(journalFile(commonDir), constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return '';
  }
  try {
    const st = fstatSync(fd);
    // (not a regular file: journalCheck says so)
    if (!st.isFile()) return '';
    const { size } = st;
    const from = Math.max(0, size - TAIL_BYTES);
    const buf = Buffer.alloc(size - from);
    readSync(fd, buf, 0, buf.length, from);
    // (from the first whole line)
    const skip = from === 0 ? 0 : buf.indexOf(10) + 1;
    return trustedText(commonDir, buf.subarray(skip), from + skip);
  } finally {
    closeSync(fd);
  }
}

/**
 * What `ref` points at in the ref store: a loose file's id, else its line in
 * packed-refs; `null` when it is in neither, `'symbolic'` for a symbolic ref.
 */
async function refValue(
  commonDir: string,
  ref: string,
  packed: (ref: string) => Promise<string | null>,
): Promise<string | null> {
  if (ref.includes('..')) return null;
  const text = (await readRegular(path.join(commonDir, ref)))?.toString('utf8') ?? null;
  if (text !== null) {
    const v = text.trim();
    return OID.test(v) ? v : 'symbolic';
  }
  return packed(ref);
}

/** A journaled tip whose ref now points at another commit: moved outside guard. */
export interface MovedTip extends Tip {
  /** What the ref holds now. */
  now: string;
}

/**
 * The newest refs guard wrote (up to CHECKED) that are gone from the ref
 * store although guard never removed them, and those that point at another
 * commit than guard wrote. guard never moves a ref its journal notes (every
 * such ref is new and unique when fast-import writes it), so a different id
 * is a `git update-ref` from outside. File reads only: one read per ref (its
 * loose file), packed-refs once if needed. A repository with another ref
 * store (reftable) is not checked here: doctor's own for-each-ref sees it.
 */
export async function journalCheck(
  commonDir: string,
  checked = CHECKED,
  whole = false,
): Promise<{ gone: Tip[]; moved: MovedTip[]; odd?: string[]; cut?: Tip[] }> {
  const first = await checkOnce(commonDir, checked, whole);
  if (first.gone.length === 0 && first.moved.length === 0) return first;
  // read again once: a note guard sealed while this read (its `+ REF`, then the ref written) is
  // sealed now; lines past the seal are never read as guard's (journal-seal.ts trustedText)
  return checkOnce(commonDir, checked, whole);
}

async function checkOnce(
  commonDir: string,
  checked: number,
  whole: boolean,
): Promise<{ gone: Tip[]; moved: MovedTip[]; odd?: string[]; cut?: Tip[] }> {
  if (await stat(path.join(commonDir, 'reftable')).catch(() => null))
    return { gone: [], moved: [] };
  // a journal that is there but not a regular file (a FIFO, a device) reads as empty: said, not trusted
  const odd = (
    await Promise.all(
      [journalFile(commonDir), path.join(commonDir, DIR, PINNED_FILE)].map(async (f) => {
        const st = await stat(f).catch(() => null);
        return st && !st.isFile() ? f : null;
      }),
    )
  ).filter((f): f is string => f !== null);
  if (odd.length > 0) return { gone: [], moved: [], odd };
  // (whole: every live entry guard wrote, for doctor; a door reads the tail)
  const wholeText = async () => {
    const buf = readRegularSync(journalFile(commonDir));
    return buf ? trustedText(commonDir, buf, 0) : '';
  };
  const [recent, pins] = await Promise.all([
    whole ? wholeText() : tail(commonDir),
    readPinned(commonDir),
  ]);
  const newest = liveTips(recent).slice(-checked);
  const seen = new Set(newest.map((t) => t.ref));
  // the pinned refs (lane bases) always, whatever their age: their last word is the pinned file's
  const tips = [...liveTips(pins).filter((t) => !seen.has(t.ref)), ...newest];
  const coming = comingRefs(recent);
  if (tips.length === 0) return { gone: [], moved: [] };
  // one read of packed-refs, shared by the lookups that run at once, each a binary search: a
  // Map of every line (or a read each) cost seconds a commit at 100,000 refs
  let packedBuf: Promise<Buffer | null> | null = null;
  const packed = async (ref: string) => {
    const buf = await (packedBuf ??= Promise.resolve(packedRefsBytes(commonDir)));
    return buf ? packedLookup(buf, ref) : null;
  };
  const now = await Promise.all(tips.map((t) => refValue(commonDir, t.ref, packed)));
  const gone: Tip[] = [];
  const moved: MovedTip[] = [];
  const cut: Tip[] = [];
  tips.forEach((t, i) => {
    // a chain where guard left it whose earlier links are gone from the object store (adv6)
    if (now[i] === t.oid && CHAIN_REF.test(t.ref) && linksGone(commonDir, recent, t)) cut.push(t);
    const v = now[i];
    if (v === null || v === undefined) gone.push(t);
    // (a ref whose last word is "coming": guard is writing it now, or was killed before its note;
    // only a ref guard writes again under its name can be coming after a tip: a record's name is
    // new each time, so a `+` line after its tip was written by hand to hide a move, adv4)
    else if (
      v !== t.oid &&
      !(coming.has(t.ref) && rewritten(t.ref)) &&
      !chainAhead(recent, t, v, commonDir)
    )
      moved.push({ ...t, now: v });
  });
  return { gone, moved, ...(cut.length > 0 ? { cut } : {}) };
}

const CHAIN_REF = /^refs\/guard\/sessions\/[^/]+\/[^/]+\/chain$/;

/**
 * Whether the links the journal's `~` lines lead back through from the chain's tip (its links
 * since it was last written whole) are missing from the object store: history cut under a tip that
 * stayed (`.git/shallow`, `git gc --prune=now`, the line taken out again). File reads only.
 */
function linksGone(commonDir: string, text: string, t: Tip): boolean {
  const back = new Map<string, string>();
  for (const line of text.split('\n'))
    if (line.startsWith(`~ ${t.ref} `)) {
      const [from, to] = line.slice(t.ref.length + 3).split(' ');
      if (from && to && from !== '-') back.set(to, from);
    }
  const ids: string[] = [];
  for (let at = back.get(t.oid); at && ids.length < CHECKED && !ids.includes(at); at = back.get(at))
    ids.push(at);
  // (the oldest of them: a cut anywhere between it and the tip takes it with everything older)
  const oldest = ids.at(-1);
  return oldest !== undefined && objectsHere(commonDir, [oldest]).get(oldest) === false;
}

/**
 * The refs under `prefix` the journal says guard wrote and did not remove, with the ids it wrote
 * (the last word on each), from the whole journal; null when there is no journal (not a regular
 * file). For a read that must not trust the ref store alone: a ref removed, moved or planted
 * beside guard's by `git update-ref` is read here as guard wrote it (git/session-base.ts). File
 * reads only, synchronous (the journal is compacted past 1 MB).
 */
export function journaledTipsUnder(commonDir: string, prefix: string): Tip[] | null | 'unreadable' {
  const file = journalFile(commonDir);
  const buf = readRegularSync(file);
  const seal = readSeal(commonDir);
  if (!buf) {
    // a FIFO or a device in its place, or the journal removed while its seal says guard kept one
    // (adv4): the bases it named cannot be read, and the ref files are the agent's to remove
    const there = (() => {
      try {
        statSync(file);
        return true;
      } catch {
        return false;
      }
    })();
    return there || seal !== null ? 'unreadable' : null;
  }
  // rewritten or replaced since guard's last note (journal-seal.ts): its word is not guard's
  if (seal === 'bad' || journalSealProblem(commonDir, file)) return 'unreadable';
  // only the lines that name the prefix (a 1 MB journal parsed whole costs ~12 ms), and of them
  // only those guard wrote: a `- REF` appended by hand does not remove a base (adv4)
  const want = Buffer.from(` ${prefix}`);
  const lines: string[] = [];
  for (let at = buf.indexOf(want); at >= 0; at = buf.indexOf(want, at + 1)) {
    const start = buf.lastIndexOf(10, at) + 1;
    const end = buf.indexOf(10, at);
    if (trustedAt(seal, start))
      lines.push(buf.subarray(start, end < 0 ? buf.length : end).toString('utf8'));
    if (end < 0) break;
    at = end;
  }
  return liveTips(lines.join('\n')).filter((t) => t.ref.startsWith(prefix));
}

/** How many entries of refs/guard/ unjournaledRefs walks at most (a small journal names fewer refs). */
const WALK_MAX = 20_000;

/**
 * Refs under refs/guard/ that the journal has no word on (no tip, no `+` before it was written, no
 * `-` after guard removed it), when they are most of the refs there and the journal is small enough
 * to be read whole (TAIL_BYTES, as a door reads its tail anyway): every ref guard writes is noted as
 * coming before it exists (journaledRefWrite), so a journal that knows fewer of the refs than it
 * does not is not the one guard kept: removed and put back (empty, or with other lines), and with
 * it every word on the refs deleted beside it. (A few hand-made refs beside guard's many are not
 * this: doctor warns about the odd ones.)
 * The refs are walked before the journal is read, so a ref written meanwhile is always found noted.
 * A journal larger than the tail is compared only when it has no seal (git/journal-seal.ts: an
 * older guard's journal until its next note, or one whose seal was removed with it); a sealed one
 * is the seal's to vouch for, so a door at 100,000 refs reads no more than before
 * (docs/reliability/holes5.md). File reads only; [] with another ref store.
 */
export function unjournaledRefs(commonDir: string): string[] {
  const file = journalFile(commonDir);
  let size: number;
  try {
    const st = statSync(file);
    if (!st.isFile()) return [];
    size = st.size;
  } catch {
    return [];
  }
  // a larger journal: its seal speaks for it (journalSealProblem, two small reads); one with no
  // seal (an older guard's, or the seal removed with it) is compared whole, up to UNSEALED_BYTES
  if (size > TAIL_BYTES && readSeal(commonDir) !== null) return [];
  const refs = guardRefNames(commonDir);
  if (refs.length === 0) return [];
  const text = journalBytes(file, UNSEALED_BYTES) + pinnedText(commonDir);
  const known = new Set<string>();
  for (const line of text.split('\n')) {
    const sp = line.indexOf(' ');
    if (sp > 0) known.add(line.slice(sp + 1));
  }
  const unknown = refs.filter((r) => !known.has(r));
  // a few refs it has no word on are hand-made ones (doctor names the odd ones); most of them, its own journal's loss
  return unknown.length > refs.length - unknown.length ? unknown : [];
}

/**
 * How much of a journal with no seal unjournaledRefs reads (its newest bytes): guard compacts its
 * journal past COMPACT_BYTES, so its own is never much larger; one that is was not guard's.
 */
const UNSEALED_BYTES = 4 * COMPACT_BYTES;

/** The last `max` bytes of a file (from a whole line), as text; '' when it cannot be read. */
function journalBytes(file: string, max: number): string {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return '';
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return '';
    const from = Math.max(0, st.size - max);
    const buf = Buffer.alloc(st.size - from);
    readSync(fd, buf, 0, buf.length, from);
    return buf.subarray(from === 0 ? 0 : buf.indexOf(10) + 1).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** The names of the refs under refs/guard/ (loose files, then packed-refs' lines), up to WALK_MAX entries walked. */
function guardRefNames(commonDir: string): string[] {
  try {
    if (statSync(path.join(commonDir, 'reftable'))) return [];
  } catch {
    /* the files backend */
  }
  const names: string[] = [];
  let walked = 0;
  const walk = (rel: string) => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(path.join(commonDir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (++walked > WALK_MAX) return;
      // (git's lock files are not refs)
      if (e.isDirectory()) walk(`${rel}/${e.name}`);
      else if (e.isFile() && !e.name.endsWith('.lock')) names.push(`${rel}/${e.name}`);
    }
  };
  walk('refs/guard');
  const packed = readRegularSync(path.join(commonDir, 'packed-refs'));
  if (packed?.includes(' refs/guard/'))
    for (const line of packed.toString('utf8').split('\n')) {
      const ref = line.slice(line.indexOf(' ') + 1);
      if (!line.startsWith('^') && !line.startsWith('#') && ref.startsWith('refs/guard/'))
        names.push(ref);
    }
  return names;
}

/** The refs whose last word in a journal text is "coming" (`+ REF`, journaledRefWrite): being written, or the writer died before its note. */
function comingRefs(text: string): Set<string> {
  const coming = new Set<string>();
  for (const line of text.split('\n')) {
    const sp = line.indexOf(' ');
    if (sp <= 0) continue;
    if (line.startsWith('+ ')) coming.add(line.slice(2));
    else coming.delete(line.slice(sp + 1));
  }
  return coming;
}

/** The journaled refs gone from the ref store (see journalCheck). */
export async function missingTips(commonDir: string, checked = CHECKED): Promise<Tip[]> {
  return (await journalCheck(commonDir, checked)).gone;
}

/** Make sure guard's folder in the git dir exists (init, recover). */
export async function ensureGuardDir(commonDir: string): Promise<string> {
  const dir = path.join(commonDir, DIR);
  await mkdir(dir, { recursive: true });
  return dir;
}

/**
 * A session chain's links as guard writes them (git/session-chain.ts), `~ <chain> <previous> <link>`
 * (`-` for a first link), noted before the chain is moved to the link (records.ts reads the link's
 * id from fast-import before its `done`) and so before the link's tip: a chain is the one ref guard
 * moves forward from two processes at once (two hook calls of one session), so its last tip line
 * may be the older of two; these say which is newer. Never fails the caller.
 */
export function noteChainLinks(
  commonDir: string | null,
  links: ReadonlyArray<{ chain: string; from: string | null; to: string }>,
): void {
  if (!commonDir || links.length === 0) return;
  note(commonDir, links.map((l) => `~ ${l.chain} ${l.from ?? '-'} ${l.to}\n`).join(''));
}

/**
 * A session chain that holds `now` instead of its journaled tip `t.oid` moved on, not back: `now`
 * is a link guard wrote after it (`~` lines from t.oid to now), or a link being written (the
 * chain's last word is `+`, and `now` was never its value). A chain moved back to one of its
 * earlier links, or anywhere else, is moved (journalCheck). Not a chain: false.
 */
function chainAhead(text: string, t: Tip, now: string, commonDir: string): boolean {
  if (!/^refs\/guard\/sessions\/[^/]+\/[^/]+\/chain$/.test(t.ref)) return false;
  const next = new Map<string, string[]>();
  const was = new Set<string>();
  let coming = false;
  for (const line of text.split('\n')) {
    if (line === `+ ${t.ref}`) coming = true;
    else if (line.endsWith(` ${t.ref}`) && !line.startsWith('~ ')) {
      coming = false;
      was.add(line.slice(0, line.indexOf(' ')));
    } else if (line.startsWith(`~ ${t.ref} `)) {
      const [from, to] = line.slice(t.ref.length + 3).split(' ');
      if (from && to) next.set(from, [...(next.get(from) ?? []), to]);
    }
  }
  const seen = new Set([t.oid]);
  for (let todo = [t.oid]; todo.length > 0;) {
    const at = todo.pop()!;
    if (at === now) return true;
    for (const n of next.get(at) ?? []) if (!seen.has(n)) (todo.push(n), seen.add(n));
  }
  // a link being written (or its writer killed before its `~` note): only one that continues a
  // link guard wrote, read from its loose object (fast-import leaves a small import loose); a
  // commit that does not (a fresh root hiding the session, adv6) is a move like any other
  if (!coming || was.has(now)) return false;
  // (links of calls racing this read, each on the one before: a few loose first parents back)
  let at: string | null = now;
  for (let i = 0; i < 16 && at; i++) {
    at = looseFirstParent(commonDir, at);
    if (at !== null && seen.has(at)) return true;
  }
  return false;
}

/** A loose commit's first parent ('' for none); null when the object is not loose, or not a commit. File reads only. */
function looseFirstParent(commonDir: string, oid: string): string | null {
  const buf = readRegularSync(path.join(commonDir, 'objects', oid.slice(0, 2), oid.slice(2)));
  if (!buf) return null;
  try {
    const text = inflateSync(buf).subarray(0, 300).toString('latin1');
    if (!text.startsWith('commit ')) return null;
    return /\ntree [0-9a-f]+\nparent ([0-9a-f]+)\n/.exec(text.slice(text.indexOf('\0')))?.[1] ?? '';
  } catch {
    return null;
  }
}
