import { createHash } from 'node:crypto';
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { randomHex, sha1Hex, sha256Hex } from '../../src/core/digest.js';

const node = (algo: string, s: string | Uint8Array) => createHash(algo).update(s).digest('hex');

describe('core/digest: the JS hashes guard names things by', () => {
  it('agree with node:crypto on texts of every length around the block edges', () => {
    for (let n = 0; n < 200; n++) {
      const s = 'x'.repeat(n);
      expect(sha256Hex(s)).toBe(node('sha256', s));
      expect(sha1Hex(s)).toBe(node('sha1', s));
    }
  });

  it('agree with node:crypto on any text (UTF-8, lone surrogates) and any bytes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (s) => {
        expect(sha256Hex(s)).toBe(node('sha256', s));
        expect(sha1Hex(s)).toBe(node('sha1', s));
      }),
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (b) => {
        expect(sha256Hex(b)).toBe(node('sha256', b));
        expect(sha1Hex(b)).toBe(node('sha1', b));
      }),
    );
    expect(sha256Hex('a\ud800b')).toBe(node('sha256', 'a\ud800b'));
  });

  it('randomHex: the hex of that many bytes, not the same twice', () => {
    expect(randomHex(4)).toMatch(/^[0-9a-f]{8}$/);
    expect(randomHex(6)).toMatch(/^[0-9a-f]{12}$/);
    expect(new Set(Array.from({ length: 1000 }, () => randomHex(6))).size).toBe(1000);
  });
});
