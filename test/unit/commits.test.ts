import { describe, expect, it } from 'vitest';
import { parseCommit } from '../../src/git/commits.js';

const T = '9bedf67800b2923982bdf60c89c57ce6986d6ef8';
const P1 = '1b7c1f4e3e2a7b2d0e1f6a0c3c2e3b7a1c0d9e8f';
const P2 = '2b7c1f4e3e2a7b2d0e1f6a0c3c2e3b7a1c0d9e8f';

describe('parseCommit', () => {
  it('reads tree, parents and message from the headers only', () => {
    const raw = [
      `tree ${T}`,
      `parent ${P1}`,
      `parent ${P2}`,
      'author A <a@example.com> 1700000000 +0000',
      'committer C <c@example.com> 1700000000 +0000',
      'gpgsig -----BEGIN PGP SIGNATURE-----',
      ` parent ${'f'.repeat(40)}`,
      ' -----END PGP SIGNATURE-----',
      '',
      'Merge',
      '',
      `parent ${'e'.repeat(40)}`,
      `tree ${'d'.repeat(40)}`,
      '',
    ].join('\n');
    expect(parseCommit(Buffer.from(raw))).toEqual({
      tree: T,
      parents: [P1, P2],
      message: `Merge\n\nparent ${'e'.repeat(40)}\ntree ${'d'.repeat(40)}\n`,
    });
  });

  it('a root commit has no parents; text without a tree is not a commit', () => {
    expect(parseCommit(`tree ${T}\nauthor A <a@example.com> 1 +0000\n\nfirst\n`)).toEqual({
      tree: T,
      parents: [],
      message: 'first\n',
    });
    expect(parseCommit('not a commit\n')).toBeNull();
  });
});
