/** Printed undo commands quote names so that a person can paste them (issue 20). */
import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { shellQuote } from '../../src/core/quote.js';
import { notKeptOrder } from '../../src/flows/lanes/lanes.js';

/** What bash makes of the word: its one argument, byte for byte. */
function throughBash(word: string): string {
  const r = spawnSync('bash', ['-c', `printf %s ${word}`]);
  return r.stdout.toString('utf8');
}

describe('shellQuote', () => {
  it('plain names stay as they are; spaces, quotes, $ and leading dashes survive a paste', () => {
    expect(shellQuote('src/a.ts')).toBe('src/a.ts');
    expect(shellQuote('my file.txt')).toBe(`'my file.txt'`);
    for (const name of [
      'my file.txt',
      "it's.txt",
      '$HOME.txt',
      '`rm -rf`.txt',
      '-rf',
      'a\tb',
      'evil\x1b[2J.py',
      'ünï cødé.md',
      '*.js',
    ]) {
      expect(throughBash(shellQuote(name))).toBe(name);
    }
    expect(shellQuote('evil\x1b[2J.py')).not.toContain('\x1b'); // never raw on the terminal
  });

  it('any name without NUL comes back the same through bash', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 12, unit: 'binary' }).filter((s) => !s.includes('\0')),
        (name) => {
          expect(throughBash(shellQuote(name))).toBe(name);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('discard: what is not kept', () => {
  it("leaves out what husky regenerates and guard's own folder; real files first, folders after", () => {
    const ignored = [
      '.guard/',
      '.husky/_/',
      '.husky/_/.gitignore',
      '.husky/_/h',
      '.husky/_/pre-commit',
      'node_modules/',
      'dist/',
      '.env',
      'config/local.json',
    ];
    expect(notKeptOrder(ignored)).toEqual(['.env', 'config/local.json', 'node_modules/', 'dist/']);
  });
});
