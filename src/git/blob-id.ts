import { createRequire } from 'node:module';

// node:crypto on the first blob id, not when guard starts: it costs ~4 ms of CPU to load on Node 24
// and most calls hash no file (core/digest.ts hashes guard's short names)
const load = createRequire(import.meta.url);
let crypto: typeof import('node:crypto') | undefined;

/** git's blob id for these bytes, without a process (the repository's hash: 40 hex digits sha1, 64 sha256). */
export function blobId(data: Buffer, algo: 'sha1' | 'sha256'): string {
  crypto ??= load('node:crypto') as typeof import('node:crypto');
  return crypto.createHash(algo).update(`blob ${data.length}\0`).update(data).digest('hex');
}
