import { createHash } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  chainedRecords,
  claudePayload,
  cleanupRepos,
  lines,
  makeRepo,
  tracedHook,
  type TestRepo,
} from '../helpers.js';

afterAll(cleanupRepos);

/**
 * Issue 22, S1: the cost of a hook call does not grow with its session's
 * history in git processes. A write or a shell post event reads the
 * session's policy anchors with ONE for-each-ref of a few refs (the
 * strictest policy the session saw: flows/hook/hook-common.ts
 * readSessionPolicy, test/e2e/hook-policy-anchors.test.ts) and its session
 * bases and the step before a shell call from the session index; the post
 * event of a write is answered by the index alone, and no call reads the
 * steps for background commands unless one of the session's is open.
 */

const claude = (
  repo: TestRepo,
  tool: string,
  input: object,
  o: { post?: boolean; session?: string; id?: string } = {},
) => claudePayload(repo, o.session ?? 'long-1', tool, input, o.id ?? 'toolu_1', o.post);

const traced = tracedHook;

const forEachRef = (git: string[]) => git.filter((l) => l.includes('for-each-ref'));

/** 200 lines cut to 140, then to 80: each step alone is allowed, the two against the session base are a replacement. */
function twoCuts(
  repo: TestRepo,
  session: string,
): { first: ReturnType<typeof traced>; second: ReturnType<typeof traced> } {
  const file = path.join(repo.dir, 'state.py');
  const first = traced(
    repo,
    claude(
      repo,
      'Write',
      { file_path: file, content: lines(140) },
      { session, id: `${session}-w1` },
    ),
  );
  writeFileSync(file, lines(140));
  // other calls of the session in between: other files, a shell call
  for (let i = 0; i < 4; i++) {
    traced(
      repo,
      claude(
        repo,
        'Write',
        { file_path: path.join(repo.dir, `n${i}.txt`), content: `${i}\n` },
        { session, id: `${session}-n${i}` },
      ),
    );
    writeFileSync(path.join(repo.dir, `n${i}.txt`), `${i}\n`);
  }
  traced(repo, claude(repo, 'Bash', { command: 'ls' }, { session, id: `${session}-b1` }));
  traced(
    repo,
    claude(repo, 'Bash', { command: 'ls' }, { session, id: `${session}-b1`, post: true }),
  );
  const second = traced(
    repo,
    claude(
      repo,
      'Write',
      { file_path: file, content: lines(80) },
      { session, id: `${session}-w2` },
    ),
  );
  return { first, second };
}

