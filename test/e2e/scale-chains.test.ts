import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cleanupRepos, makeRepo, type TestRepo } from '../helpers.js';
import { claudeCall } from './provenance-shared.js';

afterAll(cleanupRepos);

/*
 * Issue 22 item 6, at scale over time: a hook call's records live on its session's chain
 * (git/session-chain.ts). guard log --limit N reads the newest N links that hold a record,
 * guard doctor says how many chains it leaves uncounted, and a commit's provenance reads the
 * session index's lines for its staged paths (git/provenance.ts fromSessionIndex): none of them
 * reads more when there are more records. The repositories are built by the real hook.
 */

const FILES = ['a.txt', 'b.txt', 'c.txt', 'd.txt'];

/** `n` allowed Write calls of `session` through the real hook, over `files` in turn. */
function writes(repo: TestRepo, session: string, n: number, files = FILES): void {
  for (let i = 0; i < n; i++) {
    const file = files[i % files.length]!;
    const content = `${session} ${i}\n`;
    const input = { file_path: path.join(repo.dir, file), content };
    claudeCall(repo, 'PreToolUse', 'Write', input, `${session}-w${i}`, session);
    writeFileSync(path.join(repo.dir, file), content);
  }
}

function repoOf(): TestRepo {
  return makeRepo(Object.fromEntries([...FILES, 'z.txt'].map((f) => [f, `${f}\n`])));
}

/** The git commands a guard call ran (GUARD_TRACE_GIT), their first word each. */
function traced(repo: TestRepo, args: string[]): { json: any; git: string[] } {
  const trace = path.join(repo.dir, '.git', `trace-${Math.random().toString(16).slice(2)}`);
  const r = repo.guardJson(args, { env: { GUARD_TRACE_GIT: trace } });
  const git = readFileSync(trace, 'utf8').split('\n').filter(Boolean);
  rmSync(trace);
  return { json: r.json, git };
}

describe('guard log on session chains', () => {
  it('--limit N shows the newest N of what --limit 1000 shows, reads N + 1 links whatever the count, and says that more are older', () => {
    const repo = repoOf();
    writes(repo, 'one', 6);
    writes(repo, 'two', 6);
    const all = repo.guardJson(['log', '--limit', '1000']).json;
    // every chained checkpoint and decision record (a write call: one of each), exactly counted
    expect(all.total).toBe(24);
    expect(all.totalAtLeast).toBeUndefined();
    for (const n of [1, 3, 5]) {
      const { json, git } = traced(repo, ['log', '--limit', String(n)]);
      expect(json.entries).toEqual(all.entries.slice(0, n));
      expect(json.truncated).toBe(true);
      expect(json.totalAtLeast).toBe(true);
      const log = git.filter((l) => l.startsWith('log '));
      expect(log).toHaveLength(1);
      expect(log[0]).toContain(`--max-count=${n + 1} `);
    }
    const human = repo.guard(['log', '--limit', '2']);
    expect(human.stdout).toMatch(/\(at least \d+ older entries not shown: --limit \d+\)/);
  });

  it("--json names a chained record's chain and the link that holds it, which git resolves", () => {
    const repo = repoOf();
    writes(repo, 'sess-j', 2);
    const { entries } = repo.guardJson(['log', '--json']).json;
    expect(entries.length).toBe(4);
    for (const e of entries) {
      expect(e.chain).toBe('refs/guard/sessions/claude/sess-j/chain');
      expect(repo.git(['cat-file', '-t', e.link]).trim()).toBe('commit');
      // the link's parents: the previous link, the step (parent: the checkpoint), the decision records
      const parents = repo.git(['log', '-1', '--format=%P', e.link]).trim().split(' ');
      if (e.kind === 'checkpoint')
        expect(repo.git(['rev-parse', `${e.link}^2^`]).trim()).toBe(e.commit);
      else {
        const record = repo.git(['log', '-1', '--format=%B', parents[2]!]);
        expect(record).toContain(`"path":"${e.path}"`);
      }
      // the chain's first-parent history holds the link
      expect(repo.git(['merge-base', '--is-ancestor', e.link, e.chain]) ?? '').toBe('');
    }
  });
});

