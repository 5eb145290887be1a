import { existsSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, lines, makeRepo, type TestRepo } from '../helpers.js';
import { codexPayload } from './codex-payload.js';
import { geminiCalls, hookAsync } from './gemini-calls.js';

/**
 * holes7 (docs/reliability/holes7.md): adv8's open holes closed, then attacked. Through the real
 * door: `guard hook gemini` / `codex` with the payloads the harness sends (HARNESSES.md), only the
 * events `guard init` installs (no after event on writes), real git in a temp repository.
 */
afterAll(cleanupRepos);

/** Set by a test that runs with one ref per step (GUARD_SESSION_CHAIN=0), as before chains. */
let extraEnv: Record<string, string> = {};

const { hook, g, denied, why, startBackground, write, other } = geminiCalls(() => extraEnv);

/** A foreground shell call: BeforeTool, the command's work (done by the test), AfterTool. */
function shell(repo: TestRepo, command: string, work: () => void, session = 'g1') {
  const c = { command };
  expect(denied(g(repo, 'BeforeTool', 'run_shell_command', c, session))).toBe(false);
  work();
  return g(repo, 'AfterTool', 'run_shell_command', c, session);
}

describe('guard rewind: ignored files the session took (kept beside the checkpoint tree)', () => {
  it('a foreground command removed ignored files, names with spaces and unicode: rewind puts them back', () => {
    const repo = makeRepo({ 'a.py': lines(5), '.gitignore': '.env\nlocal/\n' });
    repo.write('.env', 'SECRET=1\n');
    repo.write('local/my notes é.md', lines(40));
    const after = shell(repo, 'rm -rf .env local', () => {
      unlinkSync(path.join(repo.dir, '.env'));
      rmSync(path.join(repo.dir, 'local'), { recursive: true });
    });
    expect(JSON.stringify(after.json)).toContain('.env');
    const rw = repo.guardJson(['rewind', 'g1']);
    expect(rw.code).toBe(0);
    expect(repo.read('.env')).toBe('SECRET=1\n');
    expect(repo.read('local/my notes é.md')).toBe(lines(40));
  });

  it('git clean -fdX (the real command) then guard rewind: the ignored files come back', () => {
    const repo = makeRepo({ 'a.py': lines(5), '.gitignore': '.env\nbuild/\n' });
    repo.write('.env', 'SECRET=1\n');
    repo.write('build/out.txt', 'built\n');
    shell(repo, 'git clean -fdX', () => repo.git(['clean', '-fdX']));
    expect(existsSync(path.join(repo.dir, '.env'))).toBe(false);
    expect(repo.guardJson(['rewind', 'g1']).code).toBe(0);
    expect(repo.read('.env')).toBe('SECRET=1\n');
    expect(repo.read('build/out.txt')).toBe('built\n');
  });

  it('an ignored file the command overwrote, then the person changed: left as it is, said', () => {
    const repo = makeRepo({ 'a.py': lines(5), '.gitignore': '.env\n' });
    repo.write('.env', 'SECRET=1\n');
    shell(repo, 'echo x > .env', () => writeFileSync(path.join(repo.dir, '.env'), 'x\n'));
    writeFileSync(path.join(repo.dir, '.env'), 'PERSON=2\n');
    const rw = repo.guard(['rewind', 'g1']);
    expect(rw.code).toBe(0);
    expect(repo.read('.env')).toBe('PERSON=2\n');
    expect(rw.stderr).toContain(".env (kept outside git's tree): changed since");
  });

  it('an ignored file the command overwrote and nobody touched since: put back', () => {
    const repo = makeRepo({ 'a.py': lines(5), '.gitignore': '.env\n' });
    repo.write('.env', 'SECRET=1\n');
    shell(repo, 'echo x > .env', () => writeFileSync(path.join(repo.dir, '.env'), 'x\n'));
    expect(repo.guardJson(['rewind', 'g1']).code).toBe(0);
    expect(repo.read('.env')).toBe('SECRET=1\n');
  });

  it('an ignored file the session never touched, removed by the person: not recreated', () => {
    const repo = makeRepo({ 'a.py': lines(5), '.gitignore': '*.log\n.env\n' });
    repo.write('.env', 'SECRET=1\n');
    repo.write('old.log', 'log\n');
    shell(repo, 'rm .env', () => unlinkSync(path.join(repo.dir, '.env')));
    unlinkSync(path.join(repo.dir, 'old.log'));
    expect(repo.guardJson(['rewind', 'g1']).code).toBe(0);
    expect(repo.read('.env')).toBe('SECRET=1\n');
    expect(existsSync(path.join(repo.dir, 'old.log'))).toBe(false);
  });

  it("another session's command removed an ignored file after this session's background command started: not this session's to put back", () => {
    const repo = makeRepo({ 'a.py': lines(5), '.gitignore': '.env\n' });
    repo.write('.env', 'SECRET=1\n');
    const bg = { command: 'sleep 9', is_background: true };
    expect(denied(g(repo, 'BeforeTool', 'run_shell_command', bg, 'g1'))).toBe(false);
    g(repo, 'AfterTool', 'run_shell_command', bg, 'g1');
    shell(repo, 'rm .env', () => unlinkSync(path.join(repo.dir, '.env')), 'g2');
    expect(repo.guardJson(['rewind', 'g1']).code).toBe(0);
    expect(existsSync(path.join(repo.dir, '.env'))).toBe(false);
  });
});

