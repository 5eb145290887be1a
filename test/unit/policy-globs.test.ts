import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { makePolicy } from '../../src/core/classify.js';
import { DEFAULT_CONFIG } from '../../src/core/config.js';

const picomatch = createRequire(import.meta.url)('picomatch') as (
  g: string[],
  o: object,
) => (p: string) => boolean;

// makePolicy skips picomatch for a name that starts with none of the globs'
// literal prefixes; whatever the globs, it must answer exactly as picomatch does.
const segment = fc.constantFrom(
  '.',
  '..',
  'src',
  '.github',
  'workflows',
  '.husky',
  'a b',
  'é',
  'x.ts',
  'guard.config.json',
  '-n',
  'lib',
  '_',
  'x\ry',
);
const name = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join('/'));
const glob = fc.oneof(
  fc.constantFrom(
    '**',
    '*.ts',
    '**/*.ts',
    'src/**',
    './src/**',
    '.github/workflows/**',
    '.husky/**',
    'src/*.ts',
    '{src,lib}/**',
    '!src/**',
    'src/[ab]*',
    'lib/?',
    '@(src|lib)/**',
    'a b/**',
    'src\\*',
    'x\ry',
    '*',
  ),
  name,
  name.map((n) => `${n}/**`),
);

describe('policy globs', () => {
  it('answers as picomatch does for every name and glob list (the literal-prefix shortcut loses nothing)', () => {
    fc.assert(
      fc.property(fc.array(glob, { minLength: 1, maxLength: 4 }), name, (globs, p) => {
        const policy = makePolicy({ ...DEFAULT_CONFIG, protect: globs, ignore: globs });
        const expected = picomatch(globs, { dot: true })(p.replace(/[\n\r\u2028\u2029]/g, '?'));
        expect(policy.isIgnored(p)).toBe(expected);
        expect(policy.isProtected(p)).toBe(expected || p === 'guard.config.json');
      }),
      { numRuns: 3000 },
    );
    // found by a random seed: a glob and a name that both start with "./"
    fc.assert(
      fc.property(fc.constant([['./x.ts'], './x.ts'] as const), ([globs, p]) => {
        expect(
          makePolicy({ ...DEFAULT_CONFIG, protect: [...globs], ignore: [...globs] }).isIgnored(p),
        ).toBe(picomatch([...globs], { dot: true })(p));
      }),
    );
  });
});
