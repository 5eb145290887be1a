import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  classify,
  makePolicy,
  reasonsOf,
  symlinkEscapes,
  withReason,
  type ChangeFacts,
} from '../../src/core/classify.js';
import { DEFAULT_CONFIG } from '../../src/core/config.js';

const policy = makePolicy(DEFAULT_CONFIG);

function facts(over: Partial<ChangeFacts>): ChangeFacts {
  return {
    path: 'src/a.py',
    oldMode: '100644',
    newMode: '100644',
    linesAdded: 0,
    linesDeleted: 0,
    existingLines: 0,
    binary: false,
    contentChanged: true,
    ...over,
  };
}

describe('classify', () => {
  it('a new file is allowed whatever its size', () => {
    const c = classify(facts({ oldMode: null, linesAdded: 10_000 }), policy);
    expect(c).toMatchObject({
      status: 'new',
      changeRatio: 0,
      needsApproval: false,
      reasons: [],
      rules: [],
    });
  });

  it('modify below the ratio, replace at or above it', () => {
    expect(
      classify(facts({ existingLines: 200, linesDeleted: 99, linesAdded: 99 }), policy).status,
    ).toBe('modify');
    const at = classify(facts({ existingLines: 200, linesDeleted: 100, linesAdded: 3 }), policy);
    expect(at).toMatchObject({ status: 'replace', changeRatio: 0.5, needsApproval: true });
    expect(at.reasons[0]).toMatch(/replaces 50% of a 200-line file/);
    expect(at.rules).toEqual(['replace-large']);
  });

  it('the line threshold is inclusive: 100 lines need approval, 99 do not', () => {
    expect(classify(facts({ existingLines: 100, linesDeleted: 100 }), policy).needsApproval).toBe(
      true,
    );
    expect(classify(facts({ existingLines: 99, linesDeleted: 99 }), policy).needsApproval).toBe(
      false,
    );
  });

  it('deleting a large file needs approval, a small one does not', () => {
    expect(
      classify(facts({ newMode: null, existingLines: 200, linesDeleted: 200 }), policy),
    ).toMatchObject({ status: 'delete', needsApproval: true, rules: ['delete-large'] });
    expect(
      classify(facts({ newMode: null, existingLines: 20, linesDeleted: 20 }), policy),
    ).toMatchObject({ status: 'delete', needsApproval: false });
  });

  it('follows renames: status rename, metrics of the content change, either path protected', () => {
    const c = classify(
      facts({ oldPath: 'src/old.py', existingLines: 300, linesDeleted: 3, linesAdded: 3 }),
      policy,
    );
    expect(c).toMatchObject({ status: 'rename', oldPath: 'src/old.py', needsApproval: false });
    const moved = classify(
      facts({ path: 'elsewhere.yml', oldPath: '.github/workflows/ci.yml' }),
      policy,
    );
    expect(moved).toMatchObject({ protected: true, needsApproval: true, rules: ['protected'] });
  });

  it('protects the config and protect globs, even when the config forgets itself', () => {
    const loose = makePolicy({ ...DEFAULT_CONFIG, protect: [] });
    expect(classify(facts({ path: 'guard.config.json' }), loose).needsApproval).toBe(true);
    expect(classify(facts({ path: '.husky/pre-commit' }), policy).protected).toBe(true);
    expect(classify(facts({ path: '.github/workflows/x/y.yml' }), policy).protected).toBe(true);
  });

  it('a protect glob matches a name that holds a line break or a control character', () => {
    const policy = makePolicy(DEFAULT_CONFIG);
    for (const name of [
      '.github/workflows/evil\x1b[2J\r.yml',
      '.github/workflows/a\nb.yml',
      '.husky/pre\u2028commit',
      '.github/workflows/\r',
    ]) {
      expect(policy.isProtected(name), JSON.stringify(name)).toBe(true);
    }
    expect(policy.isProtected('src/a\r.yml')).toBe(false);
    fc.assert(
      // ("." and ".." are not names git can hold)
      fc.property(
        fc.string({ minLength: 1 }).filter((s) => !s.includes('/') && s !== '.' && s !== '..'),
        (name) => {
          expect(policy.isProtected(`.github/workflows/${name}`)).toBe(true);
        },
      ),
    );
  });

  it('bootstrap: installing guard adds a hook and a default config without a person, nothing more', () => {
    const boot = makePolicy(DEFAULT_CONFIG, { bootstrap: true });
    const config = (text: string | undefined) =>
      classify(
        facts({
          path: 'guard.config.json',
          oldMode: null,
          ...(text !== undefined ? { newText: text } : {}),
        }),
        boot,
      );
    expect(config('{}\n').needsApproval).toBe(false);
    expect(config(JSON.stringify(DEFAULT_CONFIG)).needsApproval).toBe(false);
    expect(config('{"lineThreshold": 100000, "protect": []}').needsApproval).toBe(true);
    expect(config(undefined).needsApproval).toBe(true);
    expect(classify(facts({ path: '.husky/pre-commit', oldMode: null }), boot).needsApproval).toBe(
      false,
    );
    expect(
      classify(facts({ path: '.github/workflows/x.yml', oldMode: null }), boot).needsApproval,
    ).toBe(true);
    expect(classify(facts({ path: 'guard.config.json', newText: '{}' }), boot).needsApproval).toBe(
      true,
    );
    expect(
      classify(facts({ path: '.husky/pre-commit', oldMode: null }), policy).needsApproval,
    ).toBe(true);
  });

  it('ignore globs: not judged unless also protected', () => {
    const p = makePolicy({ ...DEFAULT_CONFIG, ignore: ['gen/**', '.husky/**'] });
    expect(
      classify(facts({ path: 'gen/big.ts', existingLines: 1000, linesDeleted: 1000 }), p),
    ).toMatchObject({ ignored: true, needsApproval: false });
    expect(classify(facts({ path: '.husky/pre-commit' }), p)).toMatchObject({
      ignored: false,
      needsApproval: true,
    });
  });

  it('binary: replacing or deleting one that existed needs approval, adding one does not', () => {
    expect(classify(facts({ binary: true }), policy)).toMatchObject({
      status: 'replace',
      needsApproval: true,
      rules: ['binary-replace'],
    });
    expect(classify(facts({ binary: true, newMode: null }), policy)).toMatchObject({
      needsApproval: true,
      rules: ['binary-delete'],
    });
    expect(classify(facts({ binary: true, oldMode: null }), policy).needsApproval).toBe(false);
  });

  it('mode only', () => {
    const c = classify(facts({ newMode: '100755', contentChanged: false }), policy);
    expect(c).toMatchObject({ modeOnly: true, status: 'modify', needsApproval: false });
  });

  it('symlinks pointing outside need approval', () => {
    const out = classify(
      facts({ path: 'a/link', newMode: '120000', oldMode: null, newText: '../../x' }),
      policy,
    );
    expect(out).toMatchObject({ symlink: true, needsApproval: true, rules: ['symlink-outside'] });
    const inside = classify(
      facts({ path: 'a/link', newMode: '120000', oldMode: null, newText: '../b' }),
      policy,
    );
    expect(inside.needsApproval).toBe(false);
  });

  it('an elision placeholder where code stood needs approval; one the file had does not', () => {
    const oldText = 'def a():\n    return 1\n\ndef b():\n    return 2\n';
    const newText = 'def a():\n    return 1\n\n# ... rest of the code unchanged ...\n';
    const c = classify(
      facts({ existingLines: 5, linesDeleted: 2, linesAdded: 1, oldText, newText }),
      policy,
    );
    expect(c.needsApproval).toBe(true);
    expect(c.reasons[0]).toMatch(/line 4/);
    expect(c.rules).toEqual(['elision']);
    const had = classify(
      facts({
        existingLines: 5,
        linesDeleted: 1,
        linesAdded: 1,
        oldText: newText,
        newText: newText + 'x\n',
      }),
      policy,
    );
    expect(had.needsApproval).toBe(false);
  });

  it('files over maxFileBytes need approval', () => {
    expect(classify(facts({ tooLarge: { bytes: 100e6 } }), policy)).toMatchObject({
      needsApproval: true,
      rules: ['too-large'],
    });
  });

  it('every reason has exactly one rule id, in the same order', () => {
    const c = classify(
      facts({ path: '.husky/x', newMode: null, existingLines: 300, linesDeleted: 300 }),
      policy,
    );
    expect(c.rules).toEqual(['delete-large', 'protected']);
    expect(c.reasons).toHaveLength(c.rules.length);
    expect(reasonsOf(c).map((r) => r.rule)).toEqual(c.rules);
    const more = withReason(c, { rule: 'not-written', text: 'not written: x' });
    expect(more).toMatchObject({
      rules: ['delete-large', 'protected', 'not-written'],
      reasons: [c.reasons[0], c.reasons[1], 'not written: x'],
    });
    expect(c.rules).toHaveLength(2);
  });

  it('properties: ratio in [0,1], status agrees with the thresholds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), fc.nat(), fc.nat(), (existing, del, add) => {
        const deleted = del % (existing + 1);
        const c = classify(
          facts({ existingLines: existing, linesDeleted: deleted, linesAdded: add }),
          policy,
        );
        expect(c.changeRatio).toBeGreaterThanOrEqual(0);
        expect(c.changeRatio).toBeLessThanOrEqual(1);
        const replace = deleted / existing >= DEFAULT_CONFIG.changeRatio;
        expect(c.status).toBe(replace ? 'replace' : 'modify');
        expect(c.needsApproval).toBe(replace && existing >= DEFAULT_CONFIG.lineThreshold);
      }),
    );
  });
});

describe('symlinkEscapes', () => {
  it.each([
    ['link', '../x', true],
    ['a/link', '../x', false],
    ['a/link', '../../x', true],
    ['link', '/etc/passwd', true],
    ['link', 'a/../../x', true],
    ['link', './a', false],
    ['link', '', true],
  ])('%s -> %s escapes: %s', (link, target, expected) => {
    expect(symlinkEscapes(link, target)).toBe(expected);
  });
});
