import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLI,
  TestRepo,
  cleanEnv,
  cleanupRepos,
  fixture,
  lines,
  makeRepo,
  outsideDir,
} from '../helpers.js';
import { scale } from '../scale.js';

/**
 * guard is SIGKILLed at every named fault point (src/runtime/faults.ts) of
 * write, review, restore, check, discard, the atomic write and the
 * checkpoint, and at random moments. After each kill:
 *  - every file guard was writing is byte for byte its old or its new content;
 *  - the main tree goes back to its state before the command with the
 *    checkpoint the command made (found through `guard log --json`);
 *  - the next guard command works: a stale guard.lock is taken over and
 *    said so, temp files are cleaned, a leftover refs/guard/tmp/ is harmless.
 */

afterAll(cleanupRepos);

const TAKEOVER = 'took over the lock of an interrupted guard';

interface Killed {
  signal: NodeJS.Signals | null;
  code: number | null;
  stderr: string;
}

/** Run the built CLI with GUARD_FAULT set; it must die by SIGKILL at that point. */
function killedAt(
  repo: TestRepo,
  point: string,
  args: string[],
  input: string | Buffer = '',
  cwd = repo.dir,
): Killed {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    env: cleanEnv({ CI: 'true', GUARD_FAULT: point }),
    input,
  });
  return { signal: r.signal, code: r.status, stderr: r.stderr.toString() };
}

describe('temp files', () => {
  it('a guard killed while it reads git cat-file output leaves no file in the temp folder', () => {
    const repo = makeRepo({ 'a.txt': 'a\n'.repeat(50) });
    repo.write('a.txt', 'b\n'.repeat(50));
    repo.git(['add', '-A']);
    const tmp = outsideDir();
    const r = spawnSync(process.execPath, [CLI, 'check'], {
      cwd: repo.dir,
      env: cleanEnv({ CI: 'true', GUARD_FAULT: 'catfile:reading', TMPDIR: tmp }),
    });
    expect(r.signal).toBe('SIGKILL');
    expect(readdirSync(tmp).filter((f) => f.startsWith('guard-cat-'))).toEqual([]);
  });
});

type Snapshot = Map<string, Buffer | null>;

function snapshot(repo: TestRepo, files: readonly string[]): Snapshot {
  return new Map(
    files.map((f) => [
      f,
      existsSync(path.join(repo.dir, f)) ? readFileSync(path.join(repo.dir, f)) : null,
    ]),
  );
}

function same(a: Buffer | null | undefined, b: Buffer | null | undefined): boolean {
  return a === b || (a != null && b != null && a.equals(b));
}

/** Each file is exactly its old or its new content (or absent where that is one of them). */
function oldOrNew(now: Snapshot, before: Snapshot, after: Snapshot): Record<string, 'old' | 'new'> {
  const out: Record<string, 'old' | 'new'> = {};
  for (const [f, b] of now) {
    if (same(b, before.get(f))) out[f] = 'old';
    else if (same(b, after.get(f))) out[f] = 'new';
    else
      throw new Error(
        `${f} is neither its old nor its new content (${b?.length ?? 'absent'} bytes)`,
      );
  }
  return out;
}

function eqSnap(a: Snapshot, b: Snapshot): boolean {
  return [...a].every(([f, v]) => same(v, b.get(f)));
}

/** Checkpoints guard log lists, newest first. */
function checkpoints(repo: TestRepo): Array<{ id: string; reason: string; paths?: string[] }> {
  const { json } = repo.guardJson(['log', '--limit', '100000']);
  return json.entries.filter((e: { kind: string }) => e.kind === 'checkpoint');
}

function leftovers(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name === '.git') continue;
      if (e.isDirectory()) walk(path.join(d, e.name));
      else if (e.name.includes('.guard-tmp-')) out.push(path.join(d, e.name));
    }
  };
  walk(dir);
  for (const e of readdirSync(path.join(dir, '.git')))
    if (/^guard-index-|^guard\.lock/.test(e)) out.push(`.git/${e}`);
  return out;
}

