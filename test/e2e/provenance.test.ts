import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { CLI, cleanupRepos, makeRepo, outsideDir, type TestRepo } from '../helpers.js';
import { spawnGuard } from '../pty.js';
import { noteGone, startJournal } from '../../src/git/journal.js';
import { big, claudeCall } from './provenance-shared.js';

afterAll(cleanupRepos);

/*
 * Provenance (issue 23, item 2): the commit gate knows which agent session
 * wrote each staged path (the harness hooks' trail under refs/guard/sessions/),
 * shows it at the prompt and in --json, records it, and names the sessions in
 * a Guard-Agent: trailer. With `judge: agents` a person committing at a
 * terminal is not asked about their own changes; without a person, or while
 * an agent's shell call runs, everything is judged as before.
 */

/** A Claude Code hook call of session sess-7f3a (or `session`). */
function hook(
  repo: TestRepo,
  event: 'PreToolUse' | 'PostToolUse',
  tool: string,
  input: object,
  id: string,
  session = 'sess-7f3a',
) {
  return claudeCall(repo, event, tool, input, id, session);
}

/** The agent rewrites agent.txt through its Write tool (the person approves it in the harness), and creates made.txt from the shell. */
function agentSession(repo: TestRepo, opts: { shellPost?: boolean } = {}) {
  const pre = hook(
    repo,
    'PreToolUse',
    'Write',
    { file_path: `${repo.dir}/agent.txt`, content: 'rewritten\n' },
    'tu-write',
  );
  expect(pre.stdout).toContain('"ask"');
  repo.write('agent.txt', 'rewritten\n');
  hook(
    repo,
    'PostToolUse',
    'Write',
    { file_path: `${repo.dir}/agent.txt`, content: 'rewritten\n' },
    'tu-write',
  );
  hook(repo, 'PreToolUse', 'Bash', { command: 'node gen.js > made.txt' }, 'tu-shell');
  repo.write('made.txt', big('made'));
  if (opts.shellPost !== false)
    hook(repo, 'PostToolUse', 'Bash', { command: 'node gen.js > made.txt' }, 'tu-shell');
}

/** At the prompt, agent.txt is asked about with the session that wrote it; the person refuses. */
async function refusesAgentsRewrite(repo: TestRepo): Promise<void> {
  const s = spawnGuard(['check'], repo.dir);
  const screen = await s.waitFor(/Take this hunk \[.*\]\? $/);
  expect(screen).toContain('agent.txt needs approval');
  expect(screen).toContain('written by claude session sess-7f3a');
  s.type('n\r');
  await s.exit;
}

function setup(config: object | null) {
  const repo = makeRepo({
    'agent.txt': big('agent'),
    'mine.txt': big('mine'),
    ...(config ? { 'guard.config.json': JSON.stringify(config) } : {}),
  });
  return repo;
}

