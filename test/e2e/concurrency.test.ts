import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLI,
  TestRepo,
  cleanEnv,
  cleanupRepos,
  lines,
  makeRepo,
  installGuard,
} from '../helpers.js';
import { scale } from '../scale.js';

/**
 * Several guards at once: agents committing in eight lanes through the real
 * hook, reviews and writes racing into one main tree. Nothing is lost or
 * overwritten, and no two guards interleave their writes into a tree.
 */

afterAll(cleanupRepos);

interface Done {
  code: number | null;
  stdout: string;
  stderr: string;
}

function start(
  cmd: string,
  args: string[],
  cwd: string,
  env: Record<string, string | undefined> = {},
  input = '',
): Promise<Done> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env: cleanEnv({ CI: 'true', ...env }) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.on('error', () => {});
    child.stdin.end(input);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const guard = (
  repo: TestRepo,
  args: string[],
  env: Record<string, string | undefined> = {},
  input = '',
) => start(process.execPath, [CLI, ...args], repo.dir, env, input);

async function until(what: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** One agent: 20 commits in its lane through the hook; every 4th rewrites the 150-line big.py. */
const AGENT = `
import { spawnSync } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
const [lane, name, n] = process.argv.slice(2);
const git = (...args) => spawnSync('git', args, { cwd: lane, encoding: 'utf8' });
const out = [];
for (let i = 1; i <= Number(n); i++) {
  const destructive = i % 4 === 0;
  if (destructive) writeFileSync(path.join(lane, 'big.py'), Array.from({ length: 150 }, (_, k) => name + ' attempt ' + i + ' line ' + k).join('\\n') + '\\n');
  else appendFileSync(path.join(lane, name + '.log'), name + ' ' + i + '\\n');
  git('add', '-A');
  const r = git('commit', '-q', '-m', name + ' ' + i);
  out.push({ i, destructive, code: r.status, said: r.stdout + r.stderr });
  if (r.status !== 0) {
    git('reset', '-q', 'HEAD', '--', 'big.py');
    git('checkout', '--', 'big.py');
  }
}
console.log(JSON.stringify(out));
`;

function proposal(name: string, i: number): string {
  return Array.from({ length: 150 }, (_, k) => `${name} attempt ${i} line ${k}`).join('\n') + '\n';
}

// npm test: 2 agents x 4 commits (one blocked each: still two hooks racing on one
// repository's refs); npm run soak: 8 x 20
const LANES = scale(2, 8);
const COMMITS = scale(4, 20);

describe('agents committing in their lanes at once, through the hook', () => {
  it(`${LANES} processes x ${COMMITS} commits: every blocked proposal has its own ref, none lost or overwritten, guard log lists them all`, async ({
    task,
  }) => {
    const repo = installGuard({ 'big.py': lines(150, 'original') });
    // the lanes find guard on PATH (they have no node_modules)
    const bin = path.join(repo.dir, '.git', 'test-bin');
    mkdirSync(bin);
    symlinkSync(CLI, path.join(bin, 'guard'));
    const agent = path.join(repo.dir, '.git', 'agent.mjs');
    writeFileSync(agent, AGENT);

    const names = Array.from({ length: LANES }, (_, k) => `agent-${k}`);
    const paths = new Map<string, string>();
    for (const name of names) paths.set(name, repo.guardJson(['start', name]).json.path);
    const base = repo.git(['rev-parse', 'HEAD']).trim();

    const env = { PATH: `${bin}${path.delimiter}${process.env.PATH}` };
    const t0 = Date.now();
    const results = await Promise.all(
      names.map((name) =>
        start(process.execPath, [agent, paths.get(name)!, name, String(COMMITS)], repo.dir, env),
      ),
    );
    const took = Date.now() - t0;

    const blockedAttempts = new Map<string, string>(); // proposal content -> "name i"
    for (const [k, r] of results.entries()) {
      expect(r.code).toBe(0);
      const attempts: Array<{ i: number; destructive: boolean; code: number; said: string }> =
        JSON.parse(r.stdout);
      for (const a of attempts) {
        if (a.destructive) {
          expect(a.code, a.said).not.toBe(0);
          expect(a.said).toContain('guard: blocked 1 change');
          blockedAttempts.set(proposal(names[k]!, a.i), `${names[k]} ${a.i}`);
        } else expect(a.code, a.said).toBe(0);
      }
      // every allowed commit is on the lane's branch, in order
      const subjects = repo
        .git(['log', '--format=%s', `${base}..guard/${names[k]}`])
        .trim()
        .split('\n')
        .reverse();
      expect(subjects).toEqual(
        attempts.filter((a) => !a.destructive).map((a) => `${names[k]} ${a.i}`),
      );
    }
    const blockedCount = LANES * Math.floor(COMMITS / 4);
    expect(blockedAttempts.size).toBe(blockedCount);

    // one ref per blocked attempt, each holding exactly that attempt's proposal and naming itself
    const refs = repo.refs('refs/guard/rejected/');
    expect(refs.length).toBe(blockedCount);
    const matched = new Set<string>();
    for (const ref of refs) {
      const content = repo.git(['show', `${ref}:big.py`]);
      const attempt = blockedAttempts.get(content);
      expect(attempt, `${ref} holds no attempt's proposal`).toBeDefined();
      matched.add(attempt!);
      const body = repo.git(['log', '-1', '--format=%B', ref]);
      const record = JSON.parse(body.slice(body.indexOf('{')));
      // the decision record inside: this lane, this path, blocked, naming this very ref; parent = the lane's HEAD then
      expect(record).toMatchObject({
        kind: 'rejected',
        command: 'check',
        lane: attempt!.split(' ')[0],
      });
      expect(record.decisions).toHaveLength(1);
      expect(record.decisions[0]).toMatchObject({ path: 'big.py', decision: 'blocked', ref });
      expect(repo.git(['rev-parse', `${ref}^`]).trim()).toBe(record.base);
    }
    expect(matched.size).toBe(blockedCount);

    // guard log lists every one of them, and every decision of every lane
    const { json } = repo.guardJson(['log', '--limit', '100000']);
    const decisions = json.entries.filter((e: { kind: string }) => e.kind === 'decision');
    const loggedRefs = new Set(
      decisions
        .filter((e: { decision: string }) => e.decision === 'blocked')
        .map((e: { ref: string }) => e.ref),
    );
    expect([...loggedRefs].sort()).toEqual([...refs].sort());
    for (const name of names)
      expect(decisions.filter((e: { lane: string }) => e.lane === name).length).toBe(COMMITS);
    // (npm run soak reads these from vitest's JSON report)
    Object.assign(task.meta, {
      lanes: LANES,
      commits: COMMITS,
      attempts: LANES * COMMITS,
      blocked: blockedCount,
      refs: refs.length,
      took,
    });
    console.log(
      `${LANES} lanes x ${COMMITS} commits through the hook in ${took} ms: ${blockedCount} blocked refs, ${LANES * COMMITS - blockedCount} commits`,
    );
  }, 180_000);
});

/** Rounds of two reviews started at once: 1 in npm test, 10 in npm run soak. */
const ROUNDS = scale(1, 10);

/** A main tree and two lanes, each changing its own five files. */
function twoLanes(): {
  repo: TestRepo;
  files: Record<string, string[]>;
  laneContent: (f: string) => Buffer;
} {
  const seed: Record<string, string> = {};
  const files: Record<string, string[]> = { one: [], two: [] };
  for (const lane of ['one', 'two']) {
    for (let k = 0; k < 5; k++) {
      const f = `${lane}-${k}.txt`;
      seed[f] = lines(40, f);
      files[lane]!.push(f);
    }
  }
  const repo = makeRepo(seed);
  for (const lane of ['one', 'two']) {
    const p: string = repo.guardJson(['start', lane]).json.path;
    for (const f of files[lane]!)
      writeFileSync(path.join(p, f), lines(40, f) + `${lane} was here\n`);
  }
  return {
    repo,
    files,
    laneContent: (f) => Buffer.from(lines(40, f) + `${f.split('-')[0]} was here\n`),
  };
}

function read(repo: TestRepo, f: string): Buffer {
  return readFileSync(path.join(repo.dir, f));
}

describe('two reviews merging into the same main tree', () => {
  it('the second refuses with E_LOCKED while the first merges, writes nothing; a retry afterwards works', async () => {
    const { repo, files, laneContent } = twoLanes();
    const lock = path.join(repo.dir, '.git', 'guard.lock');
    const indexBefore = repo.git(['ls-files', '-s']);
    const first = guard(repo, ['review', 'one', '--auto'], {
      GUARD_FAULT_PAUSE: 'review:after-lock',
      GUARD_FAULT_PAUSE_MS: '4000',
    });
    await until(() => existsSync(lock));
    const second = await guard(repo, ['review', 'two', '--auto']);
    const untouched = files.two!.every((f) => read(repo, f).equals(Buffer.from(lines(40, f))));
    const indexDuring = repo.git(['ls-files', '-s']);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/another guard \(pid \d+\) is writing into .*: guard review one/);
    expect(second.stderr).toContain('wait for it to finish, then run the command again');
    const asJson = await guard(repo, ['review', 'two', '--auto', '--json']);
    expect(JSON.parse(asJson.stdout).error.code).toBe('E_LOCKED');
    expect(untouched).toBe(true);
    expect(indexDuring).toBe(indexBefore);

    expect((await first).code).toBe(0);
    expect(existsSync(lock)).toBe(false);
    const retry = await guard(repo, ['review', 'two', '--auto']);
    expect(retry.code).toBe(0);
    for (const f of [...files.one!, ...files.two!])
      expect(read(repo, f).equals(laneContent(f))).toBe(true);
  });

  it(`started at the same moment (${ROUNDS} rounds): each waits for or refuses the other; none sees the other half written`, async () => {
    let refused = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const { repo, files, laneContent } = twoLanes();
      const [a, b] = await Promise.all([
        guard(repo, ['review', 'one', '--auto', '--json']),
        guard(repo, ['review', 'two', '--auto', '--json']),
      ]);
      for (const [r, lane, other] of [
        [a, 'one', 'two'],
        [b, 'two', 'one'],
      ] as const) {
        if (r.code !== 0) {
          expect(JSON.parse(r.stdout).error.code).toBe('E_LOCKED');
          refused++;
          expect((await guard(repo, ['review', lane, '--auto'])).code).toBe(0);
          continue;
        }
        // the main tree as this review found it under its lock: the other lane's files all merged or none
        const cp = JSON.parse(r.stdout).checkpoint as string;
        const seen = files[other]!.map(
          (f) =>
            repo.git(['show', `refs/guard/checkpoints/${cp}:${f}`]) === laneContent(f).toString(),
        );
        expect(
          seen.every((x) => x) || seen.every((x) => !x),
          `review ${lane} saw ${other} half merged: ${seen}`,
        ).toBe(true);
      }
      for (const f of [...files.one!, ...files.two!])
        expect(read(repo, f).equals(laneContent(f))).toBe(true);
    }
    console.log(`simultaneous reviews: ${refused} of ${2 * ROUNDS} refused with E_LOCKED`);
  });
});