describe("a background command takes back what the session's own write left (no after event on writes)", () => {
  it('told once, and the restore it names brings back what the write left (a name with a space and unicode)', () => {
    const rel = 'src/my file é.py';
    const repo = makeRepo({ [rel]: lines(300) });
    startBackground(repo, "sleep 1; git checkout -- 'src/my file é.py'");
    const edited = lines(300) + lines(200, 'mine');
    write(repo, rel, edited);
    repo.git(['checkout', '--', rel]);
    const next = other(repo);
    expect(denied(next)).toBe(true);
    expect(why(next)).toContain('my file é.py lost 200 of its 500 lines');
    const restore = /guard restore (\S+) -- /.exec(why(next));
    expect(restore).not.toBeNull();
    expect(repo.guard(['restore', restore![1]!, '--', rel]).code).toBe(0);
    expect(repo.read(rel)).toBe(edited);
    // one time: the same call again runs
    expect(denied(other(repo))).toBe(false);
  });

  it('the same with one ref per step (GUARD_SESSION_CHAIN=0): the result is kept and told', () => {
    extraEnv = { GUARD_SESSION_CHAIN: '0' };
    try {
      const repo = makeRepo({ 'keep.py': lines(300) });
      startBackground(repo, 'sleep 1; git checkout -- keep.py');
      const edited = lines(300) + lines(200, 'mine');
      write(repo, 'keep.py', edited);
      repo.git(['checkout', '--', 'keep.py']);
      const next = other(repo);
      expect(why(next)).toContain('keep.py lost 200 of its 500 lines');
      const restore = /guard restore (\S+) -- keep\.py/.exec(why(next));
      expect(repo.guard(['restore', restore![1]!, '--', 'keep.py']).code).toBe(0);
      expect(repo.read('keep.py')).toBe(edited);
      // no scratch ref left behind by the result commit
      expect(repo.git(['for-each-ref', 'refs/guard/tmp/'])).toBe('');
      // (and one ref per step indeed: no chain)
      const steps = repo.git(['for-each-ref', '--format=%(refname)', 'refs/guard/sessions/']);
      expect(steps).not.toMatch(/\/chain$/m);
      expect(steps.trim().split('\n').length).toBeGreaterThan(2);
    } finally {
      extraEnv = {};
    }
  });

  it("a write's step with its result as a second parent: doctor, guard log and guard rewind read the session as before", () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    startBackground(repo, 'sleep 30');
    write(repo, 'keep.py', lines(300) + lines(200, 'mine'));
    write(repo, 'new.py', lines(20, 'new'));
    const doctor = repo.guard(['doctor']);
    // (a test repository has no guard hooks: that FAIL aside, the chain and the journal read whole)
    const fails = doctor.stdout.split('\n').filter((l) => l.startsWith('FAIL'));
    expect(fails.filter((l) => !l.includes('core.hooksPath'))).toEqual([]);
    expect(doctor.stdout).toMatch(/ok +refs\/guard\/.*1 session chain/);
    const log = repo.guardJson(['log', '--session', 'g1']);
    expect(log.code).toBe(0);
    expect(JSON.stringify(log.json)).toContain('new.py');
    expect(repo.guardJson(['rewind', 'g1']).code).toBe(0);
    expect(repo.read('keep.py')).toBe(lines(300));
    expect(existsSync(path.join(repo.dir, 'new.py'))).toBe(false);
  });

  it('a call between the write and the loss: still told, and the restore named holds the write', () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    startBackground(repo, 'sleep 1; git checkout -- keep.py');
    const edited = lines(300) + lines(200, 'mine');
    write(repo, 'keep.py', edited);
    expect(denied(other(repo, 'a.py'))).toBe(false);
    repo.write('a.py', 'y = 2\n');
    repo.git(['checkout', '--', 'keep.py']);
    const next = other(repo, 'b.py');
    expect(denied(next)).toBe(true);
    expect(why(next)).toContain('keep.py');
    const restore = /guard restore (\S+) -- keep\.py/.exec(why(next));
    expect(restore).not.toBeNull();
    expect(repo.guard(['restore', restore![1]!, '--', 'keep.py']).code).toBe(0);
    expect(repo.read('keep.py')).toBe(edited);
  });

  it('the session writes the same file again: what the last write left is what counts (nothing told)', () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    startBackground(repo, 'sleep 30');
    write(repo, 'keep.py', lines(300) + lines(200, 'mine'));
    write(repo, 'keep.py', lines(300) + lines(200, 'mine') + 'x = 1\n');
    expect(denied(other(repo))).toBe(false);
  });

  it('a write the harness never ran reads as taken back: said as "or the write did not run"', () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    startBackground(repo, 'sleep 30');
    const w = {
      file_path: path.join(repo.dir, 'keep.py'),
      content: lines(300) + lines(200, 'mine'),
    };
    expect(denied(g(repo, 'BeforeTool', 'write_file', w))).toBe(false);
    // (the person declined it in the harness: nothing written)
    const next = other(repo);
    expect(denied(next)).toBe(true);
    expect(why(next)).toContain('or the write did not run');
  });

  it("two sessions, one background command each: a write of g2 undone by g1's command is told to g2 alone", () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    startBackground(repo, 'sleep 1; git checkout -- keep.py', 'g1');
    startBackground(repo, 'sleep 30', 'g2');
    const edited = lines(300) + lines(200, 'mine');
    write(repo, 'keep.py', edited, 'g2');
    repo.git(['checkout', '--', 'keep.py']);
    const w = (s: string) =>
      g(
        repo,
        'BeforeTool',
        'write_file',
        { file_path: path.join(repo.dir, `${s}.py`), content: 'y\n' },
        s,
      );
    expect(denied(w('g1'))).toBe(false);
    expect(why(w('g2'))).toContain('keep.py lost 200');
  });
});

