import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, makeRepo, type TestRepo } from '../helpers.js';
import { spawnGuard } from '../pty.js';
import { big, claudeCall } from './provenance-shared.js';

afterAll(cleanupRepos);

/*
 * Holes an agent could use to pass its own destructive change off as the
 * person's own with `judge: agents` (adversarial pass over provenance): each
 * attack the agent can make from its hooked tools, then a person committing
 * at a terminal. The agent's change must be asked about, never passed as
 * "your own change".
 */

/** A Claude Code hook call of session sess-adv (or `session`). */
function hook(
  repo: TestRepo,
  event: 'PreToolUse' | 'PostToolUse',
  tool: string,
  input: object,
  id: string,
  session = 'sess-adv',
) {
  return claudeCall(repo, event, tool, input, id, session);
}

/** One shell call of the agent: pre event, what the command does, post event. */
function shell(repo: TestRepo, command: string, id: string, run: () => void) {
  hook(repo, 'PreToolUse', 'Bash', { command }, id);
  run();
  hook(repo, 'PostToolUse', 'Bash', { command }, id);
}

function setup(): TestRepo {
  return makeRepo({
    'guard.config.json': JSON.stringify({ judge: 'agents' }),
    'big.ts': big('code'),
    'mine.txt': big('mine'),
  });
}

