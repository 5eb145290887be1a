import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Classification, Status } from '../../src/core/classify.js';
import { GuardError } from '../../src/core/errors.js';
import { diffHunks, reindex, splitHunk, type Hunk } from '../../src/core/hunks.js';
import {
  alreadyThere,
  decisionRecords,
  everythingRefused,
  mergeStrategies,
  outcomeWords,
  plan,
  summarize,
  type Answer,
  type Gate,
  type PlanFile,
} from '../../src/core/plan.js';
import { quotePath, plural } from '../../src/core/quote.js';

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
    existingLines: 10,
    linesAdded: 1,
    linesDeleted: 1,
    changeRatio: 0.1,
    binary: false,
    symlink: false,
    modeOnly: false,
    protected: false,
    submodule: false,
    ignored: false,
    whitespaceOnly: false,
    reasons: needsApproval ? ['a reason'] : [],
    rules: needsApproval ? ['protected'] : [],
    ...extra,
  };
}

const lines = (n: number, tag = 'line') =>
  Array.from({ length: n }, (_, i) => `${tag} ${i + 1}\n`).join('');

function file(
  path: string,
  base: string | null,
  proposed: string | null,
  opts: {
    needsApproval?: boolean;
    status?: Status;
    binary?: boolean;
    current?: PlanFile['current'];
  } = {},
): PlanFile {
  const status: Status =
    opts.status ?? (base === null ? 'new' : proposed === null ? 'delete' : 'modify');
  const hunks =
    base !== null && proposed !== null && !opts.binary
      ? diffHunks(base, proposed, 1)!
      : base === null && proposed !== null
        ? diffHunks('', proposed, 1)!
        : base !== null
          ? diffHunks(base, '', 1)!
          : [];
  return {
    c: cls(path, status, opts.needsApproval ?? false, { binary: opts.binary ?? false }),
    hunks: opts.binary ? [] : hunks,
    base: base === null ? null : Buffer.from(base),
    proposed: proposed === null ? null : Buffer.from(proposed),
    baseMode: base === null ? null : '100644',
    proposedMode: proposed === null ? null : '100644',
    ...(opts.current !== undefined ? { current: opts.current } : {}),
  };
}

const held = (s: string) => ({ content: Buffer.from(s), mode: '100644' });
const base5 = lines(40);
const five = base5
  .replace('line 2\n', 'two\n')
  .replace('line 10\n', 'ten\n')
  .replace('line 18\n', 'x\n')
  .replace('line 26\n', 'y\n')
  .replace('line 34\n', 'z\n');

