import { describe, expect, it } from 'vitest';
import { parseDecisions, scriptedAnswer } from '../../src/core/decisions.js';
import { GuardError } from '../../src/core/errors.js';
import { diffHunks } from '../../src/core/hunks.js';
import { plan, type PlanFile } from '../../src/core/plan.js';
import type { Classification } from '../../src/core/classify.js';

/** A hunk edited in a decisions file goes the way of `e` at the prompt: scriptedAnswer, then plan. */

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join('');
const base = lines(40);
const proposed = base.replace('line 2\n', 'line TWO\n').replace('line 28\n', 'line TWENTY-EIGHT\n');

function planFile(): PlanFile {
  const c: Classification = {
    path: 'doc.txt',
    status: 'modify',
    needsApproval: true,
    existingLines: 40,
    linesAdded: 2,
    linesDeleted: 2,
    changeRatio: 0.05,
    binary: false,
    symlink: false,
    modeOnly: false,
    protected: true,
    submodule: false,
    ignored: false,
    whitespaceOnly: false,
    reasons: ['protected'],
    rules: ['protected'],
  };
  return {
    c,
    hunks: diffHunks(base, proposed, 3)!,
    base: Buffer.from(base),
    proposed: Buffer.from(proposed),
    baseMode: '100644',
    proposedMode: '100644',
  };
}

async function planned(decisions: unknown) {
  const f = planFile();
  const [d] = parseDecisions(JSON.stringify(decisions), 'd.json');
  const answer = scriptedAnswer(d!, { path: 'doc.txt', hunks: f.hunks, baseText: base });
  return { f, o: (await plan('review', [f], new Map([['doc.txt', answer]]))).files[0]! };
}

const usage = (fn: () => unknown): GuardError => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(GuardError);
    expect((err as GuardError).code).toBe('E_USAGE');
    return err as GuardError;
  }
  throw new Error('no usage error');
};

describe('--decisions: a hunk edited by hand', () => {
  it('an edited hunk is taken with the lines the decision gives; only it, when hunks names nothing else', async () => {
    const f = planFile();
    const id = f.hunks[0]!.id;
    const { o } = await planned([
      {
        path: 'doc.txt',
        action: 'approve',
        hunks: [],
        edits: [
          {
            hunk: id,
            lines: [' line 1', '-line 2', '+line two, by hand', ' line 3', ' line 4', ' line 5'],
          },
        ],
      },
    ]);
    expect(o).toMatchObject({
      decision: 'approved',
      decider: 'person',
      strategy: 'hunks',
      edited: 1,
      keep: 'rest',
      action: 'write',
    });
    expect(o.taken).toHaveLength(1);
    expect(o.content!.toString()).toBe(base.replace('line 2\n', 'line two, by hand\n'));
  });

  it('without hunks every hunk is taken, the edited one as edited; by index as well as by id', async () => {
    const { o } = await planned([
      {
        path: 'doc.txt',
        action: 'approve',
        edits: [
          {
            hunk: 1,
            lines: [
              ' line 25',
              ' line 26',
              ' line 27',
              '-line 28',
              '+line 28 (kept, and a note)',
              '+a note',
              ' line 29',
              ' line 30',
              ' line 31',
            ],
          },
        ],
      },
    ]);
    expect(o.content!.toString()).toBe(
      base
        .replace('line 2\n', 'line TWO\n')
        .replace('line 28\n', 'line 28 (kept, and a note)\na note\n'),
    );
    expect(o.taken).toHaveLength(2);
    expect(o.edited).toBe(1);
  });

  it('an edit that does not apply, removes every line, names no hunk or has a bad line is one usage error with a hint', () => {
    const f = planFile();
    const answer = (d: unknown) => () =>
      scriptedAnswer(parseDecisions(JSON.stringify([d]), 'd.json')[0]!, {
        path: 'doc.txt',
        hunks: f.hunks,
        baseText: base,
      });
    const stale = usage(
      answer({
        path: 'doc.txt',
        action: 'approve',
        edits: [{ hunk: 0, lines: [' line 1', '-line 9', '+x'] }],
      }),
    );
    expect(stale.message).toMatch(/^"doc.txt": the edit of hunk #0 does not apply: /);
    expect(stale.hint).toMatch(/' ' and '-' lines/);
    expect(
      usage(answer({ path: 'doc.txt', action: 'approve', edits: [{ hunk: 0, lines: [] }] }))
        .message,
    ).toMatch(/removes every line/);
    expect(
      usage(
        answer({
          path: 'doc.txt',
          action: 'approve',
          edits: [{ hunk: 'feedfacecafe', lines: ['+x'] }],
        }),
      ).message,
    ).toMatch(/no hunk with id feedfacecafe/);
    expect(
      usage(
        answer({ path: 'doc.txt', action: 'approve', edits: [{ hunk: 0, lines: ['*line 1'] }] }),
      ).message,
    ).toMatch(/does not apply: a line that is not context/);
    expect(
      usage(
        answer({
          path: 'doc.txt',
          action: 'approve',
          edits: [
            { hunk: 0, lines: ['+a'] },
            { hunk: f.hunks[0]!.id, lines: ['+b'] },
          ],
        }),
      ).message,
    ).toMatch(/two edits of hunk/);
  });

  it('the schema: edits go with approve, without a strategy; one string per line', () => {
    const parse = (d: unknown) => () => parseDecisions(JSON.stringify([d]), 'd.json');
    expect(
      usage(parse({ path: 'doc.txt', action: 'reject', edits: [{ hunk: 0, lines: ['+x'] }] }))
        .message,
    ).toMatch(/a rejection takes no/);
    expect(
      usage(
        parse({
          path: 'doc.txt',
          action: 'approve',
          strategy: 'append',
          edits: [{ hunk: 0, lines: ['+x'] }],
        }),
      ).message,
    ).toMatch(/not both/);
    expect(
      usage(parse({ path: 'doc.txt', action: 'approve', edits: [{ hunk: 0, lines: ['+x\n+y'] }] }))
        .message,
    ).toMatch(/one string per line/);
    expect(
      usage(parse({ path: 'doc.txt', action: 'approve', edits: [{ hunk: 0, text: '+x' }] }))
        .message,
    ).toMatch(/edits/);
    expect(usage(parse({ path: 'doc.txt', action: 'approve', edits: [] })).message).toMatch(
      /edits/,
    );
  });
});
