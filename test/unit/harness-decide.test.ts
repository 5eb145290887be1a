import { describe, expect, it } from 'vitest';
import {
  askReason,
  denyReason,
  failReason,
  lossMessage,
  verdict,
  writeOutcome,
  type Judged,
} from '../../src/harness/decide.js';

const file = (over: Partial<Judged> = {}): Judged => ({
  path: 'src/state.py',
  status: 'modify',
  existingLines: 270,
  linesDeleted: 3,
  changeRatio: 0.0111,
  needsApproval: false,
  reasons: [],
  rules: [],
  ...over,
});
const rewrite = file({
  status: 'replace',
  linesDeleted: 214,
  changeRatio: 0.7926,
  needsApproval: true,
  reasons: [
    'replaces 79% of a 270-line file (50% or more of 100+ lines needs approval)',
    'elision placeholder where code stood (line 9: "# ... rest of the code unchanged ...")',
  ],
  rules: ['replace-large', 'elision'],
});

describe('the hook decision', () => {
  // what core/plan decides for the call with no answers: a file that needs approval is blocked
  const allowed = { ...file(), decision: 'allowed' };
  const blocked = { ...rewrite, decision: 'blocked' };

  it('allow unless the plan blocks something; then ask only where a person can answer', () => {
    expect(verdict([allowed], true)).toBe('allow');
    expect(verdict([allowed, blocked], true)).toBe('ask');
    expect(verdict([allowed, blocked], false)).toBe('deny');
    expect(verdict([], false)).toBe('allow');
  });

  it('the outcome for the harness: deny with the kept ref, ask with the checkpoint, otherwise no opinion', () => {
    const deny = writeOutcome('deny', [allowed, blocked], { kept: 'R', sessionBased: true });
    expect(deny.outcome).toEqual({
      kind: 'deny',
      reason: denyReason([allowed, blocked], 'R', true),
    });
    expect(deny.files.map((f) => f.decision)).toEqual(['allowed', 'blocked']);
    const ask = writeOutcome('ask', [allowed, blocked], { checkpoint: 'CP1' });
    expect(ask.outcome).toEqual({ kind: 'ask', reason: askReason([blocked], 'CP1') });
    expect(ask.files.map((f) => f.decision)).toEqual(['asked', 'asked']);
    const allow = writeOutcome('allow', [allowed], { checkpoint: 'CP2' });
    expect(allow).toEqual({ outcome: { kind: 'none' }, files: [allowed] });
  });
});

describe('words for the model and the person', () => {
  it('a deny says what, why, where it is kept and what to do instead', () => {
    expect(denyReason([rewrite], 'refs/guard/rejected/20261123T081107Z-65329918', false)).toBe(
      'guard refused this write: src/state.py would lose 214 of 270 lines (79%); elision placeholder where code stood (line 9: "# ... rest of the code unchanged ..."). ' +
        'Your version is kept as refs/guard/rejected/20261123T081107Z-65329918. ' +
        'Write the whole file with every line that stays, never a placeholder comment, or change only the lines you mean to change with an edit.',
    );
  });
  it('a delete and a protected path get their own advice; a session base is said', () => {
    const del = file({
      status: 'delete',
      linesDeleted: 270,
      changeRatio: 1,
      needsApproval: true,
      reasons: ['deletes a 270-line file (100+ lines need approval)'],
      rules: ['delete-large'],
    });
    expect(denyReason([del], 'R', true)).toMatch(
      /src\/state\.py would be deleted \(270 lines\)\. \(Measured against the file as it was when this session first touched it\.\) Your version is kept as R\. Do not delete it/,
    );
    const prot = file({
      path: 'guard.config.json',
      needsApproval: true,
      reasons: ['protected path (config "protect")'],
      rules: ['protected'],
    });
    expect(denyReason([prot], 'R', false)).toMatch(/only a person can change it/);
  });
  it('ask names the checkpoint; a loss names the files and the command that brings them back', () => {
    expect(askReason([rewrite], 'CP1')).toMatch(
      /^guard: src\/state\.py would lose 214 of 270 lines \(79%\).*checkpoint CP1 \(guard restore CP1\)\.$/,
    );
    const lost = file({ status: 'delete', linesDeleted: 1, existingLines: 1, needsApproval: true });
    expect(
      lossMessage('git clean -fd', [lost], {
        restore: 'guard restore CP -- src/state.py',
        rewind: 'guard rewind S',
      }),
    ).toBe(
      'guard: the command `git clean -fd` deleted or replaced work: src/state.py was deleted (1 line). Nothing was undone. ' +
        'guard kept the earlier state; to bring it back run: guard restore CP -- src/state.py (or undo everything this session wrote: guard rewind S). ' +
        'Do not carry on as if the files were still there: tell the user, and do not run commands that discard uncommitted work.',
    );
    // a note after the command is said whole, however long the command (a background one's)
    const long = `sleep 3; ${'x'.repeat(100)}`;
    const bg = lossMessage(long, [lost], { restore: 'R', rewind: 'W' }, ' (run in the background)');
    expect(bg).toContain(`\`${long.slice(0, 77)}...\` (run in the background) deleted or replaced`);
    expect(failReason('boom', 'hint')).toBe(
      'guard could not check this tool call and blocked it (fail closed): boom. hint. Tell the user; `guard doctor` shows what is wrong.',
    );
  });
});