describe('a hook call reads none of its session history', () => {
  it('the session base still holds (many small cuts add up), found with no for-each-ref (the anchors from the ref files)', () => {
    const repo = makeRepo({ 'state.py': lines(200) });
    const { first, second } = twoCuts(repo, 'long-1');
    expect(first.decision).toBe(null);
    // against the file on disk (140 lines, 60 cut) this is allowed; against the session base (200) it is not
    expect(second.decision).toBe('deny');
    expect(forEachRef(second.git)).toEqual([]);
    // cat-file of HEAD and the configs, cat-file of the base, diff --no-index, fast-import
    // and the few around them: a constant, whatever came before in the session
    expect(second.git.length).toBeLessThanOrEqual(8);
    // HEAD's configs and the session base read through one cat-file (git/resident.ts withCallCatFile)
    expect(second.git.filter((l) => l.startsWith('cat-file'))).toHaveLength(1);
  });

  it('a write indexes its step before writing it: killed right after its records, the index still has it', () => {
    const repo = makeRepo({ 'state.py': lines(200), 'other.txt': 'o\n' });
    // an index that is there already (the session's first call)
    traced(
      repo,
      claude(
        repo,
        'Write',
        { file_path: path.join(repo.dir, 'other.txt'), content: 'p\n' },
        { session: 'k', id: 'k0' },
      ),
    );
    const dir = path.join(repo.dir, '.git', 'guard-sessions', 'claude', 'k');
    const before = new Set(readdirSync(dir));
    const r = repo.guard(['hook', 'claude'], {
      input: claude(
        repo,
        'Write',
        { file_path: path.join(repo.dir, 'state.py'), content: lines(140) },
        { session: 'k', id: 'k1' },
      ),
      env: { GUARD_FAULT: 'hook:after-record' },
    });
    expect(r.code).not.toBe(0);
    const added = readdirSync(dir).filter((n) => n.startsWith('p-') && !before.has(n));
    expect(added).toHaveLength(1);
    const e = JSON.parse(readFileSync(path.join(dir, added[0]!), 'utf8'));
    // the step's ref, or (a chained step: git/session-chain.ts) the name its ref would have had,
    // which the next call reads as a step in flight, then from the chain
    const name = String(e.commit).slice(String(e.commit).lastIndexOf('/') + 1);
    const step = repo.refs(e.commit).length > 0 ? e.commit : chainedRecords(repo).byName[name];
    expect(repo.git(['show', `${step}:state.py`])).toBe(lines(200));
  });

  it('after an allowed write, the post event starts no git process (the repository found from the file system, no background command open)', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const p = { file_path: path.join(repo.dir, 'a.txt'), content: 'b\n' };
    traced(repo, claude(repo, 'Write', p, { id: 'w1' }));
    writeFileSync(path.join(repo.dir, 'a.txt'), 'b\n');
    const post = traced(repo, claude(repo, 'Write', p, { id: 'w1', post: true }));
    expect(post.stdout).toBe('');
    expect(
      post.git.map((l) =>
        l.split(' ').find((w) => !w.startsWith('-') && w !== 'git' && !w.includes('=')),
      ),
    ).toEqual([]);
  });

  it("a shell call's post event finds its checkpoint with no for-each-ref (the policy anchors from the ref files), however many calls came before, and reports the loss", () => {
    const repo = makeRepo({ 'big.py': lines(270) });
    // the session's first calls that read the policy read its steps, until its anchors hold what they saw
    for (const id of ['w0', 'w1']) {
      const p = { file_path: path.join(repo.dir, 'small.txt'), content: `${id}\n` };
      traced(repo, claude(repo, 'Write', p, { id }));
      writeFileSync(path.join(repo.dir, 'small.txt'), `${id}\n`);
    }
    for (let i = 0; i < 3; i++)
      traced(repo, claude(repo, 'Bash', { command: 'true' }, { id: `t${i}` }));
    traced(repo, claude(repo, 'Bash', { command: 'rm big.py' }, { id: 'rm1' }));
    rmSync(path.join(repo.dir, 'big.py'));
    const post = traced(
      repo,
      claude(repo, 'Bash', { command: 'rm big.py' }, { id: 'rm1', post: true }),
    );
    expect(forEachRef(post.git)).toEqual([]);
    expect(post.stdout).toContain('big.py was deleted');
  });

  it("no call lists the session's steps: the 40th write and shell call start the same git processes as the 4th", () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const kinds = (git: string[]) =>
      git.map((l) => l.split(' ').find((w) => !w.startsWith('-') && !w.includes('=')));
    const round = (i: number) => {
      const file = path.join(repo.dir, i % 2 ? 'a.txt' : 'b.txt');
      const w = traced(
        repo,
        claude(repo, 'Write', { file_path: file, content: `${i}\n` }, { id: `w${i}` }),
      );
      writeFileSync(file, `${i}\n`);
      const pre = traced(repo, claude(repo, 'Bash', { command: 'true' }, { id: `b${i}` }));
      const post = traced(
        repo,
        claude(repo, 'Bash', { command: 'true' }, { id: `b${i}`, post: true }),
      );
      return { w, pre, post };
    };
    const early = [0, 1, 2, 3].map(round)[3]!;
    for (let i = 4; i < 39; i++) round(i);
    const late = round(39);
    for (const k of ['w', 'pre', 'post'] as const) {
      expect(kinds(late[k].git)).toEqual(kinds(early[k].git));
      // a for-each-ref reads the session's policy anchors (a few refs), never its steps
      for (const l of forEachRef(late[k].git))
        expect(l).toMatch(/refs\/guard\/sessions\/claude\/long-1\/policy\/[0-9a-f]{16}\/$/);
    }
  }, 120_000);
});

