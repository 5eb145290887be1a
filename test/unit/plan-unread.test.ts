/**
 * A version guard did not read is unknown (issue 20): review never calls it
 * "already there" and never writes, deletes or merges it, whatever the answer.
 * On the old plan two never-read versions (null and null) compared equal.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Classification, Status } from '../../src/core/classify.js';
import {
  alreadyThere,
  outcomeWords,
  plan,
  type Answer,
  type PlanFile,
} from '../../src/core/plan.js';

function cls(
  path: string,
  status: Status,
  needsApproval: boolean,
  extra: Partial<Classification> = {},
): Classification {
  return {
    path,
    status,
    needsApproval,
    existingLines: 0,
    linesAdded: 1,
    linesDeleted: 0,
    changeRatio: 0,
    binary: false,
    symlink: false,
    modeOnly: false,
    protected: false,
    submodule: false,
    ignored: false,
    whitespaceOnly: false,
    reasons: needsApproval ? ['larger than maxFileBytes'] : [],
    rules: needsApproval ? ['too-large'] : [],
    ...extra,
  };
}

/** A file over the read cap in the lane, not in the main tree: both versions "null" to the old plan. */
const huge = (needsApproval: boolean): PlanFile => ({
  c: cls('huge.bin', 'new', needsApproval),
  hunks: [],
  base: null,
  proposed: null,
  baseMode: null,
  proposedMode: '100644',
  current: { at: null },
  unread: true,
});

/** A submodule moved by the lane: its commits are never read. */
const moved: PlanFile = {
  c: cls('sub', 'modify', false, { submodule: true }),
  hunks: [],
  base: null,
  proposed: null,
  baseMode: '160000',
  proposedMode: '160000',
  current: { at: null },
  unread: true,
};

describe('plan: an unread version', () => {
  it('is never already there', () => {
    expect(alreadyThere('review', huge(false))).toBe(false);
    expect(alreadyThere('review', moved)).toBe(false);
  });

  it('allowed or approved, it is left for a person to take by hand (action conflict), said in words', async () => {
    const p = await plan('review', [huge(false), moved], new Map());
    expect(p.files.map((o) => [o.path, o.decision, o.action, o.unread, o.already])).toEqual([
      ['huge.bin', 'allowed', 'conflict', true, undefined],
      ['sub', 'allowed', 'conflict', true, undefined],
    ]);
    expect(outcomeWords(p.files[0]!)).toBe(
      'allowed, not merged: guard did not read it (a submodule, or too large to read); take it by hand',
    );
  });

  it('whatever the answer, nothing unread is written, deleted or merged', async () => {
    const answers: Answer[] = [
      { take: 'all' },
      { take: 'none' },
      { take: 'strategy', strategy: 'replace' },
      { take: 'hunks', indices: new Set() },
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.boolean(),
        fc.option(fc.constantFrom(...answers), { nil: undefined }),
        async (needs, a) => {
          const f = huge(needs);
          const p = await plan('review', [f], a ? new Map([[f.c.path, a]]) : new Map());
          const o = p.files[0]!;
          expect(['write', 'delete', 'merge', 'none']).not.toContain(o.action);
          expect(o.already).toBeUndefined();
        },
      ),
      { numRuns: 40 },
    );
  });
});