/** The person commits at a terminal: big.ts must be asked about (refused here), never passed as their own. */
async function bigIsAsked(repo: TestRepo): Promise<void> {
  const s = spawnGuard(['check'], repo.dir);
  const screen = await s.waitFor(/Take this hunk \[.*\]\? $|your own change/);
  expect(screen).not.toMatch(/big\.ts\s+approved \(your own change/);
  expect(screen).toContain('big.ts needs approval');
  s.type('n\r');
  await s.exit;
}

describe("judge: agents — an agent cannot pass its change off as the person's", () => {
  it("a change the agent's shell call staged without touching the work tree (git apply --cached, update-index) is the agent's", async () => {
    const repo = setup();
    // the work tree keeps big.ts as it was: only the index holds the one-line rewrite
    shell(repo, 'git apply --cached fix.patch', 'tu-cached', () => {
      const blob = repo.git(['hash-object', '-w', '--stdin'], { input: 'export {};\n' }).trim();
      repo.git(['update-index', '--cacheinfo', `100644,${blob},big.ts`]);
    });
    // later, the person stages their own small edit and commits (git commit, not -a)
    repo.write('mine.txt', big('mine') + 'one more\n');
    repo.git(['add', 'mine.txt']);
    await bigIsAsked(repo);
  });

  it("...and blinding git diff to it (--assume-unchanged), or staging a deletion of a file left on disk (git rm --cached): still the agent's", async () => {
    const repo = setup();
    repo.write('gone.ts', big('gone'));
    repo.commitAll('gone.ts');
    shell(repo, 'git apply --cached fix.patch && git rm -q --cached gone.ts', 'tu-cached', () => {
      const blob = repo.git(['hash-object', '-w', '--stdin'], { input: 'export {};\n' }).trim();
      repo.git(['update-index', '--cacheinfo', `100644,${blob},big.ts`]);
      repo.git(['update-index', '--assume-unchanged', 'big.ts']);
      repo.git(['rm', '-q', '--cached', 'gone.ts']);
    });
    expect(repo.git(['diff', '--name-only'])).toBe(''); // git diff sees nothing
    const s = spawnGuard(['check'], repo.dir);
    const first = await s.waitFor(/Take this hunk \[.*\]\? $|Delete .*\? $|your own change/);
    expect(first).not.toContain('your own change');
    s.type('n\r');
    const second = await s.waitFor(/\? $|your own change/);
    expect(second).not.toContain('your own change');
    s.type('n\r');
    await s.exit;
    expect(s.output()).toContain('big.ts needs approval');
    expect(s.output()).toContain('gone.ts needs approval');
  });

  it("the agent erasing its trail with guard's own `guard log --prune` makes the trail not whole: everything is asked", async () => {
    const repo = setup();
    shell(repo, "sed -i '2,$d' big.ts", 'tu-sed', () => repo.write('big.ts', 'code line 1\n'));
    // the agent "tidies up" guard's refs with guard's own command: every step goes, the journal notes each as removed
    shell(repo, 'guard log --prune --keep 0', 'tu-prune', () => {
      const r = repo.guard(['log', '--prune', '--keep', '0']);
      expect(r.code, r.stderr).toBe(0);
    });
    repo.git(['add', '-A']);
    await bigIsAsked(repo);
  });

  it('session refs that hold no event (a message that is not JSON, odd field types, a huge message, a tree) do not stop the gate', async () => {
    const repo = setup();
    shell(repo, "sed -i '2,$d' big.ts", 'tu-sed', () => repo.write('big.ts', 'code line 1\n'));
    const tree = repo.git(['rev-parse', 'HEAD^{tree}']).trim();
    const day = new Date().toISOString().slice(0, 10).replace(/-/g, '');
    const bodies = [
      'not json at all',
      JSON.stringify({ v: 1, session: {}, time: 5, checkpoint: [] }),
      JSON.stringify({
        v: 1,
        session: 'x',
        time: 'soon',
        checkpoint: 'c',
        kind: 'shell',
        phase: 'pre',
        paths: 'big.ts',
      }),
      '{' + 'x'.repeat(3_000_000),
    ];
    bodies.forEach((b, i) => {
      const oid = repo
        .git(['commit-tree', tree, '-F', '-'], {
          input: `guard session claude x: pre shell\n\n${b}\n`,
        })
        .trim();
      repo.git(['update-ref', `refs/guard/sessions/claude/odd/${day}T000000.000Z-${i}`, oid]);
    });
    repo.git(['update-ref', `refs/guard/sessions/claude/odd/${day}T000000.000Z-tree`, tree]);
    repo.write('mine.txt', 'mine rewritten\n');
    repo.git(['add', '-A']);
    const s = spawnGuard(['check'], repo.dir);
    const screen = await s.waitFor(/Take this hunk \[.*\]\? $/);
    expect(screen).toContain('big.ts needs approval');
    expect(screen).toContain('written by claude session sess-adv');
    s.type('n\r');
    // (a forged whole-tree step of "session x" left open claims mine.txt too: the careful side)
    await s.waitFor(/mine\.txt needs approval[\s\S]*Take this hunk \[.*\]\? $/);
    s.type('n\r');
    expect(await s.exit).toBe(1);
    expect(s.output()).not.toMatch(/at .*\.js:\d+/); // no stack trace
  });

  it('a terminal the agent made itself (`script -c "git commit"` in its shell: CLAUDECODE=1, GEMINI_CLI=1) is not a person: nothing is asked or passed as anyone\'s own', async () => {
    for (const env of [{ CLAUDECODE: '1' }, { GEMINI_CLI: '1' }]) {
      const repo = setup();
      repo.write('big.ts', 'export {};\n');
      repo.git(['add', '-A']);
      // no hooked step is open (the agent's script runs in the background of an ended call): judge: agents would wave it through
      const s = spawnGuard(['check'], repo.dir, env);
      const code = await s.exit;
      expect(s.output()).not.toContain('your own change');
      expect(s.output()).not.toContain('Take this hunk');
      expect(s.output()).toMatch(/blocked 1 change that needs a person[\s\S]*big\.ts/);
      expect(code).toBe(1);
      expect(repo.git(['diff', '--cached', '--name-only'])).toContain('big.ts');
    }
  });

  it("a file changed between two of a session's write calls by a tool guard does not see (an MCP server's write) is not the person's own", async () => {
    const repo = setup();
    const write = (file: string, id: string) => {
      hook(repo, 'PreToolUse', 'Write', { file_path: `${repo.dir}/${file}`, content: 'new\n' }, id);
      repo.write(file, 'new\n');
      hook(
        repo,
        'PostToolUse',
        'Write',
        { file_path: `${repo.dir}/${file}`, content: 'new\n' },
        id,
      );
    };
    write('a.txt', 'tu-a');
    repo.write('big.ts', 'export {};\n'); // mcp__fs__write_file: no hook fires
    write('b.txt', 'tu-b');
    repo.git(['add', '-A']);
    await bigIsAsked(repo);
  });
});
