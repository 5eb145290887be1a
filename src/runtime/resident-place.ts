import { createRequire } from 'node:module';
import type * as Fs from 'node:fs';

/**
 * Where the resident hook server of this build listens, and what both ends
 * check of it: shared by the small client (cli/hook-client.ts, which loads
 * nothing else of guard) and the server (cli/resident-server.ts).
 *
 * One server per user and per build: its socket is `g-<hash>.sock` in a
 * folder of the user's own (GUARD_RESIDENT_DIR, else
 * `$XDG_RUNTIME_DIR/guard-resident`, else `$TMPDIR/guard-resident-<uid>`),
 * which must be a real folder owned by the uid with no permission for group
 * or others; the hash names the build (the bundle's and the server's files,
 * by device, inode, size and time), the node binary and its version: a
 * rebuilt or reinstalled guard, or another node, has another socket.
 */

// node's own modules through require: an ES import of a built-in runs every lazy getter behind it
const require = createRequire(import.meta.url);
const fs: typeof Fs = require('node:fs');

/** The wire protocol's version: a reply of any other is not answered. */
export const PROTOCOL = 1;

/** The folder the sockets live in; null where there is no uid (not a POSIX system). */
export function residentDir(env: NodeJS.ProcessEnv): string | null {
  if (typeof process.getuid !== 'function') return null;
  if (env.GUARD_RESIDENT_DIR) return env.GUARD_RESIDENT_DIR;
  if (env.XDG_RUNTIME_DIR) return `${env.XDG_RUNTIME_DIR}/guard-resident`;
  return `${(env.TMPDIR || '/tmp').replace(/\/+$/, '')}/guard-resident-${process.getuid()}`;
}

/**
 * Is `dir` a folder only this uid can enter: not a symlink, owned by the uid,
 * no permission bits for group or others. Anything else is not used: another
 * user could have made it, or could reach what is in it.
 */
export function privateDir(dir: string): boolean {
  try {
    const s = fs.lstatSync(dir);
    return s.isDirectory() && s.uid === process.getuid!() && (s.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

/** The build's files, from this module's place in dist/ (dist/runtime/). */
export const BUILD_FILES = ['../cli/guard.js', '../cli/resident-server.js'].map(
  (rel) => new URL(rel, import.meta.url),
);

/** The build, the node binary and its version, as one string: both ends compare it whole. */
export function buildKey(): string {
  const parts = [`p${PROTOCOL}`, process.execPath, process.version];
  for (const f of BUILD_FILES) {
    const s = fs.statSync(f, { bigint: true });
    parts.push(`${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`);
  }
  return parts.join('|');
}

/** A short name for `key` (FNV-1a, two 32-bit lanes): the socket's file name. */
export function keyName(key: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x811c9dc5) >>> 0;
  }
  return `g-${a.toString(16).padStart(8, '0')}${b.toString(16).padStart(8, '0')}`;
}

export function socketPath(dir: string, key: string): string {
  return `${dir}/${keyName(key)}.sock`;
}
