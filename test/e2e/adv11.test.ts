import {
  existsSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, lines, makeRepo, outsideDir, type TestRepo } from '../helpers.js';
import { codex, codexRun, hook } from './codex-payload.js';
import { geminiCalls, hookAsync } from './gemini-calls.js';

/**
 * adv11 (docs/reliability/adv11.md): the newest doors attacked through the real door: `guard hook
 * codex` / `gemini` / `claude` as its own process with the payloads the harness sends
 * (HARNESSES.md), real git in a temp repository. What a detached process does after the call's
 * after event is done by the test (each spelling was run for real in bash 5.2 first: the shell
 * returns, the file is gone a second later).
 */
afterAll(cleanupRepos);

describe('adv11: detaching spellings adv10 did not read, told at the next call', () => {
  it.each([
    // -c in a cluster of options after the first, or its script after --
    "bash -ce '(sleep 1; rm keep.py) &'",
    "bash -c -- '(sleep 1; rm keep.py) &'",
    // a condition's or a loop's command
    "if setsid -f sh -c 'sleep 1; rm keep.py'; then echo started; fi",
    "while ! setsid -f sh -c 'sleep 1; rm keep.py'; do :; done",
    // a prefix's long option with its value in the next word
    "timeout --signal KILL 60 setsid -f sh -c 'sleep 1; rm keep.py'",
    "env --unset HOME setsid -f sh -c 'sleep 1; rm keep.py'",
    // a script fed to a shell that takes arguments, or names its input as its script
    "printf '%s\\n' '(sleep 1; rm keep.py) &' | bash -s -- x",
    "echo '(sleep 1; rm keep.py) &' | bash /dev/stdin",
    // a quoted here-document piped into a shell
    "cat <<'EOF' | bash\n(sleep 1; rm keep.py) &\nEOF",
    // a glob the shell expands to the detacher's path
    "/usr/bin/sets?d -f sh -c 'sleep 1; rm keep.py'",
    // runners: their options and first argument, then the command
    "taskset -c 0 setsid -f sh -c 'sleep 1; rm keep.py'",
    "flock /tmp/adv11.lock setsid -f sh -c 'sleep 1; rm keep.py'",
    // a tmux window or pane runs its command in the tmux server
    "tmux new-window 'sleep 1; rm keep.py'",
    // a process manager or a service started: it runs on after the command returns
    'npx pm2 start watcher.js',
    'systemctl --user start watcher.service',
  ])('codex: %s', (command) => {
    expect(codexRun(command)).toContain('keep.py');
  });

  it.each([
    'mapfile -t files < <(git ls-files)',
    "readarray -t found < <(find . -name '*.py')",
    'git commit -m "$(cat <<\'EOF\'\nFix a & b\nEOF\n)"',
    'flock /tmp/adv11.lock make test',
    // a -d of the container's command, not docker's
    "docker exec -it db psql -U postgres -d app -c 'select 1'",
  ])('codex, not a detach (no open call, nothing checked): %s', (command) => {
    expect(codexRun(command)).toBe('');
  });

  // adv11 read `a & b & wait` as not detached (30 minutes of whole-tree checkpoints saved); adv12
  // found jobs that end the shell before its wait (`kill $$`), which the text cannot tell, so every
  // background `&` is read as detached again (test/e2e/adv12.test.ts)
});

const { g, denied, why, startBackground, write, other } = geminiCalls();