const BIG_OLD = Buffer.from(lines(40_000, 'old'));
const BIG_NEW = Buffer.from(lines(45_000, 'new'));
const LOOSE = JSON.stringify({ lineThreshold: 1_000_000, byteThreshold: 1_000_000_000 });

describe('SIGKILL at each fault point of guard write', () => {
  const points: Array<[string, 'old' | 'new', boolean]> = [
    // point, what the file holds after the kill, whether a checkpoint was made
    ['checkpoint:after-add', 'old', false],
    ['checkpoint:before-update-ref', 'old', false],
    ['write:after-checkpoint', 'old', true],
    ['write:before-rename', 'old', true],
    ['atomic:before-rename', 'old', true],
    ['write:after-rename', 'new', true],
  ];
  it.each(points)(
    '%s: the file is %s; restorable; the next write takes over the lock',
    (point, expected, checkpointed) => {
      const repo = makeRepo({ 'big.txt': BIG_OLD, 'guard.config.json': LOOSE });
      const before = snapshot(repo, ['big.txt']);
      const after = new Map([['big.txt', BIG_NEW]]);
      const k = killedAt(repo, point, ['write', 'big.txt'], BIG_NEW);
      expect(k.signal).toBe('SIGKILL');
      expect(oldOrNew(snapshot(repo, ['big.txt']), before, after)).toEqual({ 'big.txt': expected });
      expect(leftovers(repo.dir).some((f) => f.endsWith('guard.lock'))).toBe(true); // it died holding the lock

      const cps = checkpoints(repo);
      expect(cps.length).toBe(checkpointed ? 1 : 0);
      if (expected === 'new') {
        const r = repo.guard(['restore', cps[0]!.id]);
        expect(r.code).toBe(0);
        expect(r.stderr).toContain(TAKEOVER);
        expect(eqSnap(snapshot(repo, ['big.txt']), before)).toBe(true);
      }
      repo.git(['update-ref', 'refs/guard/tmp/leftover', 'HEAD']); // as a killed fast-import would leave
      const next = repo.guard(['write', 'big.txt'], { input: BIG_NEW });
      expect(next.code).toBe(0);
      if (expected === 'old') expect(next.stderr).toContain(TAKEOVER);
      expect(eqSnap(snapshot(repo, ['big.txt']), after)).toBe(true);
      expect(leftovers(repo.dir)).toEqual([]);
      expect(repo.guardJson(['log']).code).toBe(0);
    },
  );
});

/** A main tree and a lane that changes four files, adds one and deletes one. */
function laneRepo(): { repo: TestRepo; files: string[]; lane: string; laneState: Snapshot } {
  const files = ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'gone.txt', 'new.txt'];
  const repo = makeRepo({
    'a.txt': lines(30, 'a'),
    'b.txt': lines(30, 'b'),
    'c.txt': lines(30, 'c'),
    'd.txt': lines(2000, 'd'),
    'gone.txt': lines(20, 'gone'),
  });
  const start = repo.guardJson(['start', 'agent']);
  expect(start.code).toBe(0);
  const lane: string = start.json.path;
  const w = (f: string, c: string | null) => {
    const l = new TestRepo(lane);
    if (c === null) l.git(['rm', '-q', f]);
    else l.write(f, c);
  };
  w('a.txt', lines(30, 'a') + 'a more\n');
  w('b.txt', 'b first\n' + lines(30, 'b'));
  w('c.txt', lines(30, 'c').replace('c 7\n', 'c seven\n'));
  w('d.txt', lines(2000, 'd').replace('d 1000\n', 'd thousand\n'));
  w('new.txt', 'brand new\n');
  w('gone.txt', null);
  const laneState = new Map(
    files.map((f) => [f, existsSync(path.join(lane, f)) ? readFileSync(path.join(lane, f)) : null]),
  );
  return { repo, files, lane, laneState };
}

function index(repo: TestRepo): string {
  return repo.git(['ls-files', '-s']);
}

/** The main tree's checkpoint a review made (the lane's own has the lane's reason). */
function mergeCheckpoint(repo: TestRepo): string | undefined {
  return checkpoints(repo).find((c) => c.reason.startsWith('before guard review merges'))?.id;
}