describe('loose objects are packed off the hot path', () => {
  it('past the threshold a hook call starts git gc --auto in the background: loose objects and refs get packed', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    // ~3,000 loose objects, reachable (a branch of 3,000 files), in one process (fast-import unpacks below fastimport.unpackLimit)
    const files = Array.from(
      { length: 3000 },
      (_, i) => `M 100644 inline f${i}\ndata ${String(i).length + 1}\n${i}\n`,
    ).join('');
    const stream = `commit refs/heads/bulk\ncommitter t <t@t> 0 +0000\ndata 5\nbulk\n${files}\n`;
    repo.git(['-c', 'fastimport.unpackLimit=100000', 'fast-import', '--quiet'], { input: stream });
    const loose = () => Number(/^count: (\d+)$/m.exec(repo.git(['count-objects', '-v']))![1]);
    expect(loose()).toBeGreaterThan(2500);
    traced(
      repo,
      claude(repo, 'Write', { file_path: path.join(repo.dir, 'a.txt'), content: 'b\n' }),
    );
    const deadline = Date.now() + 60_000;
    while (loose() > 100 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(loose()).toBeLessThan(100);
    while (!existsSync(path.join(repo.dir, '.git', 'packed-refs')) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    // the write's records: its session's chain (or, before the chains, its checkpoint's ref)
    expect(readFileSync(path.join(repo.dir, '.git', 'packed-refs'), 'utf8')).toMatch(
      /refs\/guard\/(checkpoints\/|sessions\/claude\/[^/]+\/chain)/,
    );
    // and guard still reads what it wrote from packed refs
    expect(repo.guardJson(['log']).json.entries.length).toBeGreaterThan(0);
    // no dumb-HTTP server info (info/refs: every ref listed again), looked at once gc is done (its
    // commit-graph is its last step)
    const graph = path.join(repo.dir, '.git', 'objects', 'info', 'commit-graph');
    while (!existsSync(graph) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    expect(existsSync(graph)).toBe(true);
    expect(existsSync(path.join(repo.dir, '.git', 'info', 'refs'))).toBe(false);
    expect(existsSync(path.join(repo.dir, '.git', 'objects', 'info', 'packs'))).toBe(false);
  }, 120_000);

  /** ~2,600 reachable loose objects (a branch of files), `in17` of their blobs in objects/17 and none other there but the tree's or commit's. */
  function looseBranch(repo: TestRepo, in17: number): () => number {
    const contents: string[] = [];
    let seventeen = 0;
    for (let i = 0; contents.length < 2600; i++) {
      const c = `${i}\n`;
      const oid = createHash('sha1').update(`blob ${c.length}\0${c}`).digest('hex');
      if (oid.startsWith('17')) {
        if (seventeen >= in17) continue;
        seventeen++;
      }
      contents.push(c);
    }
    const files = contents.map((c, i) => `M 100644 inline f${i}\ndata ${c.length}\n${c}`).join('');
    const stream = `commit refs/heads/bulk\ncommitter t <t@t> 0 +0000\ndata 5\nbulk\n${files}\n`;
    repo.git(['-c', 'fastimport.unpackLimit=100000', 'fast-import', '--quiet'], { input: stream });
    return () => Number(/^count: (\d+)$/m.exec(repo.git(['count-objects', '-v']))![1]);
  }

  it('past the threshold counted in 16 fan-out folders, with too few in objects/17 for git alone to fire, the hook call still packs them', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const loose = looseBranch(repo, 2);
    expect(loose()).toBeGreaterThan(2500);
    // git's own estimate (objects/17 x 256) is far under 2,048: a gc --auto left to it starts nothing
    const in17 = readdirSync(path.join(repo.dir, '.git', 'objects', '17')).length;
    expect(in17).toBeLessThan(8);
    traced(
      repo,
      claude(repo, 'Write', { file_path: path.join(repo.dir, 'a.txt'), content: 'b\n' }),
    );
    const deadline = Date.now() + 60_000;
    while (loose() > 100 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(loose()).toBeLessThan(100);
  }, 120_000);

  it("a gc.log left by an earlier gc's warning does not stop guard's packing (git skips gc --auto for a day when it detaches)", async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const loose = looseBranch(repo, 12);
    expect(loose()).toBeGreaterThan(2500);
    // what a detached gc writes when loose objects are still many after it (calls wrote meanwhile)
    writeFileSync(
      path.join(repo.dir, '.git', 'gc.log'),
      "warning: There are too many unreachable loose objects; run 'git prune' to remove them.\n",
    );
    traced(
      repo,
      claude(repo, 'Write', { file_path: path.join(repo.dir, 'a.txt'), content: 'b\n' }),
    );
    const deadline = Date.now() + 60_000;
    while (loose() > 100 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(loose()).toBeLessThan(100);
  }, 120_000);

  it('past ~400 loose records, with few loose objects, a hook call packs the refs in the background (git gc --auto counts objects only)', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const head = repo.git(['rev-parse', 'HEAD']).trim();
    // guard has run here (its journal exists): refs under refs/guard/ with no journal are refused
    // by the net before anything else (holes3, "rm -r .git/guard")
    traced(repo, claude(repo, 'Bash', { command: 'ls' }, { session: 'warm' }));
    // 600 loose refs under refs/guard/checkpoints/ (the loose objects stay few: all name HEAD)
    const input = Array.from(
      { length: 600 },
      (_, i) =>
        `create refs/guard/checkpoints/20260101T000000Z-${String(i).padStart(8, '0')} ${head}\n`,
    ).join('');
    repo.git(['update-ref', '--stdin'], { input });
    // (they stand for 600 of guard's own records: journaled as guard journals its refs, or the
    // net reads a journal that knows none of them as one put back in its place: holes4)
    appendFileSync(
      path.join(repo.dir, '.git', 'guard', 'journal'),
      input.replace(/^create (\S+) (\S+)$/gm, '$2 $1'),
    );
    const loose = () => {
      // (pack-refs --prune removes the folder it emptied)
      const dir = path.join(repo.dir, '.git', 'refs', 'guard', 'checkpoints');
      return existsSync(dir) ? readdirSync(dir).length : 0;
    };
    expect(loose()).toBeGreaterThanOrEqual(600);
    traced(
      repo,
      claude(repo, 'Write', { file_path: path.join(repo.dir, 'a.txt'), content: 'b\n' }),
    );
    const deadline = Date.now() + 60_000;
    while (loose() > 100 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(loose()).toBeLessThan(100);
    expect(readFileSync(path.join(repo.dir, '.git', 'packed-refs'), 'utf8')).toContain(
      'refs/guard/checkpoints/20260101T000000Z-00000599',
    );
  }, 120_000);
});
