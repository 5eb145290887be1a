/**
 * The friction benchmark (issue 23 item 4): scripts/friction.mjs replays a
 * repository's last N non-merge commits as `guard check --auto` judges them,
 * and its in-process replay agrees with the real `guard check` (--exact).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, cleanEnv, makeRepo } from '../helpers.js';

const SCRIPT = path.join(ROOT, 'scripts', 'friction.mjs');
const lines = (n: number, salt = '') =>
  Array.from({ length: n }, (_, i) => `line ${i} ${salt}`).join('\n') + '\n';

function friction(dir: string, extra: string[] = []): any {
  const r = spawnSync(process.execPath, [SCRIPT, dir, '10', '--json', ...extra], {
    env: cleanEnv(),
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

describe('friction benchmark', () => {
  const repo = makeRepo({
    'big.txt': lines(150),
    'small.txt': lines(5),
    'src/a.js': 'function a() {\n  one();\n  two();\n  three();\n}\n',
  });
  repo.write('.github/workflows/ci.yml', 'on: push\n');
  repo.commitAll('a workflow pin bump'); // protected only
  repo.write('small.txt', lines(6));
  repo.commitAll('a small edit'); // nothing
  repo.git(['rm', '-q', 'big.txt']);
  repo.commitAll('a large deletion'); // delete-large
  repo.write('src/a.js', 'function a() {\n  // ... existing code ...\n}\n');
  repo.commitAll('a truncation'); // elision
  repo.git(['checkout', '-q', '-b', 'side']);
  repo.write('side.txt', 'x\n');
  repo.commitAll('side');
  repo.git(['checkout', '-q', 'main']);
  repo.git(['merge', '-q', '--no-ff', '-m', 'a merge', 'side']); // merges are not replayed
  afterAll(() => repo.cleanup());

  it('counts the commits that would ask, why, and lists those that asked for more than a protected path', () => {
    const r = friction(repo.dir);
    expect(r.commits).toBe(6); // base, pin bump, small edit, deletion, truncation, side; not the merge
    expect(r.asks).toBe(3);
    expect(r.onlyProtected).toBe(1);
    expect(r.other.map((c: any) => c.subject).sort()).toEqual(['a large deletion', 'a truncation']);
    expect(r.byRule).toMatchObject({ protected: 1, 'delete-large': 1, elision: 1 });
  });

  it('agrees with guard check --auto run per commit (--exact)', () => {
    const exact = friction(repo.dir, ['--exact']);
    const inProcess = friction(repo.dir);
    // --exact skips the root commit (check would judge it against the empty tree): it asked for nothing here
    expect({
      asks: exact.asks,
      onlyProtected: exact.onlyProtected,
      other: exact.other.map((c: any) => c.sha),
    }).toEqual({
      asks: inProcess.asks,
      onlyProtected: inProcess.onlyProtected,
      other: inProcess.other.map((c: any) => c.sha),
    });
  });

  it('a missing repository is one line and exit 2', () => {
    const r = spawnSync(process.execPath, [SCRIPT, path.join(repo.dir, 'no-such')], {
      env: cleanEnv(),
      encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
