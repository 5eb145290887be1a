import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  statSync,
} from 'node:fs';
import path from 'node:path';

const OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * A ref's oid in the bytes of packed-refs. git writes it sorted by name and
 * says so in its header (`# pack-refs with: ... sorted`): then a binary search
 * over the bytes (git's own byte order), about 25 probes at 100,000 refs;
 * otherwise a search for " <ref>\n".
 */
export function packedLookup(buf: Buffer, ref: string): string | null {
  const want = Buffer.from(ref, 'utf8');
  const sorted =
    buf[0] === 0x23 &&
    / sorted( |$)/m.test(buf.subarray(0, Math.max(0, buf.indexOf(10))).toString('latin1'));
  if (!sorted) {
    const at = buf.indexOf(Buffer.concat([Buffer.from(' '), want, Buffer.from('\n')]));
    if (at < 0) return null;
    const oid = buf.subarray(buf.lastIndexOf(10, at) + 1, at).toString('latin1');
    return OID.test(oid) ? oid : null;
  }
  // the first ref line from the lower bound (which may start at the header or a peeled line):
  // the ref itself, or it is not there
  let s = packedLowerBound(buf, ref);
  while (s < buf.length && (buf[s] === 0x23 || buf[s] === 0x5e)) {
    const e = buf.indexOf(10, s);
    s = e < 0 ? buf.length : e + 1;
  }
  if (s >= buf.length) return null;
  const eol = buf.indexOf(10, s);
  const end = eol < 0 ? buf.length : eol;
  const sp = buf.indexOf(32, s);
  if (sp < 0 || sp > end || !buf.subarray(sp + 1, end).equals(want)) return null;
  const oid = buf.subarray(s, sp).toString('latin1');
  return OID.test(oid) ? oid : null;
}

export interface PackedRef {
  ref: string;
  oid: string;
}

const WINDOW = 64 * 1024;

/**
 * The refs under `prefix` in a packed-refs file (at most `max`), read with
 * positional reads: where git says the file is sorted, a binary search over
 * its bytes reads a few 8 kB pieces, so a hot path can ask about one folder
 * of refs without reading 10 MB (100,000 refs). An unsorted file, or a line
 * longer than a piece, is read whole. [] when there is no file.
 */
export function packedUnder(
  file: string,
  prefix: string,
  max = 1000,
  /** (the size read whole and scanned; tests make it small) */
  window = WINDOW,
): PackedRef[] {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  try {
    const size = fstatSync(fd).size;
    const want = Buffer.from(prefix, 'utf8');
    const head = readAt(fd, 0, Math.min(size, 512));
    const eol = head.indexOf(10);
    const sorted =
      head[0] === 0x23 &&
      eol >= 0 &&
      / sorted( |$)/m.test(head.subarray(0, eol).toString('latin1'));
    if (!sorted || size <= window) return scanFrom(readAt(fd, 0, size), want, max, true).refs;
    const lo = lowerBound(fd, size, want, { lo: head[0] === 0x23 ? eol + 1 : 0, window });
    if (lo === null) return scanFrom(readAt(fd, 0, size), want, max, true).refs;
    // from there, a window at a time until past the prefix
    const out: PackedRef[] = [];
    for (let at = lo; at < size && out.length < max;) {
      const piece = readAt(fd, at, Math.min(window, size - at));
      const last = at + piece.length >= size ? piece.length : piece.lastIndexOf(10) + 1;
      if (last === 0) return scanFrom(readAt(fd, 0, size), want, max, true).refs;
      const found = scanFrom(piece.subarray(0, last), want, max - out.length, false);
      out.push(...found.refs);
      if (found.past) break;
      at += last;
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

function readAt(fd: number, at: number, length: number): Buffer {
  const b = Buffer.allocUnsafe(length);
  let n = 0;
  while (n < length) {
    const r = readSync(fd, b, n, length - n, at + n);
    if (r === 0) break;
    n += r;
  }
  return b.subarray(0, n);
}

/**
 * A line start at or before the first ref >= `want` (all refs before it are smaller), or null
 * when a line does not fit a piece. `lo` is always a line start.
 */
function lowerBound(
  fd: number,
  size: number,
  want: Buffer,
  from: { lo: number; window: number },
): number | null {
  let { lo } = from;
  const { window } = from;
  let hi = size;
  while (hi - lo > window) {
    const mid = (lo + hi) >>> 1;
    const piece = readAt(fd, mid - 1, Math.min(8192, size - mid + 1));
    // the first ref line starting at or after mid (peeled `^` lines are not refs)
    let s = piece[0] === 10 ? 1 : piece.indexOf(10) + 1;
    if (s === 0) return null;
    while (s < piece.length && piece[s] === 0x5e) {
      const e = piece.indexOf(10, s);
      if (e < 0) return null;
      s = e + 1;
    }
    if (mid - 1 + s >= hi) {
      hi = mid; // no ref line starts in [mid, hi): the answer starts before mid (or is hi, found by the scan)
      continue;
    }
    const e = piece.indexOf(10, s);
    const sp = piece.indexOf(32, s);
    if (e < 0 || sp < 0 || sp > e) return null;
    if (Buffer.compare(piece.subarray(sp + 1, e), want) < 0) lo = mid - 1 + e + 1;
    else hi = mid - 1 + s;
  }
  return lo;
}

/**
 * Where the first ref line whose name sorts at or after `key` starts in a
 * sorted packed-refs (git's byte order), or the file's length: the refs
 * under a prefix are the lines from its lower bound to the next prefix's
 * (git/ref-list.ts). Header and peeled `^` lines are stepped over.
 */
export function packedLowerBound(buf: Buffer, key: string): number {
  const want = Buffer.from(key, 'utf8');
  // lo and hi are line starts; every ref line before lo sorts before the key, none from hi on
  let lo = 0;
  let hi = buf.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const start = mid === 0 ? 0 : buf.lastIndexOf(10, mid - 1) + 1;
    let s = start;
    while (s < hi && (buf[s] === 0x23 || buf[s] === 0x5e)) {
      const e = buf.indexOf(10, s);
      s = e < 0 ? buf.length : e + 1;
    }
    if (s >= hi) {
      hi = start;
      continue;
    }
    const eol = buf.indexOf(10, s);
    const end = eol < 0 ? buf.length : eol;
    const sp = buf.indexOf(32, s);
    const name = sp < 0 || sp > end ? buf.subarray(s, end) : buf.subarray(sp + 1, end);
    if (Buffer.compare(name, want) < 0) lo = Math.min(hi, end + 1);
    else hi = start;
  }
  return lo;
}

/** The refs under `want` in whole lines of `buf`: all of it when unsorted, else until past it (`past`). */
function scanFrom(
  buf: Buffer,
  want: Buffer,
  max: number,
  whole: boolean,
): { refs: PackedRef[]; past: boolean } {
  const out: PackedRef[] = [];
  let past = false;
  let s = 0;
  while (s < buf.length && out.length < max) {
    let e = buf.indexOf(10, s);
    if (e < 0) e = buf.length;
    if (buf[s] !== 0x23 && buf[s] !== 0x5e) {
      const sp = buf.indexOf(32, s);
      if (sp > s && sp < e) {
        const name = buf.subarray(sp + 1, e);
        const under = name.length >= want.length && name.subarray(0, want.length).equals(want);
        if (under) {
          const oid = buf.subarray(s, sp).toString('latin1');
          if (OID.test(oid)) out.push({ ref: name.toString('utf8'), oid });
        } else if (!whole && Buffer.compare(name, want) > 0) {
          past = true;
          break;
        }
      }
    }
    s = e + 1;
  }
  return { refs: out, past: past || out.length >= max };
}

/**
 * The refs in one flat folder of refs (`prefix` ends in `/`), from the ref files alone: its loose
 * refs, then packed-refs (a loose ref wins, as in git), sorted by name as for-each-ref sorts them.
 * Null where the files cannot say it for certain (a folder inside it, a loose file that is not an
 * object id, another ref store, any error): the caller asks git. Loose before packed, as git
 * reads them, so a concurrent `pack-refs --prune` cannot hide a ref from both reads.
 */
export function refsInFolder(commonDir: string, prefix: string): PackedRef[] | null {
  try {
    if (existsSync(path.join(commonDir, 'reftable'))) return null;
    let names: string[] = [];
    try {
      names = readdirSync(path.join(commonDir, prefix));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return null;
    }
    const loose: PackedRef[] = [];
    // (a `.lock` is a ref being written: git does not read it either)
    for (const n of names.filter((n) => !n.endsWith('.lock'))) {
      const oid = readFileSync(path.join(commonDir, prefix, n), 'latin1').trim();
      if (!OID.test(oid)) return null;
      loose.push({ ref: prefix + n, oid });
    }
    const packed = packedUnder(path.join(commonDir, 'packed-refs'), prefix).filter(
      (p) => !loose.some((l) => l.ref === p.ref),
    );
    if (packed.some((p) => p.ref.slice(prefix.length).includes('/'))) return null;
    return [...loose, ...packed].sort((a, b) =>
      Buffer.compare(Buffer.from(a.ref), Buffer.from(b.ref)),
    );
  } catch {
    return null;
  }
}

let kept: { file: string; id: string; buf: Buffer | null } | null = null;

/**
 * The bytes of `<commonDir>/packed-refs` (null: absent, or not a regular
 * file), read once per process while the file stays the same (device,
 * inode, size, times): at 100,000 refs it is ~10 MB, and `guard log` and
 * `doctor` read it twice otherwise (the journal check, git/ref-list.ts), each
 * read ~10 ms of CPU on a loaded machine. Opened without blocking and checked
 * on the open file, as journal.ts's readRegular (a FIFO planted there would
 * hang the read).
 */
export function packedRefsBytes(commonDir: string): Buffer | null {
  const file = path.join(commonDir, 'packed-refs');
  const st = statSync(file, { throwIfNoEntry: false, bigint: true });
  if (!st) return null;
  const id = `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  if (kept && kept.file === file && kept.id === id) return kept.buf;
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  let buf: Buffer | null = null;
  try {
    buf = fstatSync(fd).isFile() ? readFileSync(fd) : null;
  } catch {
    buf = null;
  } finally {
    closeSync(fd);
  }
  kept = { file, id, buf };
  return buf;
}