describe("adv11: a write's result kept while a background command is open (holes7), attacked", () => {
  it("the session's background marker set to an old time by its own shell: the command's later loss is still told", () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    startBackground(repo, 'sleep 5; rm keep.py');
    const marker = path.join(repo.dir, '.git/guard-sessions/gemini/g1/background-open');
    expect(existsSync(marker)).toBe(true);
    // the agent's own shell call writes the marker back 31 minutes (allowed: it is no tracked file)
    const cmd = { command: `echo 2000-01-01T00:00:00.000Z > ${marker}` };
    expect(denied(g(repo, 'BeforeTool', 'run_shell_command', cmd))).toBe(false);
    writeFileSync(marker, '2000-01-01T00:00:00.000Z\n');
    g(repo, 'AfterTool', 'run_shell_command', cmd);
    unlinkSync(path.join(repo.dir, 'keep.py'));
    const next = other(repo);
    expect(why(next)).toContain('keep.py');
  });

  it.each([
    ['a new file of 300 lines', 'new.py', '', () => {}],
    ['an ignored file', '.env', '.env\n', () => {}],
  ])(
    'held: %s the session wrote, removed by the background command: told, and the restore told brings it back',
    (_, rel, ignore) => {
      const repo = makeRepo({ 'a.py': lines(5), ...(ignore ? { '.gitignore': ignore } : {}) });
      startBackground(repo, `sleep 1; rm -f ${rel}`);
      write(repo, rel, lines(300, 'mine'));
      unlinkSync(path.join(repo.dir, rel));
      const next = other(repo);
      expect(denied(next)).toBe(true);
      const told = /guard restore (\S+) -- (\S+)/.exec(why(next));
      expect(told).not.toBeNull();
      expect(repo.guard(['restore', told![1]!, '--', rel]).code).toBe(0);
      expect(repo.read(rel)).toBe(lines(300, 'mine'));
    },
  );

  // holes7 told both (its test stops there); the restore command told named both paths under the
  // first write's kept result, which holds the first's file alone
  it('two writes at once, both taken back: every restore command told brings its file back', async () => {
    const repo = makeRepo({ 'a.py': lines(300, 'a'), 'b.py': lines(300, 'b') });
    startBackground(repo, 'sleep 1; git checkout -- .');
    const edit = (f: string) => lines(300, f) + lines(200, `mine-${f}`);
    const call = (f: string) => ({
      session_id: 'g1',
      cwd: repo.dir,
      hook_event_name: 'BeforeTool',
      tool_name: 'write_file',
      tool_input: { file_path: path.join(repo.dir, `${f}.py`), content: edit(f) },
    });
    const both = await Promise.all([hookAsync(repo, call('a')), hookAsync(repo, call('b'))]);
    expect(both.map((r) => r.out)).not.toContain('deny');
    repo.write('a.py', edit('a'));
    repo.write('b.py', edit('b'));
    repo.git(['checkout', '--', '.']);
    const next = other(repo);
    expect(denied(next)).toBe(true);
    const told = [...why(next).matchAll(/guard restore (\S+) -- ((?:\w+\.py ?)+)/g)];
    expect(told.length).toBeGreaterThan(0);
    for (const [, id, paths] of told) {
      const r = repo.guard(['restore', id!, '--', ...paths!.trim().split(' ')]);
      expect(r.code, r.stderr).toBe(0);
    }
    expect(repo.read('a.py')).toBe(edit('a'));
    expect(repo.read('b.py')).toBe(edit('b'));
  });
});

describe('adv11: guard rewind putting back ignored files, attacked', () => {
  /** A foreground shell call in Gemini: BeforeTool, the command's work (done by the test), AfterTool. */
  function shell(repo: TestRepo, command: string, work: () => void, session = 'g1') {
    expect(denied(g(repo, 'BeforeTool', 'run_shell_command', { command }, session))).toBe(false);
    work();
    return g(repo, 'AfterTool', 'run_shell_command', { command }, session);
  }

  it('held: another session makes the removed ignored folder a link out of the work tree: rewind writes nothing through it', () => {
    const repo = makeRepo({ 'a.py': lines(5), '.gitignore': 'local/\n' });
    repo.write('local/notes.md', lines(40));
    shell(repo, 'rm -rf local', () => rmSync(path.join(repo.dir, 'local'), { recursive: true }));
    const outside = outsideDir();
    shell(
      repo,
      `ln -s ${outside} local`,
      () => symlinkSync(outside, path.join(repo.dir, 'local')),
      'g2',
    );
    const rw = repo.guard(['rewind', 'g1']);
    expect(readdirSync(outside)).toEqual([]);
    expect(rw.code).toBe(0);
  });

  it('held: the person makes the removed ignored folder a link to a tracked folder: rewind writes nothing through it', () => {
    const repo = makeRepo({ 'src/a.py': lines(5), '.gitignore': 'local/\n' });
    repo.write('local/a.py', 'SECRET=1\n');
    shell(repo, 'rm -rf local', () => rmSync(path.join(repo.dir, 'local'), { recursive: true }));
    symlinkSync('src', path.join(repo.dir, 'local'));
    const rw = repo.guard(['rewind', 'g1']);
    expect(rw.code).toBe(0);
    // the tracked file the link leads to is not overwritten with the ignored one's content
    expect(repo.read('src/a.py')).toBe(lines(5));
  });

  it('the command removed .env, then the session wrote a new .env: rewind brings back the first', () => {
    const repo = makeRepo({ 'a.py': lines(5), '.gitignore': '.env\n' });
    repo.write('.env', 'SECRET=1\n');
    shell(repo, 'rm .env', () => unlinkSync(path.join(repo.dir, '.env')));
    const w = { file_path: path.join(repo.dir, '.env'), content: 'AGENT=1\n' };
    expect(denied(g(repo, 'BeforeTool', 'write_file', w))).toBe(false);
    repo.write('.env', 'AGENT=1\n');
    const rw = repo.guard(['rewind', 'g1']);
    expect(rw.code).toBe(0);
    expect(repo.read('.env')).toBe('SECRET=1\n');
  });

  it('the command overwrote .env, then the session wrote it again: rewind brings back the first', () => {
    const repo = makeRepo({ 'a.py': lines(5), '.gitignore': '.env\n' });
    repo.write('.env', 'SECRET=1\n');
    shell(repo, 'echo x > .env', () => repo.write('.env', 'x\n'));
    const w = { file_path: path.join(repo.dir, '.env'), content: 'AGENT=1\n' };
    expect(denied(g(repo, 'BeforeTool', 'write_file', w))).toBe(false);
    repo.write('.env', 'AGENT=1\n');
    const rw = repo.guard(['rewind', 'g1']);
    expect(rw.code).toBe(0);
    expect(repo.read('.env')).toBe('SECRET=1\n');
  });
});

