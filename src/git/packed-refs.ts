import { closeSync, constants, fstatSync, openSync, readFileSync, statSync } from 'node:fs';
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
  let lo = 0;
  let hi = buf.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const start = mid === 0 ? 0 : buf.lastIndexOf(10, mid - 1) + 1;
    // the first ref line at or after `start` (the header and peeled `^` lines are not refs)
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
    if (sp < 0 || sp > end) return null; // not packed-refs as git writes it
    const cmp = Buffer.compare(buf.subarray(sp + 1, end), want);
    if (cmp === 0) {
      const oid = buf.subarray(s, sp).toString('latin1');
      return OID.test(oid) ? oid : null;
    }
    if (cmp < 0) lo = end + 1;
    else hi = start;
  }
  return null;
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
