import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { resealJournal } from '../../src/git/journal-seal.js';
import { afterAll, describe, expect, it } from 'vitest';
import {
  claudePayload,
  cleanupRepos,
  lines,
  makeRepo,
  tracedHook,
  type TestRepo,
} from '../helpers.js';

afterAll(cleanupRepos);

/**
 * Issue 22, S1: a hook call reads the strictest policy its session saw from
 * the session's policy anchors (git/session-policy.ts: one ref per config,
 * one for-each-ref of a few refs), not from every step of the session. The
 * session index (.git/guard-sessions/) notes the anchors, and the agent can
 * write it: deleted, emptied or forged, it must never loosen the gate; it
 * only decides whether the session's steps are read again. Each test loosens
 * guard.config.json at HEAD the way an agent can (`git commit --no-verify`)
 * after a session started under the defaults, then writes 270 lines down
 * to one.
 */

const claude = (
  repo: TestRepo,
  tool: string,
  input: object,
  o: { post?: boolean; id?: string } = {},
) => claudePayload(repo, 'pol-1', tool, input, o.id ?? 'toolu_1', o.post);

const traced = tracedHook;

const forEachRef = (git: string[]) => git.filter((l) => l.includes('for-each-ref'));
/** A for-each-ref that lists the session's steps (all of refs/guard/sessions/<harness>/<key>/), not its anchors. */
const readsSteps = (git: string[]) =>
  forEachRef(git).some((l) => /refs\/guard\/sessions\/claude\/pol-1\/(\s|$)/.test(l + ' '));

const indexDir = (repo: TestRepo) =>
  path.join(repo.dir, '.git', 'guard-sessions', 'claude', 'pol-1');
const anchors = (repo: TestRepo) =>
  repo
    .git(['for-each-ref', '--format=%(refname)', 'refs/guard/sessions/claude/pol-1/policy/'])
    .split('\n')
    .filter(Boolean);

/**
 * The anchors out of guard's journal as well (.git/guard/journal, "<oid> <ref>" per ref guard
 * wrote): else the net (flows/doctor/integrity.ts) notices an anchor removed or moved before
 * the policy is read, and refuses every call until a person looks. What is tried here is
 * the agent that hides it from the net too.
 */
function hideFromJournal(repo: TestRepo): void {
  const file = path.join(repo.dir, '.git', 'guard', 'journal');
  const kept = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => !l.includes('/policy/'));
  writeFileSync(file, kept.join('\n'));
  // (sealed as guard would have left it: a journal rewritten by hand is itself said first, holes5)
  resealJournal(path.join(repo.dir, '.git'), file);
}

/** A session under the defaults: writes and a shell call, so the anchors and the index are in place. */
function startSession(repo: TestRepo): void {
  for (let i = 0; i < 3; i++) {
    traced(
      repo,
      claude(
        repo,
        'Write',
        { file_path: path.join(repo.dir, `n${i}.txt`), content: `${i}\n` },
        { id: `n${i}` },
      ),
    );
    writeFileSync(path.join(repo.dir, `n${i}.txt`), `${i}\n`);
  }
  traced(repo, claude(repo, 'Bash', { command: 'ls' }, { id: 'b1' }));
  traced(repo, claude(repo, 'Bash', { command: 'ls' }, { id: 'b1', post: true }));
  expect(anchors(repo).length).toBeGreaterThan(0);
  expect(existsSync(indexDir(repo))).toBe(true);
}

/** What an agent can do from the shell: a looser config committed past the hooks. */
function loosen(repo: TestRepo): void {
  repo.write('guard.config.json', JSON.stringify({ lineThreshold: 100000, changeRatio: 1 }));
  repo.git(['add', 'guard.config.json']);
  repo.git(['-c', 'core.hooksPath=/dev/null', 'commit', '-q', '--no-verify', '-m', 'loosen']);
}

const cut = (repo: TestRepo, id = 'w1') =>
  traced(
    repo,
    claude(repo, 'Write', { file_path: path.join(repo.dir, 'state.py'), content: 'x\n' }, { id }),
  );

