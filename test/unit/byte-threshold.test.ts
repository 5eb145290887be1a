import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { aggregateLoss, withAggregateLoss } from '../../src/core/aggregate.js';
import { classify, makePolicy, type ChangeFacts } from '../../src/core/classify.js';
import { DEFAULT_CONFIG, parseConfig } from '../../src/core/config.js';
import { GuardError } from '../../src/core/errors.js';

const policy = makePolicy(DEFAULT_CONFIG);
const facts = (over: Partial<ChangeFacts>): ChangeFacts => ({
  path: 'a.min.js',
  oldMode: '100644',
  newMode: '100644',
  linesAdded: 0,
  linesDeleted: 0,
  existingLines: 0,
  binary: false,
  contentChanged: true,
  ...over,
});

describe('byteThreshold (issue 20): bytes as well as lines', () => {
  it('deleting or replacing a 99-line file of 500 KB needs approval; a small one does not', () => {
    const del = classify(
      facts({ newMode: null, existingLines: 99, existingBytes: 500_000, linesDeleted: 99 }),
      policy,
    );
    expect(del).toMatchObject({
      status: 'delete',
      needsApproval: true,
      rules: ['delete-large'],
      existingBytes: 500_000,
    });
    expect(del.reasons[0]).toBe('deletes a file of 500000 bytes (65536+ bytes need approval)');
    const rep = classify(
      facts({ existingLines: 99, existingBytes: 500_000, linesDeleted: 90, linesAdded: 3 }),
      policy,
    );
    expect(rep).toMatchObject({ status: 'replace', needsApproval: true, rules: ['replace-large'] });
    expect(
      classify(
        facts({ newMode: null, existingLines: 99, existingBytes: 65_535, linesDeleted: 99 }),
        policy,
      ).needsApproval,
    ).toBe(false);
    // a new file has no base bytes
    expect(
      classify(facts({ oldMode: null, existingBytes: 900_000, linesAdded: 3 }), policy)
        .needsApproval,
    ).toBe(false);
  });

  it('the change as a whole adds bytes up as it adds lines up', () => {
    const files = [0, 1, 2].map((i) =>
      classify(
        facts({
          path: `d${i}.json`,
          newMode: null,
          existingLines: 2,
          existingBytes: 30_000,
          linesDeleted: 2,
        }),
        policy,
      ),
    );
    expect(files.some((f) => f.needsApproval)).toBe(false);
    expect(aggregateLoss(files, DEFAULT_CONFIG)).toEqual({
      lines: 6,
      bytes: 90_000,
      paths: ['d0.json', 'd1.json', 'd2.json'],
    });
    const judged = withAggregateLoss(files, DEFAULT_CONFIG);
    expect(judged.every((f) => f.needsApproval && f.rules.includes('aggregate-loss'))).toBe(true);
    expect(judged[0]!.reasons[0]).toContain(
      'loses 90000 bytes through 3 deleted or replaced files (65536+ bytes together need approval)',
    );
  });

  it('property: under both thresholds a deletion is allowed, at either it needs approval', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 0, max: 200_000 }),
        (lines, bytes) => {
          const c = classify(
            facts({
              newMode: null,
              existingLines: lines,
              existingBytes: bytes,
              linesDeleted: lines,
            }),
            policy,
          );
          expect(c.needsApproval).toBe(
            lines >= DEFAULT_CONFIG.lineThreshold || bytes >= DEFAULT_CONFIG.byteThreshold,
          );
        },
      ),
    );
  });

  it('is validated like the other keys', () => {
    expect(parseConfig(JSON.stringify({ byteThreshold: 1000 })).byteThreshold).toBe(1000);
    expect(parseConfig('{}').byteThreshold).toBe(65_536);
    for (const bad of [0, -1, 1.5, '10']) {
      expect(() => parseConfig(JSON.stringify({ byteThreshold: bad }))).toThrow(GuardError);
    }
    expect(() => parseConfig(JSON.stringify({ byteThreshold: 0 }))).toThrow(/"byteThreshold"/);
  });
});
