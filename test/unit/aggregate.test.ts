import { describe, expect, it } from 'vitest';
import { aggregateLoss, withAggregateLoss } from '../../src/core/aggregate.js';
import { classify, makePolicy, symlinkIntoGit, type ChangeFacts } from '../../src/core/classify.js';
import { DEFAULT_CONFIG } from '../../src/core/config.js';

const policy = makePolicy(DEFAULT_CONFIG);
const facts = (over: Partial<ChangeFacts>): ChangeFacts => ({
  path: 'a.py',
  oldMode: '100644',
  newMode: '100644',
  linesAdded: 0,
  linesDeleted: 0,
  existingLines: 0,
  binary: false,
  contentChanged: true,
  ...over,
});
const deleted = (i: number, lines = 40) =>
  classify(
    facts({ path: `m${i}.py`, newMode: null, existingLines: lines, linesDeleted: lines }),
    policy,
  );

describe('change-level loss (issue 13 item 11)', () => {
  it('twelve 40-line files deleted together need a person, each with the reason', () => {
    const files = Array.from({ length: 12 }, (_, i) => deleted(i));
    expect(files.every((f) => !f.needsApproval)).toBe(true);
    expect(aggregateLoss(files, DEFAULT_CONFIG)).toEqual({
      lines: 480,
      bytes: 0,
      paths: files.map((f) => f.path),
    });
    const judged = withAggregateLoss(files, DEFAULT_CONFIG);
    expect(judged.every((f) => f.needsApproval)).toBe(true);
    expect(judged[0]!.reasons).toEqual([
      'the change as a whole loses 480 lines through 12 deleted or replaced files (100+ lines together need approval)',
    ]);
    expect(files[0]!.needsApproval).toBe(false); // input untouched
  });

  it('counts replaced lines, not edits, additions, ignored or whitespace-only files; under the threshold nothing changes', () => {
    const replace = classify(
      facts({ path: 'r.py', existingLines: 60, linesDeleted: 50, linesAdded: 5 }),
      policy,
    );
    const modify = classify(
      facts({ path: 'm.py', existingLines: 400, linesDeleted: 90, linesAdded: 90 }),
      policy,
    );
    const reindent = classify(
      facts({
        path: 'w.py',
        existingLines: 90,
        linesDeleted: 90,
        linesAdded: 90,
        whitespaceOnly: true,
      }),
      policy,
    );
    const ignored = classify(
      facts({ path: 'gen/x.py', newMode: null, existingLines: 90, linesDeleted: 90 }),
      makePolicy({ ...DEFAULT_CONFIG, ignore: ['gen/**'] }),
    );
    expect(
      aggregateLoss([replace, modify, reindent, ignored, deleted(1, 49)], DEFAULT_CONFIG),
    ).toBeNull(); // 50 + 49
    expect(
      aggregateLoss([replace, modify, reindent, ignored, deleted(1, 50)], DEFAULT_CONFIG),
    ).toEqual({ lines: 100, bytes: 0, paths: ['r.py', 'm1.py'] });
    expect(withAggregateLoss([modify, reindent], DEFAULT_CONFIG).some((f) => f.needsApproval)).toBe(
      false,
    );
  });
});

describe('whitespaceOnly (issue 13 item 12)', () => {
  it('a reindent of a large file is not a replace and needs no approval', () => {
    const c = classify(
      facts({
        existingLines: 300,
        linesDeleted: 243,
        linesAdded: 243,
        whitespaceOnly: true,
        oldText: 'x',
        newText: '  x',
      }),
      policy,
    );
    expect(c).toMatchObject({
      status: 'modify',
      whitespaceOnly: true,
      needsApproval: false,
      reasons: [],
    });
    expect(
      classify(facts({ existingLines: 300, linesDeleted: 243, linesAdded: 243 }), policy),
    ).toMatchObject({ status: 'replace', whitespaceOnly: false, needsApproval: true });
  });
});

describe('symlinks into .git (issue 13 item 9)', () => {
  it.each([
    ['cfg', '.git/config'],
    ['hooks', '.git/hooks'],
    ['g', '.git'],
    ['a/b', '../.git/hooks/pre-commit'],
    ['x', './.GIT/config'],
    ['y', '.git./config'],
    ['z', 'GIT~1/config'],
    ['s/l', 'sub/../.git'],
    ['w', '.git\\config'],
  ])('%s -> %s needs approval', (link, target) => {
    expect(symlinkIntoGit(link, target)).toBe(true);
    const c = classify(
      facts({ path: link, oldMode: null, newMode: '120000', newText: target }),
      policy,
    );
    expect(c.needsApproval).toBe(true);
    expect(c.reasons.join()).toMatch(/into \.git\//);
  });

  it.each([
    ['l', '.github/workflows'],
    ['l', 'gitignore'],
    ['l', 'src/.gitkeep'],
    ['d/l', '../docs/git.md'],
  ])('%s -> %s is ordinary', (link, target) => {
    expect(symlinkIntoGit(link, target)).toBe(false);
    expect(
      classify(facts({ path: link, oldMode: null, newMode: '120000', newText: target }), policy)
        .needsApproval,
    ).toBe(false);
  });
});

describe('change-level loss counts only files under the threshold', () => {
  it('a big replacement beside thirty one-line edits puts only the big one to a person', () => {
    const big = classify(
      facts({ path: 'big.txt', existingLines: 200, linesDeleted: 200, linesAdded: 200 }),
      policy,
    );
    const small = Array.from({ length: 30 }, (_, i) =>
      classify(
        facts({ path: `f${i}.txt`, existingLines: 1, linesDeleted: 1, linesAdded: 1 }),
        policy,
      ),
    );
    expect(aggregateLoss([big, ...small], DEFAULT_CONFIG)).toBeNull();
    expect(
      withAggregateLoss([big, ...small], DEFAULT_CONFIG)
        .filter((f) => f.needsApproval)
        .map((f) => f.path),
    ).toEqual(['big.txt']);
  });
});
