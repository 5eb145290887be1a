import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { randomHex, sha256Hex } from '../core/digest.js';

/**
 * The journal's seal (docs/reliability/holes5.md): what guard last appended to its journal
 * (`<commonDir>/guard/journal`, git/journal.ts), kept beside it where `rm -r .git/guard*` does not
 * reach, so that the journal alone cannot be rewritten or added to without a word:
 *
 *   <commonDir>/info/guard-journal-seal     "v1 <size> <sha-256 of the 256 bytes before it> [<from>-<to> ...]"
 *
 * Every note guard appends to the journal takes the seal's lock, appends, and seals the journal's
 * new size. So
 * - a journal rewritten (`git for-each-ref ... > .git/guard/journal` after deleting refs, `sed -i`,
 *   a file put back in its place) is shorter than the seal says, or has other bytes where the
 *   sealed part ends: every door says so (journalSealProblem). (Not its inode: a repository copied
 *   or restored from a backup is still guard's);
 * - lines appended by hand (`echo "- REF" >> .git/guard/journal`) lie past the sealed size, or in
 *   a range the next note found there unsealed (kept in the seal as foreign): readers skip them
 *   (trustedLines), so such a line neither hides a removed ref nor plants a tip.
 * Cost: per note one lock file, one small read and one renamed write; per door one small read and
 * one 256-byte positional read. What it cannot stop: an agent that reads this and writes the seal
 * too (one uid owns both files); that needs a witness off the machine (`guard ci`, a pushed copy of
 * `refs/guard/*`).
 */
/**
 * Which file a seal is for: the journal, or the pinned file beside it (`<commonDir>/guard/journal-pinned`,
 * the refs kept for long: lane bases, read whole by every door), sealed the same way in its own
 * `info/guard-pinned-seal` (holes6: a `- REF` appended there hid a lane base removed by hand).
 */
export type SealOf = 'journal' | 'pinned';
const SEALS: Record<SealOf, string> = {
  journal: path.join('info', 'guard-journal-seal'),
  pinned: path.join('info', 'guard-pinned-seal'),
};
/** The file a seal describes, by its name in guard's folder. */
export const sealOfFile = (name: string): SealOf | null =>
  name === 'journal' ? 'journal' : name === 'journal-pinned' ? 'pinned' : null;
const WINDOW = 256;
/** Foreign ranges kept (the newest). */
const FOREIGN_MAX = 32;
/** A lock older than this was left by a killed guard: taken over. */
const STALE_MS = 5_000;
const WAIT_MS = 2_000;

export interface Seal {
  size: number;
  hash: string;
  /** Byte ranges [from, to) of the journal found appended outside guard's notes. */
  foreign: Array<[number, number]>;
}

const sealPath = (commonDir: string, of: SealOf) => path.join(commonDir, SEALS[of]);

function parseSeal(text: string): Seal | null {
  const m = /^v1 (\d+) ([0-9a-f]{64})((?: \d+-\d+)*)\s*$/.exec(text);
  if (!m) return null;
  const foreign = m[3]!
    .trim()
    .split(' ')
    .filter(Boolean)
    .map((r) => r.split('-').map(Number) as [number, number]);
  return { size: Number(m[1]), hash: m[2]!, foreign };
}

