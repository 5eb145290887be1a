import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLI,
  cleanEnv,
  cleanupRepos,
  fixture,
  lines,
  makeRepo,
  type TestRepo,
} from '../helpers.js';
import { spawnGuard } from '../pty.js';

afterAll(cleanupRepos);

/** The rewrite of the 270-line fixture, staged, and a small allowed change beside it. */
function destructiveRepo(): TestRepo {
  const repo = makeRepo({ 'state.py': fixture('state.py'), 'notes.txt': 'a\n' });
  repo.write('state.py', fixture('state_replacement.py'));
  repo.write('notes.txt', 'a\nb\n');
  repo.git(['add', '-A']);
  return repo;
}

/** A protected file (needs approval whatever its size) with three changes far apart: three hunks; a modify, so no whole-file strategies. */
function threeHunks(): TestRepo {
  const base = lines(40);
  const repo = makeRepo({ '.github/workflows/ci.yml': base });
  repo.write(
    '.github/workflows/ci.yml',
    base
      .replace('line 2\n', 'two\n')
      .replace('line 20\n', 'twenty\n')
      .replace('line 38\n', 'thirty-eight\n'),
  );
  repo.git(['add', '-A']);
  return repo;
}

const PROMPT = /Take this hunk \[([^\]]*)\]\? $/;
const keysOf = (screen: string) => PROMPT.exec(screen)![1]!.split(',');

describe('the prompt: keys offered per hunk', () => {
  it('first hunk: no k or K; middle: all four moves; last: no j or J, and j there says "No next hunk"', async () => {
    const repo = threeHunks();
    const s = spawnGuard(['check'], repo.dir);
    expect(keysOf(await s.waitFor(PROMPT))).toEqual([
      'y',
      'n',
      'q',
      'a',
      'd',
      'j',
      'J',
      'g',
      '/',
      'e',
      'v',
      '?',
    ]);
    s.type('J\r');
    const middle = await s.waitFor(PROMPT);
    expect(middle).toContain('(2/3)');
    expect(keysOf(middle)).toEqual([
      'y',
      'n',
      'q',
      'a',
      'd',
      'k',
      'K',
      'j',
      'J',
      'g',
      '/',
      'e',
      'v',
      '?',
    ]);
    s.type('J\r');
    const last = await s.waitFor(PROMPT);
    expect(keysOf(last)).toEqual(['y', 'n', 'q', 'a', 'd', 'k', 'K', 'g', '/', 'e', 'v', '?']);
    s.type('j\r');
    const said = await s.waitFor(PROMPT);
    expect(said).toContain('No next hunk');
    expect(said).not.toContain('@@'); // the hunk is not shown again
    s.type('\x03');
    expect(await s.exit).toBe(1);
  });

  it("hunk headers carry git's function context", async () => {
    const base = 'def first():\n' + lines(20, '    a') + 'def second():\n' + lines(20, '    b');
    const repo = makeRepo({ '.github/workflows/x.py': base });
    repo.write('.github/workflows/x.py', base.replace('    b 15\n', '    B15\n'));
    repo.git(['add', '-A']);
    const s = spawnGuard(['check'], repo.dir);
    expect(await s.waitFor(PROMPT)).toMatch(/^@@ -34,7 \+34,7 @@ def second\(\):/m);
    s.type('\x03');
    expect(await s.exit).toBe(1);
  });

  it('a deletion offers no strategies and no split; a split hunk lists j and k for its pieces', async () => {
    const repo = makeRepo({ 'gone.py': lines(150) });
    repo.git(['rm', '-q', 'gone.py']);
    const s = spawnGuard(['check'], repo.dir);
    const screen = await s.waitFor(PROMPT);
    expect(screen).toContain('Would be lost: 150 of 150 lines');
    expect(keysOf(screen)).toEqual(['y', 'n', 'q', 'a', 'd', 'v', '?']);
    s.type('x\r');
    expect(await s.waitFor(PROMPT)).toContain('No whole-file strategies for a deletion');
    s.type('\x03');
    expect(await s.exit).toBe(1);

    const base = lines(10);
    const repo2 = makeRepo({ '.github/workflows/s.yml': base });
    repo2.write(
      '.github/workflows/s.yml',
      base.replace('line 4\n', 'four\n').replace('line 6\n', 'six\n'),
    );
    repo2.git(['add', '-A']);
    const t = spawnGuard(['check'], repo2.dir);
    expect(keysOf(await t.waitFor(PROMPT))).toContain('s');
    t.type('s\r');
    const split = await t.waitFor(PROMPT);
    expect(split).toContain('Split into 2 hunks.');
    expect(split).toContain('(1/2)');
    expect(keysOf(split)).toEqual(expect.arrayContaining(['j', 'J']));
    expect(keysOf(split)).not.toContain('s');
    t.type('\x03');
    expect(await t.exit).toBe(1);
  });
});