describe('SIGKILL at each fault point of guard review (merge-back into the main tree)', () => {
  const points = [
    'review:after-refs',
    'review:after-lock',
    'checkpoint:after-add@2', // @1 is the lane's own checkpoint, before the lock
    'review:after-checkpoint',
    'atomic:before-rename',
    'review:between-files@1',
    'review:between-files@3',
    'review:before-stage',
    'review:before-record',
  ];
  it.each(points)(
    '%s: each file old or new; the checkpoint undoes it; the next review works',
    (point) => {
      const { repo, files, laneState } = laneRepo();
      const before = snapshot(repo, files);
      const indexBefore = index(repo);
      const k = killedAt(repo, point, ['review', 'agent', '--auto']);
      expect(k.signal).toBe('SIGKILL');
      const now = snapshot(repo, files);
      const which = oldOrNew(now, before, laneState);
      const changed = Object.values(which).includes('new');
      if (point === 'review:between-files@3')
        expect(Object.values(which).filter((x) => x === 'new').length).toBeGreaterThanOrEqual(3);

      let stderr = '';
      const cp = mergeCheckpoint(repo);
      if (changed || index(repo) !== indexBefore) {
        expect(cp).toBeDefined();
        const r = repo.guard(['restore', cp!, '--staged']);
        expect(r.code).toBe(0);
        stderr += r.stderr;
        expect(eqSnap(snapshot(repo, files), before)).toBe(true);
        expect(index(repo)).toBe(indexBefore);
      }
      const next = repo.guard(['review', 'agent', '--auto']);
      stderr += next.stderr;
      expect(next.code).toBe(0);
      // killed while holding the lock (not before it is taken, and not after it is released)
      if (point !== 'review:after-refs' && point !== 'review:before-record')
        expect(stderr).toContain(TAKEOVER);
      else expect(stderr).not.toContain(TAKEOVER);
      expect(eqSnap(snapshot(repo, files), laneState)).toBe(true);
      expect(
        repo.git(['diff', '--cached', '--name-only']).split('\n').filter(Boolean).sort(),
      ).toEqual(['a.txt', 'b.txt', 'c.txt', 'd.txt', 'gone.txt', 'new.txt']);
      expect(leftovers(repo.dir)).toEqual([]);
    },
  );
});

describe('a temp file of a killed guard never gets into a checkpoint', () => {
  it('killed mid-write, then killed again after its checkpoint: restoring that checkpoint brings no temp file back, staged or not', () => {
    const { repo, files } = laneRepo();
    const before = snapshot(repo, files);
    const indexBefore = index(repo);
    expect(killedAt(repo, 'atomic:before-rename', ['review', 'agent', '--auto']).signal).toBe(
      'SIGKILL',
    );
    expect(leftovers(repo.dir).filter((f) => f.includes('.guard-tmp-')).length).toBe(1);
    // the next review checkpoints the main tree with that temp file still there, then dies too
    expect(killedAt(repo, 'review:after-checkpoint', ['review', 'agent', '--auto']).signal).toBe(
      'SIGKILL',
    );
    const cp = mergeCheckpoint(repo)!;
    expect(
      repo.git(['ls-tree', '-r', '--name-only', `refs/guard/checkpoints/${cp}`]),
    ).not.toContain('guard-tmp');
    expect(repo.guard(['restore', cp, '--staged']).code).toBe(0);
    expect(eqSnap(snapshot(repo, files), before)).toBe(true);
    expect(index(repo)).toBe(indexBefore);
    expect(repo.guard(['review', 'agent', '--auto']).code).toBe(0);
    expect(leftovers(repo.dir)).toEqual([]);
  });
});