/** The seal, null when there is none (a journal from before seals, or none yet), 'bad' when it is there but unreadable as one. */
export function readSeal(commonDir: string, of: SealOf = 'journal'): Seal | null | 'bad' {
  let text: string;
  try {
    const fd = openSync(sealPath(commonDir, of), constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      if (!fstatSync(fd).isFile()) return 'bad';
      text = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? null : 'bad';
  }
  return parseSeal(text) ?? 'bad';
}

/** The digest of the journal's bytes just before `size` (read from the open journal). */
export function windowHash(fd: number, size: number): string {
  const from = Math.max(0, size - WINDOW);
  const buf = Buffer.alloc(size - from);
  let got = 0;
  while (got < buf.length) {
    const n = readSync(fd, buf, got, buf.length - got, from + got);
    if (n <= 0) break;
    got += n;
  }
  return sha256Hex(buf.subarray(0, got));
}

/** Whether the open journal (`size` bytes now) is the one `seal` describes, grown by appends only. */
export function sealHolds(seal: Seal, fd: number, size: number): boolean {
  return size >= seal.size && windowHash(fd, seal.size) === seal.hash;
}

function writeSeal(commonDir: string, seal: Seal, of: SealOf): void {
  const file = sealPath(commonDir, of);
  const tmp = `${file}.${process.pid}-${randomHex(4)}`;
  const ranges = seal.foreign
    .slice(-FOREIGN_MAX)
    .map(([a, b]) => ` ${a}-${b}`)
    .join('');
  try {
    writeFileSync(tmp, `v1 ${seal.size} ${seal.hash}${ranges}\n`);
    renameSync(tmp, file);
  } catch {
    rmSync(tmp, { force: true });
  }
}

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Take the seal's lock (waiting for another guard's note, taking over one a killed guard left); the release. */
export function lockSeal(commonDir: string, of: SealOf = 'journal'): () => void {
  const file = `${sealPath(commonDir, of)}.lock`;
  const until = Date.now() + WAIT_MS;
  for (let tries = 0; ; tries++) {
    try {
      closeSync(openSync(file, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o644));
      return () => rmSync(file, { force: true });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && tries === 0) {
        mkdirSync(path.dirname(file), { recursive: true });
        continue;
      }
      if (code !== 'EEXIST') return () => {};
      let age = 0;
      try {
        age = Date.now() - statSync(file).mtimeMs;
      } catch {
        continue;
      }
      if (age > STALE_MS || Date.now() > until) {
        try {
          unlinkSync(file);
        } catch {
          /* another took it over */
        }
        continue;
      }
      sleep(1);
    }
  }
}

/**
 * Append `text` to the open journal `fd` and seal it, under the seal's lock. Bytes found past the
 * seal before this note (appended outside guard) are kept as foreign; a journal the seal does not
 * describe (rewritten, replaced) is appended to but not sealed, so the doors keep saying so until
 * a person runs `guard recover` (resealJournal). A journal with no seal yet (written before seals)
 * is sealed as it is.
 */
export function sealedAppend(
  commonDir: string,
  fd: number,
  text: string,
  where: { file?: string; of?: SealOf } = {},
): void {
  const { file, of = 'journal' } = where;
  const release = lockSeal(commonDir, of);
  try {
    const before = fstatSync(fd).size;
    const seal = readSeal(commonDir, of);
    if (seal === 'bad' || (seal && !sealHolds(seal, fd, before))) {
      writeSync(fd, text);
      return;
    }
    const foreign = seal ? [...seal.foreign] : [];
    if (seal && seal.size < before) foreign.push([seal.size, before]);
    // more foreign ranges than the seal keeps: forgetting the oldest would make its lines read as
    // guard's (a `- REF` appended by hand, then 32 appends each followed by a note: adv6), so
    // the foreign bytes are taken out of the journal instead, and it is sealed with none
    if (foreign.length > FOREIGN_MAX && file)
      return void dropForeign(commonDir, { fd, file, of }, foreign, text);
    writeSync(fd, text);
    const size = fstatSync(fd).size;
    writeSeal(commonDir, { size, hash: windowHash(fd, size), foreign }, of);
  } finally {
    release();
  }
}

/** The journal written again without its foreign ranges, `text` appended, renamed in place and sealed (under the seal's lock). */
function dropForeign(
  commonDir: string,
  journal: { fd: number; file: string; of: SealOf },
  foreign: ReadonlyArray<[number, number]>,
  text: string,
): void {
  const { fd, file, of } = journal;
  const size = fstatSync(fd).size;
  const buf = Buffer.alloc(size);
  for (let got = 0; got < size;) {
    const n = readSync(fd, buf, got, size - got, got);
    if (n <= 0) break;
    got += n;
  }
  const parts: Buffer[] = [];
  let at = 0;
  for (const [a, b] of [...foreign].sort((x, y) => x[0] - y[0])) {
    if (a > at) parts.push(buf.subarray(at, a));
    at = Math.max(at, b);
  }
  parts.push(buf.subarray(at), Buffer.from(text));
  const out = Buffer.concat(parts);
  const tmp = `${file}.${process.pid}-${randomHex(4)}`;
  writeFileSync(tmp, out);
  renameSync(tmp, file);
  const from = Math.max(0, out.length - WINDOW);
  writeSeal(commonDir, { size: out.length, hash: sha256Hex(out.subarray(from)), foreign: [] }, of);
}

