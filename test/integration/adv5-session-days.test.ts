import { afterAll, describe, expect, it } from 'vitest';
import { write } from '../../src/flows/gates/write.js';
import { cleanupRepos, makeRepo, type TestRepo } from '../helpers.js';

/**
 * adv5 (docs/reliability/adv5.md): `guard write --session S` across midnight (UTC). The day's
 * base starts again each day; the session's base (refs/guard/sessions/cli/<S>/, the file as the
 * session first saw it) is what keeps a session's writes adding up across days. In process, with
 * `now` set: the CLI has no clock of its own to set.
 */

afterAll(() => cleanupRepos());

const src = (n: number) =>
  Array.from({ length: n }, (_, i) => `def f${i}(a, b):\n    return a * ${i} + b\n`).join('');

const DAY1 = '2026-01-01T23:00:00.000Z';
const DAY2 = '2026-01-02T01:00:00.000Z';

async function steps(repo: TestRepo, plan: Array<[string, number]>): Promise<boolean[]> {
  const written: boolean[] = [];
  for (const [at, n] of plan) {
    const r = await write({
      cwd: repo.dir,
      path: 'app.py',
      content: Buffer.from(src(n)),
      auto: true,
      color: false,
      session: 'S1',
      now: new Date(at),
    });
    written.push(r.files[0]!.written);
  }
  return written;
}

/** A session record (as git/session-base.ts sessionEvent writes it) holding an empty app.py. */
function plantSession(repo: TestRepo): void {
  const blob = repo.git(['hash-object', '-w', '--stdin'], { input: '' }).trim();
  const tree = repo.git(['mktree'], { input: `100644 blob ${blob}\tapp.py\n` }).trim();
  const body = {
    v: 1,
    harness: 'cli',
    session: 'S1',
    toolCall: null,
    tool: 'guard write',
    phase: 'pre',
    kind: 'write',
    checkpoint: repo.git(['rev-parse', 'HEAD']).trim(),
    paths: ['app.py'],
    worktree: repo.dir,
    time: '2000-01-01T00:00:00.000Z',
    outcome: 'allowed',
  };
  const msg = `guard session cli S1: write app.py\n\n${JSON.stringify(body)}\n`;
  const commit = repo.git(['commit-tree', tree, '-m', msg]).trim();
  repo.git(['update-ref', 'refs/guard/sessions/cli/S1/00000000T000000Z-00000000', commit]);
}

const PLAN: Array<[string, number]> = [
  [DAY1, 175],
  [DAY1, 150],
  [DAY1, 125],
  [DAY2, 100],
  [DAY2, 75],
];

describe('adv5: a session across midnight', () => {
  it("held: the session base refuses day 2's first write, 200 -> 100 functions against the file as the session first saw it", async () => {
    const repo = makeRepo({ 'app.py': src(200), 'o.txt': 'o\n' });
    expect(await steps(repo, PLAN)).toEqual([true, true, true, false, false]);
  });

  // was a hole (adv5): the session's base was read with for-each-ref over its folder, so a record
  // planted there before the session's first write (an empty app.py) was its base, and across
  // midnight only the new day's base counted (400 -> 150 lines in five allowed writes). Now a
  // named session's records are read as guard's journal has them (holes6).
  it("a session base planted before the session's first write: day 2's writes are still refused", async () => {
    const repo = makeRepo({ 'app.py': src(200), 'o.txt': 'o\n' });
    // guard has written here before: its journal exists
    await write({
      cwd: repo.dir,
      path: 'o.txt',
      content: Buffer.from('p\n'),
      auto: true,
      color: false,
    });
    plantSession(repo);
    expect(await steps(repo, PLAN)).toEqual([true, true, true, false, false]);
  });
});
