import { createHash } from 'node:crypto';

/** git's blob id for these bytes, without a process (the repository's hash: 40 hex digits sha1, 64 sha256). */
export function blobId(data: Buffer, algo: 'sha1' | 'sha256'): string {
  return createHash(algo).update(`blob ${data.length}\0`).update(data).digest('hex');
}