describe('SIGKILL at each fault point of guard restore', () => {
  const points = [
    'restore:after-undo-checkpoint',
    'atomic:before-rename',
    'restore:between-files@1',
    'restore:between-files@2',
    'restore:before-stage',
  ];
  it.each(points)(
    '%s: each file old or new; the undo checkpoint puts it back; the next restore works',
    (point) => {
      const files = ['x.txt', 'y.txt', 'z.txt', 'w.txt'];
      const repo = makeRepo({ 'x.txt': lines(300, 'x'), 'y.txt': lines(10, 'y'), 'z.txt': 'z\n' });
      // a whole-tree checkpoint of this state, made by hand as plain git would
      const id = '20250101T000000Z-0000beef';
      repo.git(['update-ref', `refs/guard/checkpoints/${id}`, 'HEAD']);
      const target = snapshot(repo, files);
      repo.write('x.txt', lines(5, 'x'));
      repo.write('y.txt', lines(12, 'y'));
      repo.git(['rm', '-q', 'z.txt']);
      repo.write('w.txt', 'w\n');
      repo.git(['add', '-A']);
      const before = snapshot(repo, files);
      const indexBefore = index(repo);

      const k = killedAt(repo, point, ['restore', id, '--staged']);
      expect(k.signal).toBe('SIGKILL');
      const which = oldOrNew(snapshot(repo, files), before, target);
      const undo = checkpoints(repo).find((c) => c.reason === `before guard restore ${id}`)?.id;
      expect(undo).toBeDefined(); // every point is past the undo checkpoint
      let stderr = '';
      if (Object.values(which).includes('new') || index(repo) !== indexBefore) {
        const r = repo.guard(['restore', undo!, '--staged']);
        expect(r.code).toBe(0);
        stderr += r.stderr;
        expect(eqSnap(snapshot(repo, files), before)).toBe(true);
        expect(index(repo)).toBe(indexBefore);
      }
      const next = repo.guard(['restore', id, '--staged']);
      expect(next.code).toBe(0);
      expect(stderr + next.stderr).toContain(TAKEOVER); // it died holding the lock
      expect(eqSnap(snapshot(repo, files), target)).toBe(true);
      expect(repo.git(['status', '--porcelain'])).toBe('');
      expect(leftovers(repo.dir)).toEqual([]);
    },
  );
});

describe('SIGKILL at each fault point of guard check', () => {
  it.each(['check:before-records', 'check:after-records'])(
    '%s (auto mode): the index is untouched; the next check blocks again with its own ref',
    (point) => {
      const repo = makeRepo({ 'state.py': fixture('state.py') });
      repo.write('state.py', fixture('state_replacement.py'));
      repo.git(['add', '-A']);
      const indexBefore = index(repo);
      const k = killedAt(repo, point, ['check']);
      expect(k.signal).toBe('SIGKILL');
      expect(index(repo)).toBe(indexBefore);
      expect(repo.read('state.py')).toBe(fixture('state_replacement.py'));
      const refs = repo.refs('refs/guard/rejected/');
      expect(refs.length).toBe(point === 'check:after-records' ? 1 : 0);
      for (const r of refs)
        expect(repo.git(['show', `${r}:state.py`])).toBe(fixture('state_replacement.py'));
      const next = repo.guardJson(['check']);
      expect(next.code).toBe(1);
      expect(next.json.files[0].decision).toBe('blocked');
      expect(repo.refs('refs/guard/rejected/').length).toBe(refs.length + 1);
    },
  );

  it('check:before-unstage (a person rejects at a terminal): index unchanged, checkpoint made, the next check works', async () => {
    const { spawnGuard } = await import('../pty.js');
    const repo = makeRepo({ 'state.py': fixture('state.py'), 'notes.txt': 'a\n' });
    repo.write('state.py', fixture('state_replacement.py'));
    repo.write('notes.txt', 'a\nb\n');
    repo.git(['add', '-A']);
    const indexBefore = index(repo);
    const s = spawnGuard(['check'], repo.dir, { GUARD_FAULT: 'check:before-unstage' });
    await s.waitFor(/Take this hunk \[.*\]\? $/);
    s.type('n\r');
    await s.exit;
    expect(index(repo)).toBe(indexBefore);
    const cp = checkpoints(repo).find((c) => c.reason === 'before guard check changes the index');
    expect(cp).toBeDefined();
    expect(repo.git(['show', `refs/guard/checkpoints/${cp!.id}:state.py`])).toBe(
      fixture('state_replacement.py'),
    );
    const [ref] = repo.refs('refs/guard/rejected/');
    expect(repo.git(['show', `${ref}:state.py`])).toBe(fixture('state_replacement.py'));
    const next = repo.guard(['check']);
    expect(next.code).toBe(1);
  });
});

