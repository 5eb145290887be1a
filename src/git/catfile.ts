import { spawn } from 'node:child_process';
import { GuardError } from '../core/errors.js';
import { gitSpawnArgs, timeoutError, watchDeadline } from './run.js';

/**
 * One `git cat-file --batch` process for any number of objects: reading 2,000
 * blobs this way takes ~0.1 s where one `git show` each takes seconds.
 * https://git-scm.com/docs/git-cat-file#_batch_output
 *
 *   <oid> SP <type> SP <size> LF <contents> LF
 *   <object> SP missing LF
 *
 * Objects over `maxBytes` are never held: their lines are counted as the
 * bytes stream past.
 */
export interface CatObject {
  oid: string;
  type: string;
  size: number;
  /** The content, unless the object was larger than maxBytes. */
  data?: Buffer;
  /** Always set for blobs: lines as git's numstat counts them. */
  lines: number;
}

export type CatResult = CatObject | null;

export async function catFileBatch(
  cwd: string,
  names: readonly string[],
  maxBytes: number,
): Promise<CatResult[]> {
  if (names.length === 0) return [];
  for (const n of names) {
    if (n.includes('\n')) throw new GuardError('E_INTERNAL', `object name with a newline: ${JSON.stringify(n)}`);
  }
  const child = spawn('git', gitSpawnArgs(['cat-file', '--batch']), { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  const results: CatResult[] = [];
  const errors: Buffer[] = [];
  child.stderr.on('data', (b: Buffer) => errors.push(b));

  // Parser state: header text pending, or inside an object's body.
  let pending = Buffer.alloc(0);
  let body: { obj: CatObject; remaining: number; chunks: Buffer[] | null; lastByte: number; newlines: number } | null = null;

  const feed = (chunk: Buffer) => {
    let buf = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    pending = Buffer.alloc(0);
    while (buf.length > 0) {
      if (body && body.remaining > 0) {
        const part = buf.subarray(0, Math.min(body.remaining, buf.length));
        if (body.chunks) body.chunks.push(Buffer.from(part));
        for (let i = part.indexOf(10); i !== -1; i = part.indexOf(10, i + 1)) body.newlines++;
        body.lastByte = part[part.length - 1]!;
        body.remaining -= part.length;
        buf = buf.subarray(part.length);
        continue;
      }
      if (body) {
        // the LF git writes after every object's contents
        buf = buf.subarray(1);
        const { obj } = body;
        if (body.chunks) obj.data = Buffer.concat(body.chunks);
        obj.lines = body.newlines + (obj.size > 0 && body.lastByte !== 10 ? 1 : 0);
        results.push(obj);
        body = null;
        continue;
      }
      const nl = buf.indexOf(10);
      if (nl === -1) {
        pending = Buffer.from(buf);
        return;
      }
      const header = buf.subarray(0, nl).toString('utf8');
      buf = buf.subarray(nl + 1);
      if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
        results.push(null);
        continue;
      }
      const [oid, type, sizeText] = header.split(' ');
      const size = Number(sizeText);
      if (!oid || !type || !Number.isFinite(size)) throw new GuardError('E_GIT', `unexpected cat-file output: ${header}`);
      body = {
        obj: { oid, type, size, lines: 0 },
        remaining: size,
        chunks: size <= maxBytes ? [] : null,
        lastByte: 10,
        newlines: 0,
      };
    }
  };

  let timedOut = false;
  const unwatch = watchDeadline(child, () => (timedOut = true));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      try {
        feed(chunk);
      } catch (err) {
        child.kill();
        reject(err);
      }
    });
    child.on('error', (e) => reject(new GuardError('E_GIT', `could not run git: ${e.message}`)));
    child.on('close', (code) => {
      unwatch();
      if (timedOut) reject(timeoutError());
      else if (code !== 0 || results.length !== names.length) {
        const msg = Buffer.concat(errors).toString('utf8').split('\n')[0] || `exit code ${code}`;
        reject(new GuardError('E_GIT', `git cat-file failed: ${msg}`));
      } else resolve(results);
    });
    child.stdin.on('error', () => {});
    child.stdin.end(names.join('\n') + '\n');
  });
}
