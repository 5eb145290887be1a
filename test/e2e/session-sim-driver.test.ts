import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, ROOT } from '../helpers.js';

/**
 * The history soak's driver (scripts/session-sim.mjs runSessionMixed, `npm run soak -- --only
 * history`): most calls go to the resident hook server over its socket, every N-th through the
 * real `guard hook claude` process. The history it builds must be the one the command builds:
 * the same calls through the real command alone and through the server alone leave the same
 * refs, the same journal lines, the same session chain and index, the same files (ids and
 * times aside).
 */

interface Sim {
  makeSessionRepo(dir: string, env: NodeJS.ProcessEnv): string;
  runSession(o: object): { writePre: number[] };
  runSessionMixed(o: object): Promise<{ writePre: number[]; writePreResident: number[] }>;
  residentHook(o: object): Promise<{ stop(): void; server: { pid?: number } }>;
}
interface Lib {
  cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv;
}
const load = async <T>(rel: string): Promise<T> =>
  (await import(path.join(ROOT, 'scripts', rel) as string)) as T;

const tmp = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'guard-sim-driver-')));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const git = (repo: string, args: string[]) =>
  spawnSync('git', args, { cwd: repo, encoding: 'utf8' }).stdout;

/** ids, times, object names and the work tree's hash out: what is left is the records' shape. */
const shapeOf = (text: string, repo: string) =>
  text
    .replaceAll(repo, 'REPO')
    .replace(/\b[0-9a-f]{40}\b/g, 'OID')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, 'TIME')
    .replace(/\d{8}T\d{6}Z-[0-9a-f]{8}/g, 'ID')
    .replace(/\b[0-9a-f]{16}\b/g, 'HASH')
    .replace(/\b[0-9a-f]{32}\b/g, 'KEY');

/** What a session of calls left in `repo`: refs, journal, chain, session index, files. */
function records(repo: string, session: string) {
  const chain = `refs/guard/sessions/claude/${session}/chain`;
  const index = path.join(repo, '.git', 'guard-sessions', 'claude', session);
  return {
    refs: shapeOf(git(repo, ['for-each-ref', '--format=%(refname)', 'refs/guard/']), repo)
      .split('\n')
      .sort(),
    journal: shapeOf(readFileSync(path.join(repo, '.git', 'guard', 'journal'), 'utf8'), repo),
    // the links, first parent first (one per event it holds), and every commit under the chain
    // (links and the records they hold: git log orders commits of one second as it likes)
    links: shapeOf(git(repo, ['log', '--first-parent', '--format=%s', chain]), repo),
    chain: shapeOf(git(repo, ['log', '--format=%s%n%b%x00', chain]), repo)
      .split('\0')
      .sort(),
    chainLength: git(repo, ['rev-list', '--count', chain]).trim(),
    index: readdirSync(index)
      .map((f) => f.slice(0, 2))
      .sort()
      .join(' '),
    files: git(repo, [
      'hash-object',
      ...readdirSync(path.join(repo, 'src')).map((f) => `src/${f}`),
    ]),
    status: git(repo, ['status', '--porcelain']),
  };
}

describe('the history soak drives calls as the command does', () => {
  it('12 calls (writes, edits, two shell calls) through the resident server leave the records the real guard hook claude leaves', async () => {
    const sim = await load<Sim>('session-sim.mjs');
    const lib = await load<Lib>('lib.mjs');
    const env = lib.cleanEnv({
      GIT_AUTHOR_NAME: 'Sim',
      GIT_AUTHOR_EMAIL: 'sim@guard.invalid',
      GIT_COMMITTER_NAME: 'Sim',
      GIT_COMMITTER_EMAIL: 'sim@guard.invalid',
    });
    const node = process.execPath;
    const real = sim.makeSessionRepo(path.join(tmp, 'real'), env);
    const served = sim.makeSessionRepo(path.join(tmp, 'served'), env);
    const mixed = sim.makeSessionRepo(path.join(tmp, 'mixed'), env);
    const r = sim.runSession({
      node,
      cli: CLI,
      repo: real,
      env,
      to: 12,
      hooks: true,
      session: 's',
    });
    expect(r.writePre).toHaveLength(10);
    const resident = await sim.residentHook({ node, cli: CLI, env, dir: path.join(tmp, 'sock') });
    try {
      // every call through the server (no 1000th call among 12), then every 3rd (calls 2, 5, 8, 11: four writes) through the command
      const s = await sim.runSessionMixed({
        ...{ node, cli: CLI, repo: served, env, to: 12, session: 's', resident, realEvery: 1000 },
      });
      expect([s.writePre.length, s.writePreResident.length]).toEqual([0, 10]);
      const m = await sim.runSessionMixed({
        ...{ node, cli: CLI, repo: mixed, env, to: 12, session: 's', resident, realEvery: 3 },
      });
      expect([m.writePre.length, m.writePreResident.length]).toEqual([4, 6]);
    } finally {
      resident.stop();
    }
    const want = records(real, 's');
    // the chain holds every call's links (a write's pre event; a shell call's pre and post)
    expect(Number(want.chainLength)).toBeGreaterThanOrEqual(12);
    expect(records(served, 's')).toEqual(want);
    expect(records(mixed, 's')).toEqual(want);
  }, 180_000);
});