describe('provenance: which agent session wrote each staged path', () => {
  it('--json names the write tool call and the shell call; a path no agent wrote has none; the trailer names the session', () => {
    const repo = setup(null);
    agentSession(repo);
    repo.write('mine.txt', 'my own rewrite\n');
    repo.git(['add', '-A']);
    const hooks = new Set(repo.refs('refs/guard/decisions/'));
    const r = repo.guardJson(['check']);
    const by = Object.fromEntries(r.json.files.map((f: any) => [f.path, f]));
    expect(by['agent.txt'].writtenBy).toEqual([
      expect.objectContaining({
        harness: 'claude',
        session: 'sess-7f3a',
        toolCall: 'tu-write',
        tool: 'Write',
        kind: 'write',
      }),
    ]);
    expect(by['made.txt'].writtenBy).toEqual([
      expect.objectContaining({
        toolCall: 'tu-shell',
        tool: 'Bash',
        kind: 'shell',
        command: 'node gen.js > made.txt',
      }),
    ]);
    expect(by['mine.txt'].writtenBy).toBeUndefined();
    // no person (auto mode): both big rewrites are blocked, whoever wrote them
    expect(by['agent.txt'].decision).toBe('blocked');
    expect(by['mine.txt'].decision).toBe('blocked');
    // the decision record keeps the provenance
    // check's own, not the hook's: ref names order by the second, so within one second "the newest" is by chance
    const record = repo
      .refs('refs/guard/decisions/')
      .filter((ref) => !hooks.has(ref))
      .at(-1);
    expect(repo.git(['log', '-1', '--format=%B', record!])).toContain(
      '"writtenBy":[{"harness":"claude","session":"sess-7f3a","toolCall":"tu-write"',
    );
    expect(repo.read('.git/guard-approved-trailers')).toContain('Guard-Agent: claude sess-7f3a\n');
  });

  it('a shell call whose post event never came (a failed or killed command) still owns what changed after it', () => {
    const repo = setup(null);
    agentSession(repo, { shellPost: false });
    repo.git(['add', '-A']);
    const by = Object.fromEntries(
      repo.guardJson(['check']).json.files.map((f: any) => [f.path, f]),
    );
    expect(by['made.txt'].writtenBy?.[0]?.toolCall).toBe('tu-shell');
  });

  it('a background shell call owns what changes after its post event too', () => {
    const repo = setup(null);
    hook(
      repo,
      'PreToolUse',
      'Bash',
      { command: 'npm run watch', run_in_background: true },
      'tu-bg',
    );
    hook(
      repo,
      'PostToolUse',
      'Bash',
      { command: 'npm run watch', run_in_background: true },
      'tu-bg',
    );
    repo.write('late.txt', 'written by the watcher after the post event\n');
    repo.git(['add', '-A']);
    const by = Object.fromEntries(
      repo.guardJson(['check']).json.files.map((f: any) => [f.path, f]),
    );
    expect(by['late.txt'].writtenBy?.[0]?.toolCall).toBe('tu-bg');
  });

  it("a path changed between two of a session's tool calls (a tool guard does not see, such as an MCP server's write) is the session's", () => {
    const repo = setup(null);
    hook(repo, 'PreToolUse', 'Bash', { command: 'ls' }, 'tu-1');
    hook(repo, 'PostToolUse', 'Bash', { command: 'ls' }, 'tu-1');
    repo.write('unseen.txt', 'written by mcp__fs__write_file\n');
    repo.write('odd\nname.txt', 'a newline in its name\n');
    hook(repo, 'PreToolUse', 'Bash', { command: 'npm test' }, 'tu-2');
    hook(repo, 'PostToolUse', 'Bash', { command: 'npm test' }, 'tu-2');
    repo.git(['add', '-A']);
    const by = Object.fromEntries(
      repo.guardJson(['check']).json.files.map((f: any) => [f.path, f]),
    );
    expect(by['unseen.txt'].writtenBy).toEqual([
      expect.objectContaining({ session: 'sess-7f3a', kind: 'session', toolCall: null }),
    ]);
    // a name cat-file cannot be asked about counts as the session's: the careful answer
    expect(by['odd\nname.txt'].writtenBy?.length).toBeGreaterThan(0);
  });

  it("without guard's journal (an older guard) the recent sessions are found by a scan of the date-named refs", () => {
    const repo = setup(null);
    agentSession(repo);
    rmSync(`${repo.dir}/.git/guard/journal`);
    repo.git(['add', '-A']);
    const by = Object.fromEntries(
      repo.guardJson(['check']).json.files.map((f: any) => [f.path, f]),
    );
    expect(by['agent.txt'].writtenBy?.[0]?.toolCall).toBe('tu-write');
    expect(by['made.txt'].writtenBy?.[0]?.toolCall).toBe('tu-shell');
  });

  it("a session of another repository does not claim this one's paths", () => {
    const repo = setup(null);
    const other = makeRepo({ 'agent.txt': big('agent') });
    hook(
      other,
      'PreToolUse',
      'Write',
      { file_path: `${other.dir}/agent.txt`, content: 'x\n' },
      'tu-other',
    );
    repo.write('agent.txt', 'x\n');
    repo.git(['add', '-A']);
    const by = Object.fromEntries(
      repo.guardJson(['check']).json.files.map((f: any) => [f.path, f]),
    );
    expect(by['agent.txt'].writtenBy).toBeUndefined();
  });
});