describe('SIGKILL at each fault point of guard discard', () => {
  it.each(['checkpoint:before-update-ref', 'discard:after-checkpoint', 'discard:before-remove'])(
    '%s: the lane is intact or checkpointed; the next discard works',
    (point) => {
      const repo = makeRepo({ 'a.txt': 'a\n' });
      const lane: string = repo.guardJson(['start', 'agent']).json.path;
      const l = new TestRepo(lane);
      l.write('a.txt', 'a\nfrom the agent\n');
      l.write('untracked.txt', 'only here\n');
      const k = killedAt(repo, point, ['discard', 'agent']);
      expect(k.signal).toBe('SIGKILL');
      expect(readFileSync(path.join(lane, 'untracked.txt'), 'utf8')).toBe('only here\n');
      const cp = checkpoints(repo).find((c) => c.reason === 'before guard discard agent');
      if (point === 'checkpoint:before-update-ref') expect(cp).toBeUndefined();
      else
        expect(repo.git(['show', `refs/guard/checkpoints/${cp!.id}:untracked.txt`])).toBe(
          'only here\n',
        );
      const next = repo.guardJson(['discard', 'agent']);
      expect(next.code).toBe(0);
      expect(existsSync(lane)).toBe(false);
      expect(repo.git(['show', `${next.json.checkpoint.ref}:a.txt`])).toBe('a\nfrom the agent\n');
    },
  );
});

/** Start the CLI and SIGKILL it after `ms`; resolves when it is gone. */
function killAfter(
  repo: TestRepo,
  args: string[],
  input: Buffer | string,
  ms: number,
): Promise<{ killed: boolean; code: number | null; took: number }> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: repo.dir,
      env: cleanEnv({ CI: 'true' }),
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    child.stdin.on('error', () => {});
    child.stdin.end(input);
    const t = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('close', (code, signal) => {
      clearTimeout(t);
      resolve({ killed: signal === 'SIGKILL', code, took: Date.now() - t0 });
    });
  });
}

