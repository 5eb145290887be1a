import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, fixture, lines, makeRepo } from '../helpers.js';

afterAll(cleanupRepos);

describe("reasons as data: JSON gives each reason's rule id beside its text", () => {
  it('check, ci and the decision record carry `rules` aligned with `reasons`', () => {
    const repo = makeRepo({
      'state.py': fixture('state.py'),
      'old.txt': lines(150),
      'small.txt': lines(5),
    });
    repo.git(['checkout', '-q', '-b', 'pr']);
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['rm', '-q', 'old.txt']);
    repo.write('small.txt', lines(6));
    repo.git(['add', '-A']);

    const check = repo.guardJson(['check']);
    expect(check.code).toBe(1);
    const byPath = Object.fromEntries(check.json.files.map((f: any) => [f.path, f]));
    expect(byPath['state.py'].rules).toEqual(['replace-large']);
    expect(byPath['old.txt'].rules).toEqual(['delete-large']);
    expect(byPath['small.txt']).toMatchObject({ rules: [], reasons: [] });
    for (const f of check.json.files) expect(f.reasons).toHaveLength(f.rules.length);
    const record = JSON.parse(repo.git(['log', '-1', '--format=%b', check.json.record]).trim());
    expect(record.decisions.find((d: any) => d.path === 'old.txt').rules).toEqual(['delete-large']);

    repo.git(['commit', '-q', '--no-verify', '-m', 'agent']);
    const ci = repo.guardJson(['ci', '--base', 'main']);
    expect(ci.code).toBe(1);
    expect(Object.fromEntries(ci.json.files.map((f: any) => [f.path, f.rules]))).toEqual({
      'old.txt': ['delete-large'],
      'small.txt': [],
      'state.py': ['replace-large'],
    });
  });
});