/**
 * Seal the journal as it is now, with no foreign range (a person's `guard recover`, or a journal
 * guard just wrote whole: compaction). `keepForeign` keeps the ranges already noted (compaction
 * drops their lines instead).
 */
export function resealJournal(commonDir: string, journal: string, of: SealOf = 'journal'): void {
  let fd: number;
  try {
    fd = openSync(journal, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return;
  }
  try {
    const st = fstatSync(fd);
    if (st.isFile())
      writeSeal(commonDir, { size: st.size, hash: windowHash(fd, st.size), foreign: [] }, of);
  } finally {
    closeSync(fd);
  }
}

/** Remove a seal (`guard recover` starting a file again: its next note seals it as it then is). */
export function dropSeal(commonDir: string, of: SealOf): void {
  rmSync(sealPath(commonDir, of), { force: true });
}

/** What is wrong with the journal against its seal: null when it holds (or there is no seal). File reads only. */
export function journalSealProblem(
  commonDir: string,
  journal: string,
  of: SealOf = 'journal',
): string | null {
  const seal = readSeal(commonDir, of);
  if (seal === null) return null;
  if (seal === 'bad')
    return `its seal (.git/${SEALS[of]}) was replaced by something guard did not write`;
  let fd: number;
  try {
    fd = openSync(journal, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    // (no journal: journalWiped says so)
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return null;
    if (sealHolds(seal, fd, st.size)) return null;
    // a note sealed between the two reads: read again once
    const again = readSeal(commonDir, of);
    if (again && again !== 'bad' && sealHolds(again, fd, fstatSync(fd).size)) return null;
    return st.size < seal.size
      ? `it is shorter than guard left it (${st.size} bytes, guard's seal says ${seal.size})`
      : 'it is not the file guard appended to (another file put in its place, or lines guard wrote changed)';
  } finally {
    closeSync(fd);
  }
}

/**
 * The journal's lines guard wrote, from `buf` (the journal's bytes from offset `at`): lines past
 * the seal, or in a foreign range, are dropped. With no seal, every line. (Not even a `+ REF` past
 * the seal while the seal's lock is there: the lock is a file the agent can make too, and a `+`
 * line it appended beside it read as "coming" let a chain move to anything unseen (adv6). A note
 * is sealed before guard writes the ref it names, so a reader that raced it finds it sealed when
 * it reads again: journalCheck does.)
 */
export function trustedText(
  commonDir: string,
  buf: Buffer,
  at: number,
  of: SealOf = 'journal',
): string {
  const seal = readSeal(commonDir, of);
  if (seal === null || seal === 'bad') return buf.toString('utf8');
  const untrusted = (from: number) =>
    from >= seal.size || seal.foreign.some(([a, b]) => from >= a && from < b);
  if (!seal.foreign.some(([, b]) => b > at) && at + buf.length <= seal.size)
    return buf.toString('utf8');
  const out: string[] = [];
  let start = 0;
  while (start < buf.length) {
    let end = buf.indexOf(10, start);
    if (end < 0) end = buf.length;
    const line = buf.subarray(start, end).toString('utf8');
    if (!untrusted(at + start)) out.push(line);
    start = end + 1;
  }
  return out.join('\n');
}

/** Whether the line starting at journal offset `from` is one guard wrote (see trustedText), for a reader that scans bytes. */
export function trustedAt(seal: Seal | null | 'bad', from: number): boolean {
  if (seal === null || seal === 'bad') return true;
  return from < seal.size && !seal.foreign.some(([a, b]) => from >= a && from < b);
}
