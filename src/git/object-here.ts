import { closeSync, constants, openSync, readSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Whether objects are in the object store, by file reads only (no git process): a loose file, else
 * a binary search of each pack's index (version 2: a fan-out table, then the sorted names). For a
 * door that must notice commits gone behind a ref that stayed (a chain's earlier links after
 * `.git/shallow` and `git gc --prune=now`, adv6). Anything it cannot read (a version 1 index, an
 * alternate object store) answers "here": it never makes an alarm of what it does not know.
 */
export function objectsHere(commonDir: string, oids: readonly string[]): Map<string, boolean> {
  const objects = path.join(commonDir, 'objects');
  const out = new Map<string, boolean>();
  let packs: Array<{ fd: number; fanout: Buffer }> | null = null;
  try {
    for (const oid of oids) {
      if (out.has(oid)) continue;
      if (isFile(path.join(objects, oid.slice(0, 2), oid.slice(2)))) {
        out.set(oid, true);
        continue;
      }
      packs ??= openPacks(objects);
      if (packs === null || hasAlternates(objects)) {
        out.set(oid, true);
        continue;
      }
      const name = Buffer.from(oid, 'hex');
      // (a SHA-256 repository's index holds 32-byte names: not read here)
      out.set(oid, name.length !== 20 || packs.some((p) => inPack(p, name)));
    }
  } finally {
    for (const p of packs ?? []) closeSync(p.fd);
  }
  return out;
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

function hasAlternates(objects: string): boolean {
  return isFile(path.join(objects, 'info', 'alternates'));
}

/** Each pack index's fan-out table; null when one is not a version 2 index. */
function openPacks(objects: string): Array<{ fd: number; fanout: Buffer }> | null {
  const dir = path.join(objects, 'pack');
  let names: string[];
  try {
    names = readdirSync(dir).filter((f) => f.endsWith('.idx'));
  } catch {
    return [];
  }
  const out: Array<{ fd: number; fanout: Buffer }> = [];
  for (const f of names) {
    const fd = openSync(path.join(dir, f), constants.O_RDONLY | constants.O_NONBLOCK);
    const head = Buffer.alloc(8 + 1024);
    if (
      readSync(fd, head, 0, head.length, 0) !== head.length ||
      head.readUInt32BE(0) !== 0xff744f63
    ) {
      closeSync(fd);
      for (const p of out) closeSync(p.fd);
      return null;
    }
    out.push({ fd, fanout: head.subarray(8) });
  }
  return out;
}

function inPack(p: { fd: number; fanout: Buffer }, name: Buffer): boolean {
  const first = name[0]!;
  let lo = first === 0 ? 0 : p.fanout.readUInt32BE((first - 1) * 4);
  let hi = p.fanout.readUInt32BE(first * 4);
  const at = Buffer.alloc(name.length);
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    readSync(p.fd, at, 0, at.length, 8 + 1024 + mid * name.length);
    const c = at.compare(name);
    if (c === 0) return true;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return false;
}