describe('provenance at the prompt (a person at a terminal)', () => {
  it("judge: agents — the agent's rewrite is asked with who wrote it; the person's own rewrite passes unasked; the commit carries the trailers", async () => {
    const repo = setup({ judge: 'agents' });
    agentSession(repo);
    repo.write('mine.txt', 'my own rewrite\n');
    repo.git(['add', '-A']);
    const s = spawnGuard(['check'], repo.dir);
    const screen = await s.waitFor(/Take this hunk \[.*\]\? $/);
    expect(screen).toContain('agent.txt needs approval');
    expect(screen).toMatch(
      /written by claude session sess-7f3a, \d{4}-\d\d-\d\d \d\d:\d\d UTC, tool call Write/,
    );
    s.type('y\r');
    await s.waitFor(/made\.txt|approved/);
    expect(await s.exit).toBe(0);
    expect(s.output()).not.toContain('mine.txt needs approval');
    expect(s.output()).toMatch(
      /mine\.txt\s+approved \(your own change: no agent session wrote it\)/,
    );
    const trailers = repo.read('.git/guard-approved-trailers');
    expect(trailers).toMatch(/^Guard-Approved: mine\.txt [0-9a-f]{40}$/m);
    expect(trailers).toContain('Guard-Agent: claude sess-7f3a');
  });

  it("judge: all (the default) — the person is asked about their own rewrite too, and still sees who wrote the agent's", async () => {
    const repo = setup(null);
    agentSession(repo);
    repo.write('mine.txt', 'my own rewrite\n');
    repo.git(['add', '-A']);
    const s = spawnGuard(['check'], repo.dir);
    await s.waitFor(/agent\.txt needs approval[\s\S]*Take this hunk \[.*\]\? $/);
    s.type('y\r');
    const second = await s.waitFor(/mine\.txt needs approval[\s\S]*Take this hunk \[.*\]\? $/);
    expect(second).not.toContain('written by');
    s.type('n\r');
    expect(await s.exit).toBe(0);
    expect(repo.git(['diff', '--cached', '--name-only'])).not.toContain('mine.txt');
  });

  it("judge: agents, while an agent's shell call is running (the agent is the one committing): the person's rule does not apply", async () => {
    const repo = setup({ judge: 'agents' });
    repo.write('mine.txt', 'rewritten while an agent shell runs\n');
    repo.git(['add', '-A']);
    hook(repo, 'PreToolUse', 'Bash', { command: 'git commit -am wip' }, 'tu-commit');
    const s = spawnGuard(['check'], repo.dir);
    const screen = await s.waitFor(/Take this hunk \[.*\]\? $/);
    expect(screen).toContain('mine.txt needs approval');
    s.type('n\r');
    expect(await s.exit).toBe(1); // every staged change refused: no commit
  });

  it("judge: agents when the sessions' trail was pruned behind guard's back: no absence of an agent is trusted, the person is asked about everything", async () => {
    const repo = setup({ judge: 'agents' });
    agentSession(repo);
    repo.write('mine.txt', 'my own rewrite\n');
    // the agent removes its own trail from the shell
    for (const ref of repo.refs('refs/guard/sessions/')) repo.git(['update-ref', '-d', ref]);
    repo.git(['add', '-A']);
    const s = spawnGuard(['check'], repo.dir);
    const first = await s.waitFor(/Take this hunk \[.*\]\? $/);
    expect(first).toContain('agent.txt needs approval');
    s.type('n\r');
    const second = await s.waitFor(/mine\.txt needs approval[\s\S]*Take this hunk \[.*\]\? $/);
    expect(second).toContain('mine.txt');
    s.type('n\r');
    await s.exit;
    expect(s.output()).not.toContain('your own change');
  });

  it("judge: agents — an agent's content brought from another work tree (git checkout BRANCH -- PATH) is still the agent's", async () => {
    const repo = setup({ judge: 'agents' });
    const wt = repo.dir + '-wt';
    repo.git(['worktree', 'add', '-q', '-b', 'agent-branch', wt]);
    const lane = Object.assign(Object.create(Object.getPrototypeOf(repo)), repo, {
      dir: wt,
    }) as TestRepo; // the same helpers, run in the other work tree
    const pre = hook(
      lane,
      'PreToolUse',
      'Write',
      { file_path: `${wt}/agent.txt`, content: 'rewritten in the lane\n' },
      'tu-wt',
    );
    expect(pre.stdout).toContain('"ask"');
    writeFileSync(`${wt}/agent.txt`, 'rewritten in the lane\n');
    repo.git(['-C', wt, 'commit', '-q', '--no-verify', '-am', 'agent']);
    repo.git(['checkout', 'agent-branch', '--', 'agent.txt']);
    await refusesAgentsRewrite(repo);
    rmSync(wt, { recursive: true, force: true });
  });

  it("judge: agents during a merge: what it brings is not the person's own edit, it is asked", async () => {
    const repo = setup({ judge: 'agents' });
    repo.git(['checkout', '-q', '-b', 'other']);
    repo.write('mine.txt', 'rewritten on another branch\n');
    repo.commitAll('other');
    repo.git(['checkout', '-q', 'main']);
    repo.write('side.txt', 'x\n');
    repo.commitAll('side');
    repo.git(['merge', '--no-commit', '--no-ff', '-q', 'other']);
    const s = spawnGuard(['check'], repo.dir);
    const screen = await s.waitFor(/Take this hunk \[.*\]\? $/);
    expect(screen).toContain('mine.txt needs approval');
    s.type('n\r');
    await s.exit;
  });

  it("an agent's write of a month ago: not named in --json (recent days only), but judge: agents reads the whole trail and asks", async () => {
    const repo = setup({ judge: 'agents' });
    // the step as guard would have written it 30 days ago, a ref of its own (before the session
    // chains): ref name and journal line
    claudeCall(
      repo,
      'PreToolUse',
      'Write',
      { file_path: `${repo.dir}/agent.txt`, content: 'old rewrite\n' },
      'tu-old',
      'sess-7f3a',
      { GUARD_SESSION_CHAIN: '0' },
    );
    repo.write('agent.txt', 'old rewrite\n');
    const [ref] = repo.refs('refs/guard/sessions/').filter((r) => !r.includes('/policy/'));
    const then = new Date(Date.now() - 30 * 86_400_000).toISOString();
    const message = repo
      .git(['log', '-1', '--format=%B', ref!])
      .replace(/"time":"[^"]+"/, `"time":"${then}"`);
    const oid = repo
      .git(['commit-tree', `${ref}^{tree}`, '-p', `${ref}^`, '-F', '-'], { input: message })
      .trim();
    const old = ref!.replace(/\/\d{8}T/, `/${then.slice(0, 10).replace(/-/g, '')}T`);
    repo.git(['update-ref', old, oid]);
    repo.git(['update-ref', '-d', ref!]);
    // (as guard notes them: a line appended by hand is not guard's word, journal-seal.ts)
    startJournal(`${repo.dir}/.git`, [{ oid, ref: old }]);
    noteGone(`${repo.dir}/.git`, [ref!]);
    repo.git(['add', '-A']);
    expect(repo.guardJson(['check']).json.files[0].writtenBy).toBeUndefined();
    await refusesAgentsRewrite(repo);
  });

  it("judge: agents never waves through a protected path, even the person's own", async () => {
    const repo = makeRepo({
      'guard.config.json': JSON.stringify({ judge: 'agents' }),
      '.github/workflows/ci.yml': 'on: push\n',
    });
    repo.write('.github/workflows/ci.yml', 'on: pull_request\n');
    repo.git(['add', '-A']);
    const s = spawnGuard(['check'], repo.dir);
    const screen = await s.waitFor(/\? $/);
    expect(screen).toContain('ci.yml needs approval');
    s.type('n\r');
    expect(await s.exit).toBe(1); // every staged change refused: no commit
  });

  it("judge: agents without a terminal (auto mode): the person's rule does not apply, nothing passes unjudged", () => {
    const repo = setup({ judge: 'agents' });
    repo.write('mine.txt', 'x\n');
    repo.git(['add', '-A']);
    const r = repo.guardJson(['check']);
    expect(r.json.files[0].decision).toBe('blocked');
    expect(r.code).toBe(1);
  });

  it('a judge value guard does not know is a config error with a hint', () => {
    const repo = setup({ judge: 'nobody' });
    repo.write('mine.txt', 'x\n');
    repo.git(['add', '-A']);
    const r = repo.guard(['check']);
    expect(r.stderr).toMatch(/guard\.config\.json: "judge"/);
    expect(r.stderr).toMatch(/hint: /);
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
  });
});