describe('the strictest policy of a session, read from its anchors', () => {
  it('loosened at HEAD mid-session: denied, the anchors read from the ref files (no for-each-ref) and no read of the steps', () => {
    const repo = makeRepo({ 'state.py': lines(270) });
    startSession(repo);
    loosen(repo);
    const r = cut(repo);
    expect(r.decision).toBe('deny');
    expect(forEachRef(r.git)).toEqual([]);
    expect(readsSteps(r.git)).toBe(false);
  });

  it('the anchors packed (git pack-refs --all --prune, as guard packs its refs): read from packed-refs, still denied', () => {
    const repo = makeRepo({ 'state.py': lines(270) });
    startSession(repo);
    loosen(repo);
    repo.git(['pack-refs', '--all', '--prune']);
    expect(existsSync(path.join(repo.dir, '.git', 'refs', 'guard', 'sessions'))).toBe(false);
    const r = cut(repo);
    expect(r.decision).toBe('deny');
    expect(forEachRef(r.git)).toEqual([]);
    expect(readsSteps(r.git)).toBe(false);
  });

  it('the index deleted: the steps are read again, still denied, until the anchors hold every config the steps did', () => {
    const repo = makeRepo({ 'state.py': lines(270) });
    startSession(repo);
    loosen(repo);
    rmSync(path.join(repo.dir, '.git', 'guard-sessions'), { recursive: true, force: true });
    const r = cut(repo);
    expect(r.decision).toBe('deny');
    expect(readsSteps(r.git)).toBe(true);
    // that call anchored the looser config it found at HEAD; the next one notes the anchors
    expect(cut(repo, 'w2').decision).toBe('deny');
    const third = cut(repo, 'w3');
    expect(third.decision).toBe('deny');
    expect(readsSteps(third.git)).toBe(false);
  });

  it("the index's note of the anchors emptied or torn: the anchors still count", () => {
    const repo = makeRepo({ 'state.py': lines(270) });
    startSession(repo);
    loosen(repo);
    const note = readdirSync(indexDir(repo)).find((n) => n.startsWith('c-'))!;
    writeFileSync(path.join(indexDir(repo), note), '[]');
    expect(cut(repo).decision).toBe('deny');
    writeFileSync(path.join(indexDir(repo), note), '{not json');
    expect(cut(repo, 'w2').decision).toBe('deny');
  });

  it('the anchors deleted (git update-ref -d), the index left: the note does not match, the steps are read, denied', () => {
    const repo = makeRepo({ 'state.py': lines(270) });
    startSession(repo);
    for (const ref of anchors(repo)) repo.git(['update-ref', '-d', ref]);
    hideFromJournal(repo);
    loosen(repo);
    const r = cut(repo);
    expect(r.decision).toBe('deny');
    expect(readsSteps(r.git)).toBe(true);
    // the call put back an anchor of each config the steps held: two calls on, only the anchors are read
    expect(anchors(repo).length).toBeGreaterThan(0);
    expect(cut(repo, 'w2').decision).toBe('deny');
    const third = cut(repo, 'w3');
    expect(third.decision).toBe('deny');
    expect(readsSteps(third.git)).toBe(false);
  });

  it('an anchor moved to a commit of the looser config: the note names another commit, the steps are read, denied', () => {
    const repo = makeRepo({ 'state.py': lines(270) });
    startSession(repo);
    loosen(repo);
    for (const ref of anchors(repo)) repo.git(['update-ref', ref, 'HEAD']);
    hideFromJournal(repo);
    const r = cut(repo);
    expect(r.decision).toBe('deny');
    expect(readsSteps(r.git)).toBe(true);
  });

  it('the index replaced by a forged one (ready, no anchors noted, no entries): denied', () => {
    const repo = makeRepo({ 'state.py': lines(270) });
    startSession(repo);
    loosen(repo);
    const dir = indexDir(repo);
    const note = readdirSync(dir).find((n) => n.startsWith('c-'))!;
    rmSync(dir, { recursive: true, force: true });
    // what an agent can write: a "ready" index whose note says the session has no anchors
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'ready.3'), '');
    writeFileSync(path.join(dir, note), '[]');
    expect(cut(repo).decision).toBe('deny');
  });

  it('a forged anchor of a looser config adds a config: it cannot loosen what the real anchors hold', () => {
    const repo = makeRepo({ 'state.py': lines(270) });
    startSession(repo);
    loosen(repo);
    const real = anchors(repo)[0]!;
    const forged = real.replace(/[^/]+$/, '29991231T000000Z-forged00');
    repo.git(['update-ref', forged, 'HEAD']);
    const r = cut(repo);
    expect(r.decision).toBe('deny');
  });

  it('a new session starts from the new HEAD: what a person commits is the policy', () => {
    const repo = makeRepo({ 'state.py': lines(270) });
    startSession(repo);
    loosen(repo);
    const fresh = JSON.parse(
      claude(repo, 'Write', { file_path: path.join(repo.dir, 'state.py'), content: 'x\n' }),
    );
    const r = traced(repo, JSON.stringify({ ...fresh, session_id: 'pol-2' }));
    expect(r.decision).toBeNull();
  });
});