describe('guard doctor on session chains', () => {
  it('counts the refs, and says how many session chains hold the records it does not count', () => {
    const repo = repoOf();
    writes(repo, 'd1', 2);
    writes(repo, 'd2', 1);
    writes(repo, 'd3', 1);
    const { json } = repo.guardJson(['doctor']);
    expect(json.refs.chains).toBe(3);
    const refs = json.checks.find((c: any) => c.id === 'refs');
    expect(refs.message).toContain(
      "; and 3 session chains, with the hook calls' checkpoints and decisions (not counted here: guard log lists them)",
    );
    expect(refs.message).toMatch(/^refs\/guard\/: 0 checkpoints, 0 decision records/);
  });
});

describe('guard rewind on session chains', () => {
  it('puts back what the latest session wrote, read from its chain', () => {
    const repo = repoOf();
    writes(repo, 'older', 2, ['a.txt']);
    writes(repo, 'newer', 3, ['b.txt', 'c.txt']);
    const r = repo.guardJson(['rewind']);
    expect(r.code).toBe(0);
    expect(r.json.session).toBe('newer');
    expect(repo.read('b.txt')).toBe('b.txt\n');
    expect(repo.read('c.txt')).toBe('c.txt\n');
    expect(repo.read('a.txt')).toBe('older 1\n');
  });
});

describe("a commit's provenance on session chains", () => {
  it('reads the session index for the staged paths: the same git processes with 2 sessions as with 6, no chain walked, the writers named', () => {
    const repo = repoOf();
    writes(repo, 's-a', 3, ['a.txt', 'b.txt']);
    writes(repo, 's-b', 2, ['b.txt']);
    const check = () => {
      repo.write('a.txt', `staged ${Math.random()}\n`);
      repo.git(['add', 'a.txt']);
      const r = traced(repo, ['check', '--auto']);
      const by = r.json.files.find((f: any) => f.path === 'a.txt').writtenBy;
      repo.git(['reset', '-q']);
      // (sorted: the sessions' witness lookup, one cat-file since holes8, runs beside the diffs)
      return { by, git: r.git.map((l) => l.split(' ')[0]).sort() };
    };
    check(); // (the first check also notes the branch gate's tip)
    const before = check();
    expect(before.by.map((o: any) => `${o.session} ${o.toolCall}`)).toEqual([
      's-a s-a-w0',
      's-a s-a-w2',
    ]);
    expect(before.git).not.toContain('log');
    // four sessions more, writing other paths: nothing more is read
    for (const s of ['s-c', 's-d', 's-e', 's-f']) writes(repo, s, 3, ['c.txt', 'd.txt']);
    const after = check();
    expect(after.git).toEqual(before.git);
    expect(after.by).toEqual(before.by);
  });

  it("without the index (removed, or an older guard's), the chains are walked and name the same writes", () => {
    const repo = repoOf();
    writes(repo, 's-a', 3, ['a.txt', 'b.txt']);
    writes(repo, 's-b', 2, ['c.txt']);
    repo.write('a.txt', 'staged\n');
    repo.git(['add', 'a.txt']);
    const indexed = traced(repo, ['check', '--auto']);
    repo.git(['reset', '-q']);
    rmSync(path.join(repo.dir, '.git', 'guard-sessions'), { recursive: true, force: true });
    repo.git(['add', 'a.txt']);
    const walked = traced(repo, ['check', '--auto']);
    expect(walked.git.map((l) => l.split(' ')[0])).toContain('log');
    const by = (r: { json: any }) => r.json.files.find((f: any) => f.path === 'a.txt').writtenBy;
    expect(by(walked)).toEqual(by(indexed));
    expect(by(walked)).toHaveLength(2);
  });

  it("a session with a shell call is walked (a shell call's window may have changed any path)", () => {
    const repo = repoOf();
    writes(repo, 's-a', 1, ['b.txt']);
    claudeCall(repo, 'PreToolUse', 'Bash', { command: 'echo x > a.txt' }, 'sh1', 's-a');
    writeFileSync(path.join(repo.dir, 'a.txt'), 'x\n');
    claudeCall(repo, 'PostToolUse', 'Bash', { command: 'echo x > a.txt' }, 'sh1', 's-a');
    repo.git(['add', 'a.txt']);
    const r = traced(repo, ['check', '--auto']);
    expect(r.git.map((l) => l.split(' ')[0])).toContain('log');
    const by = r.json.files.find((f: any) => f.path === 'a.txt').writtenBy;
    expect(by.map((o: any) => `${o.session} ${o.kind} ${o.toolCall}`)).toEqual(['s-a shell sh1']);
  });
});