describe('provenance in guard ci: what the commits say', () => {
  it('a path changed by a commit with a Guard-Agent: trailer names the session; it is shown, never an approval; a path no trailer names has none', () => {
    const repo = makeRepo({ 'agent.txt': big('agent'), 'mine.txt': big('mine') });
    repo.git(['checkout', '-q', '-b', 'feature']);
    repo.write('agent.txt', 'rewritten\n');
    repo.git(['add', '-A']);
    repo.git([
      'commit',
      '-q',
      '--no-verify',
      '-m',
      'agent work\n\nGuard-Agent: claude 3f2a1b9c-0000-4000-8000-000000000000\nGuard-Agent: codex evil\x1b[31mred',
    ]);
    const agentCommit = repo.git(['rev-parse', 'HEAD']).trim();
    repo.write('mine.txt', 'mine, rewritten\n');
    repo.commitAll('my work');
    const r = repo.guardJson(['ci', '--base', 'main']);
    const by = Object.fromEntries(r.json.files.map((f: any) => [f.path, f]));
    expect(by['agent.txt'].writtenBy).toEqual([
      { harness: 'claude', session: '3f2a1b9c-0000-4000-8000-000000000000', commit: agentCommit },
      { harness: 'codex', session: 'evil?[31mred', commit: agentCommit },
    ]);
    expect(by['agent.txt'].decision).toBe('blocked');
    expect(by['mine.txt'].writtenBy).toBeUndefined();
    const text = repo.guard(['ci', '--base', 'main']).stdout;
    expect(text).toContain(
      `written by claude session 3f2a1b9c (commit ${agentCommit.slice(0, 10)} says so)`,
    );
    expect(text).not.toContain('\x1b[31m');
  });

  it("end to end: what the commit gate wrote (Guard-Agent: from a real git commit through guard init's hooks) is what guard ci reads", async () => {
    const repo = setup({ judge: 'agents' });
    repo.git(['config', '--unset', 'core.hooksPath']);
    const bin = outsideDir();
    writeFileSync(`${bin}/guard`, `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`, {
      mode: 0o755,
    });
    const env = { PATH: `${bin}:${process.env.PATH}` };
    expect(repo.guard(['init'], { env }).code).toBe(0);
    repo.git(['checkout', '-q', '-b', 'feature']);
    agentSession(repo);
    repo.write('mine.txt', 'my own rewrite\n');
    repo.git(['add', '-A']);
    const { spawn } = await import('node-pty');
    const p = spawn('git', ['commit', '-m', 'both'], {
      cwd: repo.dir,
      env: {
        ...process.env,
        ...env,
        CI: '',
        GUARD_AUTO: '',
        TERM: 'xterm',
        NO_COLOR: '1',
      } as Record<string, string>,
      cols: 120,
      rows: 40,
    });
    let out = '';
    p.onData((d) => {
      out += d;
      if (/Take this hunk \[.*\]\? $/.test(out)) {
        out = '';
        p.write('y\r');
      }
    });
    let all = '';
    p.onData((d) => (all += d));
    const code = await new Promise<number>((resolve) =>
      p.onExit(({ exitCode }) => resolve(exitCode)),
    );
    expect(code, all).toBe(0);
    const message = repo.git(['log', '-1', '--format=%B']);
    expect(message).toContain('Guard-Agent: claude sess-7f3a');
    expect(message).toMatch(/Guard-Approved: mine\.txt [0-9a-f]{40}/);
    const r = repo.guardJson(['ci', '--base', 'main']);
    const by = Object.fromEntries(r.json.files.map((f: any) => [f.path, f]));
    expect(by['agent.txt'].writtenBy?.[0]).toMatchObject({
      harness: 'claude',
      session: 'sess-7f3a',
    });
    // both approved at the prompt: the person's own by judge: agents, the agent's by y
    expect(by['mine.txt'].decision).toBe('approved');
    expect(by['agent.txt'].decision).toBe('approved');
    expect(r.code).toBe(0);
  });
});