describe('holes7 adversary: detached commands and odd names', () => {
  function codex(repo: TestRepo, event: string, tool: string, input: object, id: string) {
    return hook(repo, 'codex', codexPayload(repo, event, tool, input, id));
  }
  const codexWhy = (r: { json: any }): string =>
    r.json?.hookSpecificOutput?.permissionDecisionReason ?? '';

  it.each([
    "bash -c '(sleep 1; rm keep.py) &'",
    // (holes8: with its `&`; nohup alone runs in the foreground, below)
    'nohup sh -c "sleep 1; rm keep.py" >/dev/null 2>&1 &',
    'setsid -f sh -c "sleep 1; rm keep.py"',
  ])('codex: %s is told at the next call', (command) => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    codex(repo, 'PreToolUse', 'Bash', { command }, 'b1');
    codex(repo, 'PostToolUse', 'Bash', { command }, 'b1');
    unlinkSync(path.join(repo.dir, 'keep.py'));
    const patch = { command: '*** Begin Patch\n*** Add File: n.py\n+n = 1\n*** End Patch\n' };
    expect(codexWhy(codex(repo, 'PreToolUse', 'apply_patch', patch, 'p1'))).toContain('keep.py');
  });

  it('a foreground command that ends with && (not &) opens nothing: the next call is not checked', () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    const command = 'ls && echo done 2>&1';
    codex(repo, 'PreToolUse', 'Bash', { command }, 'b1');
    codex(repo, 'PostToolUse', 'Bash', { command }, 'b1');
    // a loss after the after event with nothing running on is not the command's (no check, no word)
    unlinkSync(path.join(repo.dir, 'keep.py'));
    const patch = { command: '*** Begin Patch\n*** Add File: n.py\n+n = 1\n*** End Patch\n' };
    expect(codexWhy(codex(repo, 'PreToolUse', 'apply_patch', patch, 'p1'))).toBe('');
  });

  // holes8: nohup runs its command in the foreground (deaf to SIGHUP); read as detached, every
  // later call of the session got a whole-tree checkpoint and a check for 30 minutes
  it('nohup without & (a foreground command) opens nothing: the next call is not checked', () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    const command = 'nohup ls > out.log 2>&1';
    codex(repo, 'PreToolUse', 'Bash', { command }, 'b1');
    codex(repo, 'PostToolUse', 'Bash', { command }, 'b1');
    unlinkSync(path.join(repo.dir, 'keep.py'));
    const patch = { command: '*** Begin Patch\n*** Add File: n.py\n+n = 1\n*** End Patch\n' };
    expect(codexWhy(codex(repo, 'PreToolUse', 'apply_patch', patch, 'p1'))).toBe('');
  });

  it('a file whose name holds a new line, while a background command is open: refused as on main, and later calls still run', () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    const bg = { command: 'sleep 30', is_background: true };
    expect(denied(g(repo, 'BeforeTool', 'run_shell_command', bg))).toBe(false);
    g(repo, 'AfterTool', 'run_shell_command', bg);
    const odd = 'a\nb.py';
    const w = { file_path: path.join(repo.dir, odd), content: lines(120) };
    // refused, fail closed, as on main (the session base is read by an object name on cat-file's
    // lines); whatever the harness then does, the session is not stuck
    const first = g(repo, 'BeforeTool', 'write_file', w);
    expect(why(first)).toContain('object name with a newline');
    writeFileSync(path.join(repo.dir, odd), lines(120));
    const next = g(repo, 'BeforeTool', 'write_file', {
      file_path: path.join(repo.dir, 'c.py'),
      content: 'c\n',
    });
    expect(why(next)).toBe('');
    expect(denied(next)).toBe(false);
  });
});