describe("the prompt: the person's side", () => {
  it('? prints the help and nothing else', async () => {
    const repo = destructiveRepo();
    const s = spawnGuard(['check'], repo.dir);
    await s.waitFor(PROMPT);
    s.type('?\r');
    const help = await s.waitFor(PROMPT);
    expect(help).toContain('y - take this hunk');
    expect(help).toContain('v - view the whole diff');
    expect(help).toContain('e - manually edit the current hunk');
    expect(help).not.toContain('@@');
    expect(help).not.toContain('needs approval');
    s.type('\x03');
    expect(await s.exit).toBe(1);
  });

  it('the first screen fits in 24 rows and v pages the whole diff, every line of it', async () => {
    const repo = destructiveRepo();
    const seen = path.join(repo.dir, '.git', 'paged.txt');
    const pager = path.join(repo.dir, '.git', 'pager.sh');
    writeFileSync(pager, `#!/bin/sh\ncat > "${seen}"\n`);
    chmodSync(pager, 0o755);
    const s = spawnGuard(['check'], repo.dir, { PAGER: pager });
    const first = await s.waitFor(PROMPT);
    const rows = first
      .replace(/\r/g, '')
      .split('\n')
      .filter((l, i) => i > 0 || l !== '');
    expect(rows.length).toBeLessThanOrEqual(24);
    expect(first).toContain('guard: state.py needs approval');
    expect(first).toMatch(/more lines? in this hunk: v shows the whole diff/);
    s.type('v\r');
    await s.waitFor(PROMPT);
    const paged = readFileSync(seen, 'utf8').split('\n');
    expect(paged.filter((l) => l.startsWith('-'))).toHaveLength(234);
    expect(paged.filter((l) => l.startsWith('+'))).toHaveLength(20);
    s.type('\x03');
    expect(await s.exit).toBe(1);
  });

  it('Ctrl-C aborts: exit 1, index untouched, no decision recorded, no ref made', async () => {
    const repo = destructiveRepo();
    const index = repo.git(['ls-files', '-s']);
    const s = spawnGuard(['check'], repo.dir);
    await s.waitFor(PROMPT);
    s.type('\x03');
    expect(await s.exit).toBe(1);
    expect(s.output()).toContain('nothing was changed and no decision was recorded');
    expect(repo.git(['ls-files', '-s'])).toBe(index);
    expect(repo.refs('refs/guard/')).toEqual([]);
  });

  it('Ctrl-C in the commit hook: the commit does not happen', async () => {
    const repo = destructiveRepo();
    const head = repo.git(['rev-parse', 'HEAD']).trim();
    repo.write('.git/hooks/pre-commit', `#!/bin/sh\nexec "${process.execPath}" "${CLI}" check\n`);
    chmodSync(path.join(repo.dir, '.git/hooks/pre-commit'), 0o755);
    repo.git(['config', 'core.hooksPath', '.git/hooks']);
    const pty = await import('node-pty');
    const p = pty.spawn('git', ['commit', '-q', '-m', 'agent rewrite'], {
      cwd: repo.dir,
      env: cleanEnv({ CI: undefined, NO_COLOR: '1' }) as Record<string, string>,
    });
    let out = '';
    let sent = false;
    p.onData((d) => {
      out += d;
      if (!sent && PROMPT.test(out)) {
        sent = true;
        p.write('\x03');
      }
    });
    const code = await new Promise<number>((r) => p.onExit((e) => r(e.exitCode)));
    expect(sent).toBe(true);
    expect(code).not.toBe(0);
    expect(repo.git(['rev-parse', 'HEAD']).trim()).toBe(head);
    expect(repo.refs('refs/guard/decisions/')).toEqual([]);
  });

  it('q stops asking: what was decided stands, what is left is blocked as in auto mode (exit 1)', async () => {
    const repo = makeRepo({ '.github/workflows/a.yml': 'a\n', '.github/workflows/b.yml': 'b\n' });
    repo.write('.github/workflows/a.yml', 'A\n');
    repo.write('.github/workflows/b.yml', 'B\n');
    repo.git(['add', '-A']);
    const s = spawnGuard(['check', '--json'], repo.dir);
    await s.waitFor(PROMPT);
    s.type('y\r');
    await s.waitFor(PROMPT);
    s.type('q\r');
    expect(await s.exit).toBe(1);
    const out = s.output();
    const json = JSON.parse(out.slice(out.lastIndexOf('{"ok"')).replace(/\r/g, ''));
    expect(
      json.files.map((f: { path: string; decision: string; decider: string }) => [
        f.path,
        f.decision,
        f.decider,
      ]),
    ).toEqual([
      ['.github/workflows/a.yml', 'approved', 'person'],
      ['.github/workflows/b.yml', 'blocked', 'auto'],
    ]);
    expect(repo.git(['diff', '--cached', '--name-only']).trim().split('\n')).toHaveLength(2); // blocked changes nothing
  });

  it('refusing everything staged aborts the commit instead of making it empty', async () => {
    const repo = makeRepo({ 'state.py': fixture('state.py') });
    const head = repo.git(['rev-parse', 'HEAD']).trim();
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['add', '-A']);
    repo.write('.git/hooks/pre-commit', `#!/bin/sh\nexec "${process.execPath}" "${CLI}" check\n`);
    chmodSync(path.join(repo.dir, '.git/hooks/pre-commit'), 0o755);
    repo.git(['config', 'core.hooksPath', '.git/hooks']);
    const pty = await import('node-pty');
    const p = pty.spawn('git', ['commit', '-q', '--allow-empty', '-m', 'agent rewrite'], {
      cwd: repo.dir,
      env: cleanEnv({ CI: undefined, NO_COLOR: '1' }) as Record<string, string>,
    });
    let out = '';
    let sent = false;
    p.onData((d) => {
      out += d;
      if (!sent && PROMPT.test(out)) {
        sent = true;
        p.write('n\r');
      }
    });
    const code = await new Promise<number>((r) => p.onExit((e) => r(e.exitCode)));
    expect(code).not.toBe(0);
    expect(out).toContain('every staged change was refused: the commit is not made');
    expect(repo.git(['rev-parse', 'HEAD']).trim()).toBe(head);
    const [ref] = repo.refs('refs/guard/rejected/');
    expect(repo.git(['show', `${ref}:state.py`])).toBe(fixture('state_replacement.py'));
  });

  it('a name with control characters is shown C-quoted, never raw', async () => {
    const name = 'evil\x1b[2J\r.py';
    const repo = makeRepo({ [name]: lines(150) });
    repo.git(['rm', '-q', '--', name]);
    const s = spawnGuard(['check'], repo.dir);
    const screen = await s.waitFor(PROMPT);
    expect(screen).toContain('guard: "evil\\033[2J\\r.py" needs approval');
    expect(screen).not.toContain('\x1b[2J');
    s.type('n\r');
    expect(await s.exit).toBe(1);
    repo.git(['add', '-A']);
    const blocked = repo.guard(['check']);
    expect(blocked.code).toBe(1);
    expect(blocked.stdout + blocked.stderr).toContain('"evil\\033[2J\\r.py"');
    expect(blocked.stdout + blocked.stderr).not.toContain('\x1b[2J');
  });
});

