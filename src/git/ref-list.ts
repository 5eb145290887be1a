/**
 * refs/guard/ as the files ref store holds it, read without a process and
 * without splitting every name (issue 22: 100,000 refs after a month of
 * heavy use). packed-refs is sorted by name (its header says so), so the
 * refs under a prefix are one byte range, found by binary search; record
 * names start with their time, so the newest N are the range's last N
 * lines. Loose refs (under ~1,000: guard packs them past a count) are read
 * from their folders and win over packed lines, as in git.
 *
 * This reads the same two sources git's own `for-each-ref` reads, so it
 * shows and hides nothing git would not. Whenever the store is not plainly
 * the files backend as git writes it (reftable, a packed-refs without its
 * `sorted` header, a loose file that is not an object id, a name git would
 * not take, a folder that cannot be read), `readRefStore` returns null and
 * the caller lists with `git for-each-ref` as before.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { readRegular } from './journal.js';
import { packedLookup, packedLowerBound, packedRefsBytes } from './packed-refs.js';

const OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
/** A loose ref's name part git takes without question (no `.lock`, no leading dot, no `..`). */
const NAME_PART = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

export interface RefName {
  ref: string;
  oid: string;
}

export interface RefStore {
  /** How many refs are under `prefix` (a folder: ends with `/`). */
  count(prefix: string): number;
  /** count() of each prefix, in order, reading each packed line once however the prefixes nest. */
  counts(prefixes: readonly string[]): number[];
  /** The `n` greatest names under `prefix`, greatest first (record names: newest first). */
  newest(prefix: string, n: number): RefName[];
  /** Every ref under `prefix`, by name (for a prefix known to be small). */
  all(prefix: string): RefName[];
  /** The least ref name in [from, to) (git's byte order), or null: a walk from folder to folder. */
  firstIn(from: string, to: string): string | null;
  /** The greatest ref name in [from, to), or null. */
  lastIn(from: string, to: string): string | null;
  /** Every loose ref under the root read. */
  loose: readonly RefName[];
}

