import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, fixture, laneWrite, lines, makeRepo, startLane } from '../helpers.js';

afterAll(cleanupRepos);

/*
 * --timeout bounds guard's reading. It is checked up to the point of no
 * return (before the first ref or file is written) and disarmed there: a
 * timeout either stops guard before anything was written, or not at all.
 * The fault pause (src/runtime/faults.ts) blocks guard at a named point for
 * longer than the timeout.
 */
describe('--timeout and the point of no return', () => {
  it('a deadline that passes before the point of no return: E_TIMEOUT, no refs, index untouched', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py') });
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['add', '-A']);
    const index = repo.git(['ls-files', '-s']);
    const { code, json } = repo.guardJson(['check', '--timeout', '1'], {
      env: { GUARD_FAULT_PAUSE: 'point-of-no-return', GUARD_FAULT_PAUSE_MS: '1500' },
    });
    expect(json.error?.code).toBe('E_TIMEOUT');
    expect(code).toBe(1);
    expect(repo.refs()).toEqual([]);
    expect(repo.git(['ls-files', '-s'])).toBe(index);
  });

  it('check: a deadline that passes after the records are written does not stop it', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py'), 'small.txt': lines(5) });
    // a commit past the gate, so that check reads HEAD's change (git processes) after its records
    expect(repo.guard(['check']).code).toBe(0);
    repo.write('small.txt', lines(6));
    repo.commitAll('past the gate');
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['add', '-A']);
    const { code, json } = repo.guardJson(['check', '--timeout', '1'], {
      env: { GUARD_FAULT_PAUSE: 'check:after-records', GUARD_FAULT_PAUSE_MS: '1500' },
    });
    expect(json.error).toBeUndefined();
    expect(code).toBe(1);
    expect(json).toMatchObject({ ok: true, blocked: 1 });
    expect(repo.git(['cat-file', 'blob', `${json.files[0].ref}:state.py`])).toBe(
      fixture('state_replacement.py'),
    );
  });

  it('review: a deadline that passes after the rejected refs are written does not stop the merge', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py'), 'notes.txt': lines(10) });
    const lane = startLane(repo, 'agent');
    laneWrite(lane, 'state.py', fixture('state_replacement.py'));
    laneWrite(lane, 'notes.txt', lines(12));
    const { code, json } = repo.guardJson(['review', 'agent', '--auto', '--timeout', '1'], {
      env: { GUARD_FAULT_PAUSE: 'review:after-refs', GUARD_FAULT_PAUSE_MS: '1500' },
    });
    expect(json.error).toBeUndefined();
    expect(code).toBe(1);
    expect(json).toMatchObject({ ok: true, merged: 1, blocked: 1 });
    expect(repo.read('notes.txt')).toBe(lines(12));
    expect(repo.git(['diff', '--cached', '--name-only']).trim()).toBe('notes.txt');
    const blocked = json.files.find((f: any) => f.path === 'state.py');
    expect(repo.git(['cat-file', 'blob', `${blocked.ref}:state.py`])).toBe(
      fixture('state_replacement.py'),
    );
  });
});