describe('plan: decisions', () => {
  it('without answers: allowed files pass, files that need approval are blocked by auto and kept whole', async () => {
    const p = await plan(
      'check',
      [
        file('a.txt', 'a\n', 'b\n'),
        file('big.py', base5, 'new\n', { needsApproval: true, status: 'replace' }),
      ],
      new Map(),
    );
    expect(p.files.map((o) => [o.path, o.decision, o.decider, o.action, o.keep])).toEqual([
      ['a.txt', 'allowed', 'policy', 'none', null],
      ['big.py', 'blocked', 'auto', 'blocked', 'proposal'],
    ]);
    expect(everythingRefused(p)).toBe(false);
  });

  it('a rejection keeps the proposal; refusing everything is said so', async () => {
    const p = await plan(
      'check',
      [file('big.py', base5, 'new\n', { needsApproval: true })],
      new Map([['big.py', { take: 'none' } as Answer]]),
    );
    expect(p.files[0]).toMatchObject({
      decision: 'rejected',
      decider: 'person',
      action: 'blocked',
      keep: 'proposal',
    });
    expect(everythingRefused(p)).toBe(true);
  });

  it('check: approving as it is changes nothing in the index; a strategy stages its result and keeps the proposal', async () => {
    const f = file('big.py', base5, 'new\n', { needsApproval: true, status: 'replace' });
    const asIs = await plan('check', [f], new Map([['big.py', { take: 'all' } as Answer]]));
    expect(asIs.files[0]).toMatchObject({
      decision: 'approved',
      strategy: 'replace',
      action: 'none',
      keep: null,
    });
    const appended = await plan(
      'check',
      [f],
      new Map([['big.py', { take: 'strategy', strategy: 'append' } as Answer]]),
    );
    expect(appended.files[0]).toMatchObject({
      decision: 'approved',
      strategy: 'append',
      action: 'write',
      keep: 'proposal',
    });
    expect(appended.files[0]!.content!.toString()).toBe(base5 + 'new\n');
    expect(outcomeWords(appended.files[0]!)).toBe('approved (append)');
  });

  it('write: the target holds the base, so an allowed change is a write and an unchanged one is nothing', async () => {
    const p = await plan(
      'write',
      [file('a.txt', 'a\n', 'b\n'), file('same.txt', 'a\n', 'a\n')],
      new Map(),
    );
    expect(p.files.map((o) => o.action)).toEqual(['write', 'none']);
  });

  it('no append, insert or extend for a delete, a new file or a binary: a usage error, not "approved (extend)"', async () => {
    const del = file('gone.py', base5, null, { needsApproval: true });
    const bin = file('img.png', 'PNG\0a', 'PNG\0b', { needsApproval: true, binary: true });
    expect(mergeStrategies(del)).toEqual([]);
    expect(mergeStrategies(bin)).toEqual([]);
    expect(mergeStrategies(file('new.py', null, 'x\n'))).toEqual([]);
    expect(mergeStrategies(file('m.py', 'a\n', 'b\n'))).toEqual(['append', 'insert', 'extend']);
    for (const f of [del, bin]) {
      const err = await plan(
        'review',
        [f],
        new Map([[f.c.path, { take: 'strategy', strategy: 'extend' } as Answer]]),
      ).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(GuardError);
      expect((err as GuardError).code).toBe('E_USAGE');
    }
    const ok = await plan(
      'review',
      [del],
      new Map([['gone.py', { take: 'strategy', strategy: 'replace' } as Answer]]),
    );
    expect(ok.files[0]).toMatchObject({
      decision: 'approved',
      strategy: 'replace',
      action: 'delete',
      content: null,
    });
  });

  it('a subset of hunks: the count is of the hunks the person saw (after a split), and the rest is kept', async () => {
    const f = file('m.txt', base5, five);
    expect(f.hunks).toHaveLength(5);
    const p = await plan(
      'review',
      [f],
      new Map([['m.txt', { take: 'hunks', indices: new Set([0, 2, 4]) } as Answer]]),
    );
    const o = p.files[0]!;
    expect(o).toMatchObject({
      decision: 'approved',
      strategy: 'hunks',
      hunkCount: 5,
      keep: 'rest',
      action: 'write',
    });
    expect(o.taken).toEqual([f.hunks[0]!.id, f.hunks[2]!.id, f.hunks[4]!.id]);
    expect(outcomeWords(o)).toBe('taken in part (3 of 5 hunks)');
    expect(o.content!.toString()).toBe(
      base5.replace('line 2\n', 'two\n').replace('line 18\n', 'x\n').replace('line 34\n', 'z\n'),
    );
  });

  it('after a split the pieces are what is counted and taken', async () => {
    const b = lines(6);
    const n = b.replace('line 2\n', 'two\n').replace('line 4\n', 'four\n');
    const f = file('s.txt', b, n);
    const whole = diffHunks(b, n, 3)!;
    expect(whole).toHaveLength(1);
    const pieces = reindex(splitHunk(whole[0]!));
    const p = await plan(
      'review',
      [{ ...f, hunks: whole }],
      new Map([['s.txt', { take: 'hunks', indices: new Set([1]), hunks: pieces } as Answer]]),
    );
    expect(p.files[0]!.hunkCount).toBe(2);
    expect(p.files[0]!.content!.toString()).toBe(b.replace('line 4\n', 'four\n'));
  });

  it('all hunks taken is the proposal whole; none taken is a rejection', async () => {
    const f = file('m.txt', base5, five);
    const all = await plan(
      'review',
      [f],
      new Map([['m.txt', { take: 'hunks', indices: new Set([0, 1, 2, 3, 4]) } as Answer]]),
    );
    expect(all.files[0]).toMatchObject({ strategy: 'replace', keep: null });
    expect(all.files[0]!.content!.toString()).toBe(five);
    const none = await plan(
      'review',
      [f],
      new Map([['m.txt', { take: 'hunks', indices: new Set() } as Answer]]),
    );
    expect(none.files[0]).toMatchObject({ decision: 'rejected', keep: 'proposal' });
  });

  it('an unknown hunk is a usage error', async () => {
    const f = file('m.txt', base5, five);
    await expect(
      plan('review', [f], new Map([['m.txt', { take: 'hunks', indices: new Set([9]) } as Answer]])),
    ).rejects.toThrow(/no hunk #9/);
  });
});

describe('plan: review against the main tree as it is now', () => {
  it('a main tree that still holds the base gets a write (or a delete)', async () => {
    const p = await plan(
      'review',
      [
        file('a.txt', 'a\n', 'b\n', { current: { at: held('a\n') } }),
        file('d.txt', 'a\n', null, { current: { at: held('a\n') } }),
      ],
      new Map(),
    );
    expect(p.files.map((o) => o.action)).toEqual(['write', 'delete']);
  });

  it('a main tree that moved on: text is merged three ways, a delete conflicts', async () => {
    const p = await plan(
      'review',
      [
        file('a.txt', 'a\nb\n', 'a\nB\n', { current: { at: held('A\nb\n') } }),
        file('d.txt', 'a\n', null, { current: { at: held('moved\n') } }),
      ],
      new Map(),
    );
    expect(p.files.map((o) => o.action)).toEqual(['merge', 'conflict']);
    expect(summarize(p).conflicts).toBe(1);
  });

  it('a lane already merged: nothing to ask, nothing to write, no new refs', async () => {
    const files = [
      file('a.txt', 'a\n', 'b\n', { current: { at: held('b\n') } }),
      file('big.py', base5, 'new\n', { needsApproval: true, current: { at: held('new\n') } }),
      file('gone.py', base5, null, { needsApproval: true, current: { at: null } }),
    ];
    expect(files.every((f) => alreadyThere('review', f))).toBe(true);
    const p = await plan('review', files, new Map());
    expect(p.files.every((o) => o.action === 'none' && o.keep === null && o.already)).toBe(true);
    const s = summarize(p);
    expect(s).toMatchObject({ files: 3, taken: 0, kept: 0, already: 3, blocked: 0 });
  });
});

describe('plan: records and summaries come from the one computation', () => {
  it('the record carries decision, strategy, hunks and the refs the apply made', async () => {
    const f = file('m.txt', base5, five, { needsApproval: true });
    const p = await plan(
      'review',
      [f],
      new Map([['m.txt', { take: 'hunks', indices: new Set([1]) } as Answer]]),
    );
    const [rec] = decisionRecords(p, [f.c], {
      refs: new Map([['m.txt', 'refs/guard/rejected/x']]),
      blobs: new Map([['m.txt', 'abc']]),
    });
    expect(rec).toMatchObject({
      path: 'm.txt',
      decision: 'approved',
      decider: 'person',
      strategy: 'hunks',
      hunks: [f.hunks[1]!.id],
      ref: 'refs/guard/rejected/x',
      blob: 'abc',
    });
  });

  const answerArb = (f: PlanFile): fc.Arbitrary<Answer | undefined> =>
    fc.oneof(
      fc.constant(undefined),
      fc.constant<Answer>({ take: 'all' }),
      fc.constant<Answer>({ take: 'none' }),
      fc
        .subarray(f.hunks.map((h) => h.index))
        .map<Answer>((ix) => ({ take: 'hunks', indices: new Set(ix) })),
      ...mergeStrategies(f)
        .filter((s) => s !== 'insert')
        .map((s) => fc.constant<Answer>({ take: 'strategy', strategy: s })),
    );

  const fileArb = fc
    .record({
      n: fc.integer({ min: 1, max: 30 }),
      edits: fc.array(fc.integer({ min: 0, max: 29 }), { maxLength: 6 }),
      kind: fc.constantFrom('modify', 'delete', 'new'),
      needsApproval: fc.boolean(),
      main: fc.constantFrom('base', 'proposal', 'other', 'absent'),
    })
    .map(({ n, edits, kind, needsApproval, main }) => {
      const b = lines(n);
      let p = b;
      for (const e of edits) p = p.replace(`line ${e + 1}\n`, `edited ${e + 1}\n`);
      if (p === b) p = b + 'tail\n';
      const [bb, pp] = kind === 'delete' ? [b, null] : kind === 'new' ? [null, p] : [b, p];
      const at =
        main === 'base'
          ? bb === null
            ? null
            : held(bb)
          : main === 'proposal'
            ? pp === null
              ? null
              : held(pp)
            : main === 'other'
              ? held('something else\n')
              : null;
      return file(`f${n}-${kind}.txt`, bb, pp, { needsApproval, current: { at } });
    });

  it('property: outcomes are consistent, summaries add up, refs are kept exactly for what is not taken whole', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .uniqueArray(fileArb, { selector: (f) => f.c.path, maxLength: 5 })
          .chain((files) =>
            fc.tuple(
              fc.constant(files),
              fc.tuple(...files.map(answerArb)),
              fc.constantFrom<Gate>('check', 'write', 'review'),
            ),
          ),
        async ([files, answers, gate]) => {
          const map = new Map<string, Answer>();
          files.forEach((f, i) => {
            const a = answers[i];
            if (a) map.set(f.c.path, a);
          });
          const p = await plan(gate, files, map);
          expect(p.files.map((o) => o.path)).toEqual(files.map((f) => f.c.path));
          const s = summarize(p);
          expect(s.allowed + s.approved + s.rejected + s.blocked).toBe(s.files);
          expect(s.left).toBe(s.rejected + s.blocked);
          for (const [i, o] of p.files.entries()) {
            const f = files[i]!;
            const a = map.get(f.c.path);
            const refused = o.decision === 'rejected' || o.decision === 'blocked';
            expect(refused).toBe(o.action === 'blocked');
            if (refused) expect(o.keep).toBe('proposal');
            if (o.decision === 'approved' || o.decision === 'rejected')
              expect(o.decider).toBe('person');
            if (o.decision === 'blocked')
              expect([o.decider, f.c.needsApproval]).toEqual(['auto', true]);
            if (o.already) expect(o.keep).toBeNull();
            if (!refused && !o.already && a === undefined) expect(o.decision).toBe('allowed');
            if (o.keep === 'rest') expect(o.taken!.length).toBeLessThan(o.hunkCount!);
            if (o.content !== undefined && o.content !== null && o.strategy === 'replace')
              expect(o.content.equals(f.proposed!)).toBe(true);
            if (o.action === 'delete') expect(o.content).toBeNull();
          }
          // pure: the same inputs plan the same outcomes
          const again = await plan(gate, files, map);
          expect(again).toEqual(p);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('names and words a person reads', () => {
  it('C-quotes control characters, quotes and backslashes as git does; plain names stay', () => {
    expect(quotePath('src/a.ts')).toBe('src/a.ts');
    expect(quotePath('é.txt')).toBe('é.txt');
    expect(quotePath('a\x1b[2Jb')).toBe('"a\\033[2Jb"');
    expect(quotePath('cr\rlf\n')).toBe('"cr\\rlf\\n"');
    expect(quotePath('tab\there "q" \\')).toBe('"tab\\there \\"q\\" \\\\"');
    expect(quotePath('del\x7f')).toBe('"del\\177"');
  });
  it('property: a quoted name holds no control character', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        // eslint-disable-next-line no-control-regex
        expect(/[\u0000-\u001f\u007f]/.test(quotePath(s))).toBe(false);
      }),
    );
  });
  it('singular and plural', () => {
    expect(plural(1, 'line')).toBe('1 line');
    expect(plural(0, 'line')).toBe('0 lines');
    expect(plural(2, 'change')).toBe('2 changes');
  });
});

export type { Hunk };