describe('guard write racing another writer on one tree', () => {
  it('a write that finds the tree locked waits, then refuses (E_CHANGED) because the file moved; nothing is lost', async () => {
    const repo = makeRepo({
      'f.txt': lines(50, 'old'),
      'guard.config.json': JSON.stringify({ lineThreshold: 1_000_000 }),
    });
    const lock = path.join(repo.dir, '.git', 'guard.lock');
    // A holds the lock between its checkpoint and its rename
    const a = guard(
      repo,
      ['write', 'f.txt'],
      { GUARD_FAULT_PAUSE: 'write:before-rename', GUARD_FAULT_PAUSE_MS: '1500' },
      lines(50, 'from A'),
    );
    await until(() => existsSync(lock));
    const b = await guard(repo, ['write', 'f.txt', '--json'], {}, lines(50, 'from B'));
    expect((await a).code).toBe(0);
    // B judged the old content; by the time it held the lock, A had replaced it
    expect(b.code).toBe(1);
    expect(JSON.parse(b.stdout).error).toMatchObject({ code: 'E_CHANGED' });
    expect(repo.read('f.txt')).toBe(lines(50, 'from A'));
    // A's checkpoint holds the old content: nothing was replaced unseen
    const { json } = repo.guardJson(['log']);
    const cps = json.entries.filter((e: { kind: string }) => e.kind === 'checkpoint');
    expect(cps.length).toBe(1);
    expect(repo.git(['show', `${cps[0].ref}:f.txt`])).toBe(lines(50, 'old'));
    // B again: judged against A's content, written after its own checkpoint of it
    const again = repo.guardJson(['write', 'f.txt'], { input: lines(50, 'from B') });
    expect(again.code).toBe(0);
    expect(repo.git(['show', `refs/guard/checkpoints/${again.json.checkpoint}:f.txt`])).toBe(
      lines(50, 'from A'),
    );
  });

  it('eight writes of different files at once, with a stale lock of a dead guard: all written, the takeover said once', async () => {
    const files = Array.from({ length: 8 }, (_, k) => `w${k}.txt`);
    const repo = makeRepo(Object.fromEntries(files.map((f) => [f, `${f} old\n`])));
    writeFileSync(path.join(repo.dir, '.git', 'guard.lock'), '999999999\nguard review gone\n');
    const runs = await Promise.all(files.map((f) => guard(repo, ['write', f], {}, `${f} new\n`)));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    for (const f of files) expect(repo.read(f)).toBe(`${f} new\n`);
    expect(
      runs.filter((r) =>
        r.stderr.includes('took over the lock of an interrupted guard (pid 999999999)'),
      ).length,
    ).toBe(1);
    expect(existsSync(path.join(repo.dir, '.git', 'guard.lock'))).toBe(false);
    // each write's checkpoint holds the old content of its file
    const { json } = repo.guardJson(['log']);
    const cps = json.entries.filter((e: { kind: string }) => e.kind === 'checkpoint');
    expect(cps.length).toBe(8);
    for (const cp of cps)
      expect(repo.git(['show', `${cp.ref}:${cp.paths[0]}`])).toBe(`${cp.paths[0]} old\n`);
  });
});