/** Random kills: the seed is printed so a failure can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// npm test: 2 random kills of each (plus the named fault point that always kills); npm run soak: 30
const RANDOM_RUNS = scale(2, 30);

describe('SIGKILL after random delays', () => {
  const seed = Number(process.env.GUARD_FAULT_SEED) || Date.now();
  const random = rng(seed);

  it(`guard write of a large file, ${RANDOM_RUNS} runs (seed ${seed})`, async () => {
    const repo = makeRepo({ 'big.txt': BIG_OLD, 'guard.config.json': LOOSE });
    const before = snapshot(repo, ['big.txt']);
    const after = new Map([['big.txt', BIG_NEW]]);
    const seen = { old: 0, new: 0, killed: 0 };
    // How long a whole write takes here; the kills land in its second half, where it writes.
    const full = await killAfter(repo, ['write', 'big.txt'], BIG_NEW, 60_000);
    expect(full.code).toBe(0);
    writeFileSync(path.join(repo.dir, 'big.txt'), BIG_OLD);
    // One kill is certain whatever the machine's load (see the review test below): a named fault point
    const named = killedAt(repo, 'write:after-rename', ['write', 'big.txt'], BIG_NEW);
    expect(named.signal).toBe('SIGKILL');
    seen.killed++;
    seen.new++;
    expect(eqSnap(snapshot(repo, ['big.txt']), after)).toBe(true);
    const namedCp = checkpoints(repo).find((c) => c.reason === 'before guard write big.txt');
    expect(repo.guard(['restore', namedCp!.id]).code).toBe(0);
    expect(eqSnap(snapshot(repo, ['big.txt']), before)).toBe(true);
    for (let i = 0; i < RANDOM_RUNS; i++) {
      const r = await killAfter(
        repo,
        ['write', 'big.txt'],
        BIG_NEW,
        Math.floor(full.took * (0.4 + 0.7 * random())),
      );
      if (r.killed) seen.killed++;
      const which = oldOrNew(snapshot(repo, ['big.txt']), before, after)['big.txt']!;
      seen[which]++;
      if (which === 'new') {
        // the checkpoint it made takes the file back
        const cp = checkpoints(repo).find((c) => c.reason === 'before guard write big.txt');
        expect(repo.guard(['restore', cp!.id]).code).toBe(0);
        expect(eqSnap(snapshot(repo, ['big.txt']), before)).toBe(true);
      }
    }
    expect(seen.killed).toBeGreaterThan(0);
    const next = repo.guard(['write', 'big.txt'], { input: BIG_NEW });
    expect(next.code).toBe(0);
    expect(eqSnap(snapshot(repo, ['big.txt']), after)).toBe(true);
    expect(leftovers(repo.dir)).toEqual([]);
    console.log(`random write kills (seed ${seed}): ${JSON.stringify(seen)}`);
  });

  it(`guard review --auto of a lane with six files, ${RANDOM_RUNS} runs (seed ${seed})`, async () => {
    const { repo, files, laneState } = laneRepo();
    const before = snapshot(repo, files);
    const indexBefore = index(repo);
    const seen = { untouched: 0, partial: 0, whole: 0, killed: 0 };
    const full = await killAfter(repo, ['review', 'agent', '--auto'], '', 60_000);
    expect(full.code).toBe(0);
    // undo the calibration run, as any other
    const first = checkpoints(repo).find((c) => c.reason.startsWith('before guard review merges'));
    expect(repo.guard(['restore', first!.id, '--staged']).code).toBe(0);
    expect(eqSnap(snapshot(repo, files), before)).toBe(true);
    // One kill is certain whatever the machine's load: a named fault point in
    // the middle of the merge (three of six files written). A random delay
    // calibrated on a slow run may outlast every later, faster run on a busy
    // machine, so the random runs alone cannot promise a kill.
    const named = killedAt(repo, 'review:between-files@3', ['review', 'agent', '--auto']);
    expect(named.signal).toBe('SIGKILL');
    seen.killed++;
    seen.partial++;
    expect(
      Object.values(oldOrNew(snapshot(repo, files), before, laneState)).filter((x) => x === 'new')
        .length,
    ).toBeGreaterThan(0);
    const namedCp = checkpoints(repo).find((c) =>
      c.reason.startsWith('before guard review merges'),
    );
    expect(repo.guard(['restore', namedCp!.id, '--staged']).code).toBe(0);
    expect(eqSnap(snapshot(repo, files), before)).toBe(true);
    expect(index(repo)).toBe(indexBefore);
    for (let i = 0; i < RANDOM_RUNS; i++) {
      const r = await killAfter(
        repo,
        ['review', 'agent', '--auto'],
        '',
        Math.floor(full.took * (0.4 + 0.7 * random())),
      );
      if (r.killed) seen.killed++;
      const which = Object.values(oldOrNew(snapshot(repo, files), before, laneState));
      const n = which.filter((x) => x === 'new').length;
      seen[n === 0 ? 'untouched' : n === files.length ? 'whole' : 'partial']++;
      if (n > 0 || index(repo) !== indexBefore) {
        // (the state before each run is the same, so its checkpoint may be an earlier one, reused)
        const cp = checkpoints(repo).find((c) => c.reason.startsWith('before guard review merges'));
        expect(cp).toBeDefined();
        expect(repo.guard(['restore', cp!.id, '--staged']).code).toBe(0);
        expect(eqSnap(snapshot(repo, files), before)).toBe(true);
        expect(index(repo)).toBe(indexBefore);
      }
    }
    expect(seen.killed).toBeGreaterThan(0);
    const next = repo.guard(['review', 'agent', '--auto']);
    expect(next.code).toBe(0);
    expect(eqSnap(snapshot(repo, files), laneState)).toBe(true);
    expect(leftovers(repo.dir)).toEqual([]);
    console.log(`random review kills (seed ${seed}): ${JSON.stringify(seen)}`);
  });
});
