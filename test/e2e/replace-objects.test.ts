import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, fixture, makeRepo } from '../helpers.js';

afterAll(cleanupRepos);

/*
 * `git replace A B` makes every git command that reads A see B instead,
 * without changing any object id. An agent can use it to make HEAD (or a
 * blob, or a pull request's head) look like what it proposes, so that the
 * diff against it is empty. guard runs git with replace objects off
 * (DESIGN "No back doors") and judges the objects that are really there.
 */
describe('replace objects are ignored', () => {
  it('check: HEAD replaced by a commit holding the staged tree still blocks the rewrite', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py') });
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['add', '-A']);
    const fake = repo
      .git(
        ['commit-tree', repo.git(['write-tree']).trim(), '-p', 'HEAD', '-m', 'looks like HEAD'],
        {},
      )
      .trim();
    repo.git(['replace', 'HEAD', fake]);
    // git itself is fooled: nothing staged against HEAD
    expect(repo.gitRun(['diff', '--cached', '--quiet']).code).toBe(0);

    const { code, json } = repo.guardJson(['check']);
    expect(code).toBe(1);
    expect(json.files.map((f: any) => [f.path, f.status, f.decision])).toEqual([
      ['state.py', 'replace', 'blocked'],
    ]);
    expect(repo.git(['cat-file', 'blob', `${json.files[0].ref}:state.py`])).toBe(
      fixture('state_replacement.py'),
    );
  });

  it('check: a blob of HEAD replaced by the staged blob is still measured as it is', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py') });
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['add', '-A']);
    repo.git([
      'replace',
      repo.git(['rev-parse', 'HEAD:state.py']).trim(),
      repo.git(['rev-parse', ':state.py']).trim(),
    ]);
    expect(repo.git(['show', 'HEAD:state.py'])).toBe(fixture('state_replacement.py'));

    const { code, json } = repo.guardJson(['check']);
    expect(code).toBe(1);
    expect(json.files[0]).toMatchObject({
      path: 'state.py',
      status: 'replace',
      existingLines: 270,
      decision: 'blocked',
    });
  });

  it('ci: a pull request head replaced by a commit holding the base tree still fails', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py') });
    repo.git(['checkout', '-q', '-b', 'pr']);
    repo.write('state.py', fixture('state_replacement.py'));
    repo.commitAll('agent rewrites state.py');
    const fake = repo
      .git(['commit-tree', 'main^{tree}', '-p', 'main', '-m', 'nothing to see'], {})
      .trim();
    repo.git(['replace', 'pr', fake]);
    expect(repo.gitRun(['diff', '--quiet', 'main', 'pr']).code).toBe(0);

    const { code, json } = repo.guardJson(['ci', '--base', 'main', '--head', 'pr']);
    expect(code).toBe(1);
    expect(json.files.map((f: any) => [f.path, f.status, f.decision])).toEqual([
      ['state.py', 'replace', 'blocked'],
    ]);
  });
});