describe('holes7 adversary: rewind of kept files against what stands there now', () => {
  it('a file now stands where the kept folder was: rewind finishes, puts back what it can, and leaves that path', () => {
    const repo = makeRepo({ 'a.py': lines(5), '.gitignore': '.env\nlocal\n' });
    repo.write('.env', 'SECRET=1\n');
    repo.write('local/notes.md', lines(40));
    shell(repo, 'rm -rf .env local', () => {
      unlinkSync(path.join(repo.dir, '.env'));
      rmSync(path.join(repo.dir, 'local'), { recursive: true });
    });
    // the person puts a file named local there
    writeFileSync(path.join(repo.dir, 'local'), 'mine\n');
    const rw = repo.guard(['rewind', 'g1']);
    expect(rw.code).toBe(0);
    expect(repo.read('.env')).toBe('SECRET=1\n');
    expect(repo.read('local')).toBe('mine\n');
    expect(rw.stderr).toContain('local/notes.md');
  });
});

describe('holes7 adversary, not of this change: the same for a tracked folder', () => {
  // rewind's tracked writes (planPutBack) did not look for what stands in the way, as restore's do
  // (planAroundObstacles): a file where the session's deleted folder was failed the rewind half way
  // (exit 3 after the undo checkpoint); now that file is said and the rest put back
  it('a file now stands where a tracked folder the command deleted was: rewind finishes', () => {
    const repo = makeRepo({ 'src/a.py': lines(300), 'b.py': lines(300) });
    shell(repo, 'rm -rf src b.py', () => {
      rmSync(path.join(repo.dir, 'src'), { recursive: true });
      unlinkSync(path.join(repo.dir, 'b.py'));
    });
    writeFileSync(path.join(repo.dir, 'src'), 'mine\n');
    const rw = repo.guard(['rewind', 'g1']);
    expect(rw.code).toBe(0);
    expect(repo.read('b.py')).toBe(lines(300));
    expect(repo.read('src')).toBe('mine\n');
    expect(rw.stderr).toContain('src/a.py: not put back');
  });
});

describe('holes7 adversary: two writes of the session at once while a background command is open', () => {
  it('both results are kept (the chain raced), and both files taken back are told', async () => {
    const repo = makeRepo({ 'a.py': lines(300, 'a'), 'b.py': lines(300, 'b') });
    const bg = { command: 'sleep 1; git checkout -- .', is_background: true };
    expect(denied(g(repo, 'BeforeTool', 'run_shell_command', bg))).toBe(false);
    g(repo, 'AfterTool', 'run_shell_command', bg);
    const edit = (f: string) => lines(300, f[0]!) + lines(200, 'mine');
    const call = (f: string) => ({
      session_id: 'g1',
      cwd: repo.dir,
      hook_event_name: 'BeforeTool',
      tool_name: 'write_file',
      tool_input: { file_path: path.join(repo.dir, f), content: edit(f) },
    });
    const both = await Promise.all([hookAsync(repo, call('a.py')), hookAsync(repo, call('b.py'))]);
    expect(both.map((r) => r.code)).toEqual([0, 0]);
    expect(both.map((r) => r.out)).not.toContain('deny');
    repo.write('a.py', edit('a.py'));
    repo.write('b.py', edit('b.py'));
    repo.git(['checkout', '--', '.']);
    const next = g(repo, 'BeforeTool', 'write_file', {
      file_path: path.join(repo.dir, 'c.py'),
      content: 'c\n',
    });
    expect(why(next)).toContain('a.py lost 200');
    expect(why(next)).toContain('b.py lost 200');
  });
});