describe('provenance at scale', () => {
  /** A session of `n` shell calls as guard writes its steps (fast-import, journaled), each pre/post pair around one file's write. */
  async function longSession(repo: TestRepo, n: number): Promise<void> {
    const { sessionMessage } = await import('../../src/git/session.js');
    const tree = repo.git(['rev-parse', 'HEAD^{tree}']).trim();
    const head = repo.git(['rev-parse', 'HEAD']).trim();
    const day = new Date()
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d+Z$/, 'Z');
    let input = '';
    const journal: string[] = [];
    for (let i = 0; i < 2 * n; i++) {
      const time = new Date(Date.now() - (2 * n - i) * 1000).toISOString();
      const message = sessionMessage({
        harness: 'claude',
        session: 'sess-long',
        toolCall: `tu-${i >> 1}`,
        tool: 'Bash',
        phase: i % 2 ? 'post' : 'pre',
        kind: 'shell',
        checkpoint: 'x',
        paths: null,
        worktree: repo.dir,
        time,
        command: 'make',
      });
      const ref = `refs/guard/sessions/claude/sess-long/${day}-${String(i).padStart(8, '0')}`;
      input += `commit ${ref}\nmark :${i + 1}\ncommitter g <g> 1700000000 +0000\ndata ${Buffer.byteLength(message)}\n${message}\nfrom ${head}\nM 040000 ${tree} ""\n\n`;
      journal.push(ref);
    }
    repo.git(['fast-import', '--quiet'], { input });
    const oids = repo.git([
      'for-each-ref',
      '--format=%(objectname) %(refname)',
      'refs/guard/sessions/claude/sess-long/',
    ]);
    startJournal(
      `${repo.dir}/.git`,
      oids
        .trim()
        .split('\n')
        .map((l) => ({ oid: l.slice(0, l.indexOf(' ')), ref: l.slice(l.indexOf(' ') + 1) })),
    );
  }

  it('a session of 400 shell calls and a commit of 60 files: the same git processes as a session of 2', async () => {
    const count = async (n: number) => {
      const files: Record<string, string> = {};
      for (let i = 0; i < 60; i++) files[`f${i}.txt`] = `v${i}\n`;
      const repo = makeRepo(files);
      repo.git(['commit', '-q', '--allow-empty', '-m', 'x']);
      mkdirSync(`${repo.dir}/.git/guard`, { recursive: true });
      await longSession(repo, n);
      for (let i = 0; i < 60; i++) repo.write(`f${i}.txt`, `w${i}\n`);
      repo.git(['add', '-A']);
      const trace = `${repo.dir}.trace`;
      const r = repo.guardJson(['check'], { env: { GUARD_TRACE_GIT: trace } });
      expect(r.code).toBe(0);
      return readFileSync(trace, 'utf8').split('\n').filter(Boolean).length;
    };
    expect(await count(400)).toBe(await count(2));
  });
});
