import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, fixture, makeRepo } from '../helpers.js';
import { spawnGuard } from '../pty.js';

afterAll(cleanupRepos);

function destructiveRepo() {
  const repo = makeRepo({ 'state.py': fixture('state.py'), 'notes.txt': 'a\n' });
  repo.write('state.py', fixture('state_replacement.py'));
  repo.write('notes.txt', 'a\nb\n');
  repo.git(['add', '-A']);
  return repo;
}

describe('guard check at a terminal', () => {
  it('shows the change and lets a person approve it', async () => {
    const repo = destructiveRepo();
    const staged = repo.git(['ls-files', '-s']);
    const s = spawnGuard(['check'], repo.dir);
    const screen = await s.waitFor(/Take this hunk \[.*\]\? $/);
    expect(screen).toContain('state.py needs approval');
    expect(screen).toMatch(/replace\s+270 lines/);
    expect(screen).toContain('Would be lost: 234 of 270 lines');
    expect(screen).toMatch(/^-"""Session state/m); // a deleted line, in the hunk
    s.type('y\r');
    expect(await s.exit).toBe(0);
    expect(repo.git(['ls-files', '-s'])).toBe(staged);
    const [record] = repo.refs('refs/guard/decisions/');
    const body = repo.git(['log', '-1', '--format=%B', record!]);
    expect(body).toContain('"decision":"approved"');
    expect(body).toContain('"decider":"person"');
    expect(repo.refs('refs/guard/rejected/')).toHaveLength(0);
  });

  it('rejecting unstages the path, keeps the work tree file and the proposal, and checkpoints first', async () => {
    const repo = destructiveRepo();
    const s = spawnGuard(['check'], repo.dir);
    await s.waitFor(/Take this hunk \[.*\]\? $/);
    s.type('?\r');
    await s.waitFor(/leave this hunk out/);
    s.type('n\r');
    expect(await s.exit).toBe(0);
    // index back to HEAD for state.py; the other change is still staged
    expect(repo.git(['diff', '--cached', '--name-only']).trim()).toBe('notes.txt');
    expect(repo.read('state.py')).toBe(fixture('state_replacement.py'));
    const [ref] = repo.refs('refs/guard/rejected/');
    expect(repo.git(['show', `${ref}:state.py`])).toBe(fixture('state_replacement.py'));
    const [cp] = repo.refs('refs/guard/checkpoints/');
    expect(repo.git(['show', `${cp}:state.py`])).toBe(fixture('state_replacement.py'));
    expect(s.output()).toContain('rejected and unstaged');
    expect(s.output()).toMatch(
      /^  state\.py  rejected, unstaged; kept as refs\/guard\/rejected\//m,
    ); // the summary names the file
  });

  it('offers the strategies: b (both) appends the new content to the old and stages the result', async () => {
    const repo = destructiveRepo();
    const s = spawnGuard(['check'], repo.dir);
    await s.waitFor(/Take this hunk \[y,n,q,a,d,s,e,v,r,b,i,x,\?\]\? $/);
    s.type('b\r');
    expect(await s.exit).toBe(0);
    const expected = fixture('state.py') + fixture('state_replacement.py');
    expect(repo.git(['show', ':state.py'])).toBe(expected);
    expect(repo.read('state.py')).toBe(expected);
    const [cp] = repo.refs('refs/guard/checkpoints/');
    expect(repo.git(['show', `${cp}:state.py`])).toBe(fixture('state_replacement.py'));
  });

  it('a strategy never overwrites an edit made after git add: only the index gets the merged file', async () => {
    const repo = destructiveRepo();
    const edited = fixture('state_replacement.py') + '# an unstaged line\n';
    repo.write('state.py', edited);
    const s = spawnGuard(['check'], repo.dir);
    await s.waitFor(/Take this hunk \[.*\]\? $/);
    s.type('b\r');
    expect(await s.exit).toBe(0);
    expect(repo.git(['show', ':state.py'])).toBe(
      fixture('state.py') + fixture('state_replacement.py'),
    );
    expect(repo.read('state.py')).toBe(edited);
  });

  it('insert re-asks on a bad line, then inserts where the person said', async () => {
    const repo = destructiveRepo();
    const s = spawnGuard(['check'], repo.dir);
    await s.waitFor(/Take this hunk \[.*\]\? $/);
    s.type('i\r');
    await s.waitFor(/after which line \(0-270; empty cancels\)\? $/);
    s.type('999\r');
    await s.waitFor(/try again/);
    s.type('2\r');
    expect(await s.exit).toBe(0);
    const old = fixture('state.py').split('\n');
    const expected =
      old.slice(0, 2).join('\n') + '\n' + fixture('state_replacement.py') + old.slice(2).join('\n');
    expect(repo.git(['show', ':state.py'])).toBe(expected);
  });

  it('a commit through the hook can be approved at the terminal', async () => {
    const repo = destructiveRepo();
    // the hook: git runs it with stdin not a terminal; guard opens /dev/tty
    repo.write(
      '.git/hooks/pre-commit',
      `#!/bin/sh\nexec "${process.execPath}" "${(await import('../helpers.js')).CLI}" check\n`,
    );
    repo.git(['config', 'core.hooksPath', '.git/hooks']);
    const { chmodSync } = await import('node:fs');
    chmodSync(`${repo.dir}/.git/hooks/pre-commit`, 0o755);
    const pty = await import('node-pty');
    const { cleanEnv } = await import('../helpers.js');
    const p = pty.spawn('git', ['commit', '-q', '-m', 'agent rewrite'], {
      cwd: repo.dir,
      env: cleanEnv({ CI: undefined, NO_COLOR: '1' }) as Record<string, string>,
    });
    let out = '';
    const exit = new Promise<number>((r) => p.onExit((e) => r(e.exitCode)));
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no prompt:\n${out}`)), 15_000);
      p.onData((d) => {
        out += d;
        if (/Take this hunk/.test(out) && !out.includes('__answered')) {
          out += '__answered';
          clearTimeout(t);
          p.write('y\r');
          resolve();
        }
      });
    });
    expect(await exit).toBe(0);
    expect(repo.git(['log', '-1', '--format=%s']).trim()).toBe('agent rewrite');
  });
});
