import fs from 'node:fs';
import net from 'node:net';
import { privateDir } from './resident-place.js';

/**
 * The resident server's own socket file (cli/resident-server.ts): made, held
 * and removed here. This is the server process's own state, like a lock, and
 * not the work tree, refs or records, so it is written outside src/apply.
 */

/** The socket folder, made 0700 when missing; false when it is not a folder of this uid's alone. */
export function ensurePrivateDir(dir: string): boolean {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch {
    // looked at below
  }
  return privateDir(dir);
}

/**
 * Listen on `sock`: bound under a temporary name (0600), then linked into
 * place, which fails while another server holds the name. A socket there
 * that refuses connections (its server was killed) is replaced. Returns the
 * socket file's inode: the server's proof, later, that the name is still its own.
 */
export async function bindSocket(server: net.Server, sock: string): Promise<bigint> {
  const tmp = `${sock}.${process.pid}.tmp`;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(tmp, () => resolve());
  });
  try {
    fs.chmodSync(tmp, 0o600);
    try {
      fs.linkSync(tmp, sock);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || !(await removeStale(sock))) throw e;
      fs.linkSync(tmp, sock);
    }
    return fs.lstatSync(sock, { bigint: true }).ino;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** A socket nobody listens on (its server was killed), or anything else there, removed: true; a live one is left. */
async function removeStale(sock: string): Promise<boolean> {
  const ino = fs.lstatSync(sock, { bigint: true }).ino;
  const refused = await new Promise<boolean>((resolve) => {
    const c = net.createConnection(sock);
    c.on('connect', () => (c.destroy(), resolve(false)));
    c.on('error', (e: NodeJS.ErrnoException) => resolve(e.code !== 'EAGAIN'));
  });
  if (!refused || fs.lstatSync(sock, { bigint: true }).ino !== ino) return false;
  fs.unlinkSync(sock);
  return true;
}

/** Is the name still this server's socket (not removed, not replaced, its folder not gone)? */
export function ownsSocket(sock: string, ino: bigint | null): boolean {
  try {
    return ino !== null && fs.lstatSync(sock, { bigint: true }).ino === ino;
  } catch {
    return false;
  }
}

/** Remove the socket if it is still this server's. */
export function releaseSocket(sock: string, ino: bigint | null): void {
  try {
    if (ownsSocket(sock, ino)) fs.unlinkSync(sock);
  } catch {
    // gone already
  }
}