describe("adv11: adv9's session keys, attacked", () => {
  // adv9 hashed an id spelled as a hashed key; one spelled in capitals (H + 32 HEX) stayed plain, and
  // names the same ref files as the other session's key where the file system ignores case (macOS's
  // and Windows' default: not this machine's, so the refs' names are compared as such a system would)
  it("a session id that is another session's hashed key in capitals: the two sessions' refs differ in more than case", () => {
    const repo = makeRepo({ 'a.py': lines(5) });
    const claude = (session: string, f: string) =>
      hook(repo, 'claude', {
        session_id: session,
        transcript_path: '/tmp/t.jsonl',
        cwd: repo.dir,
        permission_mode: 'default',
        hook_event_name: 'PreToolUse',
        tool_name: 'Write',
        tool_input: { file_path: path.join(repo.dir, f), content: 'x = 1\n' },
        tool_use_id: `t-${f}`,
      });
    claude('odd id', 'b.py');
    const chains = () =>
      repo
        .git(['for-each-ref', '--format=%(refname)', 'refs/guard/sessions/claude/'])
        .trim()
        .split('\n')
        .filter((r) => r.endsWith('/chain'));
    const [first] = chains();
    const key = /sessions\/claude\/([^/]+)\/chain/.exec(first!)![1]!;
    claude(key.toUpperCase(), 'c.py');
    const both = chains().map((r) => r.toLowerCase());
    expect(both).toHaveLength(2);
    expect(new Set(both).size).toBe(2);
  });
});

describe("adv11: the session index's shell step, written by the command itself", () => {
  // The shell call's after event compares from the step its pre event put in the session index
  // (`s-<h(worktree)>`: a cache of the refs, the agent's to write). The command rewrites it to a
  // commit of the tree it left (`git commit-tree`), and its 300-line deletion is told nowhere
  // (rewind still puts it back: the refs hold the real step). Closing it needs the step read from
  // something the agent cannot write: the session's chain (the walk S1 took off every call) or
  // the checkpoint's own ref with a check that it is this call's, which Gemini's calls (no tool
  // call id: the latest pre event counts) cannot give, as the command may run `guard hook gemini`
  // itself for a later pre event (docs/reliability/adv11.md). Left open.
  it.fails('the command points the session index at a commit of its own: the deletion is still told', () => {
    const repo = makeRepo({ 'big.py': lines(300), 'a.py': lines(5) });
    const command = 'rm big.py && forge-index';
    expect(denied(g(repo, 'BeforeTool', 'run_shell_command', { command }))).toBe(false);
    unlinkSync(path.join(repo.dir, 'big.py'));
    const dir = path.join(repo.dir, '.git/guard-sessions/gemini/g1');
    const name = readdirSync(dir).find((f) => f.startsWith('s-'))!;
    repo.git(['add', '-A']);
    const tree = repo.git(['write-tree']).trim();
    repo.git(['reset', '-q']);
    const forged = repo.git(['commit-tree', tree, '-p', 'HEAD', '-m', 'x']).trim();
    const entry = JSON.parse(readFileSync(path.join(dir, name), 'utf8').trim());
    writeFileSync(path.join(dir, name), JSON.stringify({ ...entry, commit: forged }) + '\n');
    const after = g(repo, 'AfterTool', 'run_shell_command', { command });
    expect(JSON.stringify(after.json ?? {})).toContain('big.py');
  });
});