describe('the prompt: e edits the hunk by hand, as git add -p', () => {
  const FILE = '.github/workflows/e.yml';
  const base = lines(10);
  const proposal = base.replace('line 5\n', 'line 5\nadded one\nadded two\n');
  /** A protected file (asked whatever its size) whose one hunk adds two lines. */
  function adding(): TestRepo {
    const repo = makeRepo({ [FILE]: base });
    repo.write(FILE, proposal);
    repo.git(['add', '-A']);
    return repo;
  }
  /** $EDITOR: node running `body` on the file git would hand it (f); what it was given is kept in .git/given.diff. */
  function editor(repo: TestRepo, body: string): Record<string, string | undefined> {
    const script = path.join(repo.dir, '.git', 'edit.cjs');
    const given = path.join(repo.dir, '.git', 'given.diff');
    writeFileSync(
      script,
      `const fs = require('fs'); const f = process.argv[2]; fs.copyFileSync(f, ${JSON.stringify(given)}); ${body}\n`,
    );
    return { EDITOR: `'${process.execPath}' '${script}'`, VISUAL: undefined, TERM: 'xterm' };
  }

  it('an editor that removes a + line: that edited hunk is what is taken (staged), the work tree keeps the whole change', async () => {
    const repo = adding();
    const env = editor(
      repo,
      `fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace('+added two\\n', ''));`,
    );
    const s = spawnGuard(['check'], repo.dir, env);
    const screen = await s.waitFor(PROMPT);
    expect(keysOf(screen)).toEqual(['y', 'n', 'q', 'a', 'd', 'e', 'v', '?']);
    s.type('e\r');
    expect(await s.exit).toBe(0);
    const given = readFileSync(path.join(repo.dir, '.git', 'given.diff'), 'utf8');
    expect(given).toMatch(
      /^@@ -3,6 \+3,8 @@.*\n line 3\n line 4\n line 5\n\+added one\n\+added two\n line 6\n/m,
    );
    expect(given).toContain(
      "# To remove '-' lines, make them ' ' lines (context).\n# To remove '+' lines, delete them.\n# Lines starting with # will be removed.\n",
    );
    expect(repo.git(['show', `:${FILE}`])).toBe(base.replace('line 5\n', 'line 5\nadded one\n'));
    expect(repo.read(FILE)).toBe(proposal);
  });

  it('an editor that breaks the hunk: "Your edited hunk does not apply", and the original hunk is asked about again', async () => {
    const repo = adding();
    const env = editor(
      repo,
      `fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace(' line 4\\n', ' line four\\n'));`,
    );
    const s = spawnGuard(['check'], repo.dir, env);
    await s.waitFor(PROMPT);
    s.type('e\r');
    const again = await s.waitFor(PROMPT);
    expect(again).toContain('Your edited hunk does not apply');
    expect(again).toMatch(/^@@ -3,6 \+3,8 @@.*\r?\n line 3\r?\n line 4\r?\n/m); // the original, shown again
    expect(again).toContain('+added two');
    expect(again).toContain('(1/1) Take this hunk');
    s.type('y\r');
    expect(await s.exit).toBe(0);
    expect(repo.git(['show', `:${FILE}`])).toBe(proposal); // the original hunk, not the broken edit
  });

  it('the editor has the terminal: the keys typed while it runs are its own, as with vi', async () => {
    const repo = adding();
    const script = path.join(repo.dir, '.git', 'typed.sh');
    // reads a line from the terminal, as an interactive editor does, and writes it in place of a + line
    writeFileSync(
      script,
      '#!/bin/sh\nprintf "EDITOR-READY\\n"\nread line\nsed -i "s/^+added one$/+$line/" "$1"\n',
    );
    chmodSync(script, 0o755);
    const s = spawnGuard(['check'], repo.dir, { EDITOR: script, VISUAL: undefined });
    await s.waitFor(PROMPT);
    s.type('e\r');
    await s.waitFor('EDITOR-READY');
    await new Promise((r) => setTimeout(r, 200));
    s.type('typed in the editor\r');
    expect(await s.exit).toBe(0);
    expect(repo.git(['show', `:${FILE}`])).toBe(
      base.replace('line 5\n', 'line 5\ntyped in the editor\nadded two\n'),
    );
  });

  it('not on a deletion: e there says it cannot edit', async () => {
    const repo = makeRepo({ 'gone.py': lines(150) });
    repo.git(['rm', '-q', 'gone.py']);
    const s = spawnGuard(['check'], repo.dir, editor(repo, ''));
    expect(keysOf(await s.waitFor(PROMPT))).not.toContain('e');
    s.type('e\r');
    expect(await s.waitFor(PROMPT)).toContain('Sorry, cannot edit this hunk');
    s.type('\x03');
    expect(await s.exit).toBe(1);
    expect(existsSync(path.join(repo.dir, '.git', 'given.diff'))).toBe(false);
  });
});