/** The names after the last one starting with `prefix` sort at or after this key. */
function after(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/** Loose refs under `dir` (`ref` its name), or null on anything git might read otherwise. */
function looseRefs(commonDir: string, ref: string, out: Map<string, string>): boolean {
  let entries;
  try {
    entries = readdirSync(path.join(commonDir, ref), { withFileTypes: true });
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT';
  }
  for (const e of entries) {
    if (!NAME_PART.test(e.name) || e.name.endsWith('.lock')) return false;
    const name = `${ref}${e.name}`;
    if (e.isDirectory()) {
      if (!looseRefs(commonDir, `${name}/`, out)) return false;
    } else if (e.isFile()) out.set(name, '');
    else return false;
  }
  return true;
}

/**
 * refs/guard/ (or `root`) from packed-refs and the loose files; null when
 * only git can say (see the module's comment).
 */
export async function readRefStore(
  commonDir: string,
  root = 'refs/guard/',
): Promise<RefStore | null> {
  try {
    if (statSync(path.join(commonDir, 'reftable'), { throwIfNoEntry: false })) return null;
  } catch {
    return null;
  }
  const looseNames = new Map<string, string>();
  if (!looseRefs(commonDir, root, looseNames)) return null;
  const contents = await Promise.all(
    [...looseNames.keys()].map((r) => readRegular(path.join(commonDir, r))),
  );
  let i = 0;
  for (const r of looseNames.keys()) {
    const v = contents[i++]?.toString('latin1').trim() ?? '';
    if (!OID.test(v)) return null; // a symbolic or broken ref: git's own answer
    looseNames.set(r, v);
  }
  const packedFile = path.join(commonDir, 'packed-refs');
  const exists = statSync(packedFile, { throwIfNoEntry: false }) !== undefined;
  const buf = exists ? packedRefsBytes(commonDir) : Buffer.alloc(0);
  if (buf === null) return null;
  if (buf.length > 0) {
    const header = buf.subarray(0, Math.max(0, buf.indexOf(10))).toString('latin1');
    if (!header.startsWith('# pack-refs with:') || !/ sorted( |$)/.test(header)) return null;
  }
  return storeOf(buf, looseNames);
}

/** The ref lines in [start, end) of packed-refs, from the last back, until `take` says stop. */
function linesBack(buf: Buffer, start: number, end: number, take: (r: RefName) => boolean): void {
  let e = end;
  while (e > start) {
    const s = e >= 2 ? buf.lastIndexOf(10, e - 2) + 1 : 0;
    const line = s < start ? start : s;
    if (buf[line] !== 0x5e && buf[line] !== 0x23) {
      const sp = buf.indexOf(32, line);
      if (sp > line && sp < e) {
        const r = {
          oid: buf.toString('latin1', line, sp),
          ref: buf.toString('utf8', sp + 1, buf[e - 1] === 10 ? e - 1 : e),
        };
        if (!take(r)) return;
      }
    }
    e = line;
  }
}

/** Ref lines (not `^` peeled lines) in [start, end). */
function countLines(buf: Buffer, start: number, end: number): number {
  let n = 0;
  for (let s = start; s < end;) {
    const eol = buf.indexOf(10, s);
    const next = eol < 0 || eol >= end ? end : eol + 1;
    if (buf[s] !== 0x5e && buf[s] !== 0x23) n++;
    s = next;
  }
  return n;
}

function storeOf(buf: Buffer, loose: Map<string, string>): RefStore {
  const range = (prefix: string) => [
    packedLowerBound(buf, prefix),
    packedLowerBound(buf, after(prefix)),
  ];
  const looseUnder = (prefix: string) =>
    [...loose].filter(([r]) => r.startsWith(prefix)).map(([ref, oid]) => ({ ref, oid }));
  const merged = (prefix: string, n: number) => {
    const [s, e] = range(prefix);
    const mine = looseUnder(prefix);
    const seen = new Set(mine.map((r) => r.ref));
    const out: RefName[] = [...mine];
    let packed = 0;
    // the n greatest packed names, plus one for each loose ref that may shadow one
    linesBack(buf, s!, e!, (r) => {
      if (!seen.has(r.ref)) out.push(r);
      return ++packed < n + mine.length;
    });
    return out.sort((a, b) => (a.ref < b.ref ? 1 : a.ref > b.ref ? -1 : 0));
  };
  /** Each prefix's packed lines, from the lines between consecutive range ends (each counted once). */
  function counts(prefixes: readonly string[]): number[] {
    const ranges = prefixes.map(range);
    const ends = [...new Set(ranges.flat())].sort((a, b) => a - b);
    const upTo = new Map<number, number>([[ends[0]!, 0]]);
    for (let i = 1; i < ends.length; i++)
      upTo.set(ends[i]!, upTo.get(ends[i - 1]!)! + countLines(buf, ends[i - 1]!, ends[i]!));
    return prefixes.map((prefix, i) => {
      const [s, e] = ranges[i]!;
      const mine = looseUnder(prefix);
      // a loose ref that is packed too counts once (a binary search each)
      const shadowed = mine.filter((r) => packedLookup(buf, r.ref) !== null).length;
      return upTo.get(e!)! - upTo.get(s!)! + mine.length - shadowed;
    });
  }
  /** The first (or last) name in [from, to), packed or loose. */
  function endIn(from: string, to: string, last: boolean): string | null {
    const s = packedLowerBound(buf, from);
    const e = packedLowerBound(buf, to);
    let packed: string | null = null;
    if (last) linesBack(buf, s, e, (r) => ((packed = r.ref), false));
    else
      for (let at = s; at < e && packed === null;) {
        const eol = buf.indexOf(10, at);
        const next = eol < 0 || eol >= e ? e : eol + 1;
        const sp = buf.indexOf(32, at);
        if (buf[at] !== 0x5e && buf[at] !== 0x23 && sp > at && sp < next)
          packed = buf.toString('utf8', sp + 1, buf[next - 1] === 10 ? next - 1 : next);
        at = next;
      }
    let best: string | null = packed;
    for (const r of loose.keys())
      if (r >= from && r < to && (best === null || (last ? r > best : r < best))) best = r;
    return best;
  }
  return {
    firstIn: (from, to) => endIn(from, to, false),
    lastIn: (from, to) => endIn(from, to, true),
    count: (prefix) => counts([prefix])[0]!,
    counts,
    newest: (prefix, n) => (n <= 0 ? [] : merged(prefix, n).slice(0, n)),
    all: (prefix) => merged(prefix, Number.MAX_SAFE_INTEGER).reverse(),
    loose: [...loose].map(([ref, oid]) => ({ ref, oid })),
  };
}
