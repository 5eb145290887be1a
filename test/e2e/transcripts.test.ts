import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, fixture, laneWrite, lines, makeRepo, startLane, type Run, type TestRepo } from '../helpers.js';
import { TRANSCRIPTS } from './transcripts.expected.js';

afterAll(cleanupRepos);

/**
 * Whole transcripts of the main outputs (exit code, stdout, stderr), with
 * what changes from run to run normalised: times, object ids, ref ids, the
 * temporary folder. A change of wording shows as a diff of
 * transcripts.expected.ts (TRANSCRIPTS_PRINT=1 prints the new ones).
 */
function normalise(repo: TestRepo, r: Run): string {
  const clean = (s: string) =>
    s
      .split(repo.dir)
      .join('<repo>')
      .replace(/\d{8}T\d{6}Z-[0-9a-f]+/g, '<id>')
      .replace(/\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
      .replace(/\b[0-9a-f]{40}\b/g, '<oid>')
      .replace(/\b[0-9a-f]{7,12}\b/g, '<short>');
  return `exit ${r.code}\n--- stdout\n${clean(r.stdout)}--- stderr\n${clean(r.stderr)}`;
}

const seen: Record<string, string> = {};
function expectTranscript(name: keyof typeof TRANSCRIPTS, repo: TestRepo, r: Run): void {
  seen[name] = normalise(repo, r);
  if (process.env.TRANSCRIPTS_PRINT) return;
  expect(seen[name]).toBe(TRANSCRIPTS[name]);
}
afterAll(() => {
  if (process.env.TRANSCRIPTS_PRINT) writeFileSync(process.env.TRANSCRIPTS_PRINT, JSON.stringify(seen, null, 2));
});

describe('transcripts of the main outputs', () => {
  it('check: blocked, and allowed (silent)', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py'), 'notes.txt': 'a\n' });
    repo.write('state.py', fixture('state_replacement.py'));
    repo.write('notes.txt', 'a\nb\n');
    repo.git(['add', '-A']);
    expectTranscript('checkBlocked', repo, repo.guard(['check']));
    repo.git(['reset', '-q', '--', 'state.py']);
    expectTranscript('checkAllowed', repo, repo.guard(['check']));
  });

  it('write: allowed, then blocked', () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'state.py': fixture('state.py') });
    expectTranscript('writeAllowed', repo, repo.guard(['write', 'a.txt'], { input: 'a\nb\n' }));
    expectTranscript('writeBlocked', repo, repo.guard(['write', 'state.py'], { input: fixture('state_replacement.py') }));
  });

  it('lanes, review --dry-run, review, log', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py'), 'a.txt': 'a\n', 'guard.config.json': '{}' });
    const lane = startLane(repo);
    laneWrite(lane, 'state.py', fixture('state_replacement.py'));
    laneWrite(lane, 'a.txt', 'a\nb\n');
    laneWrite(lane, 'new.txt', lines(3));
    expectTranscript('lanes', repo, repo.guard(['lanes']));
    expectTranscript('reviewDryRun', repo, repo.guard(['review', 'agent', '--dry-run']));
    writeFileSync(path.join(repo.dir, '.git', 'decisions.json'), JSON.stringify([{ path: 'state.py', action: 'approve', strategy: 'append' }]));
    expectTranscript('review', repo, repo.guard(['review', 'agent', '--decisions', '.git/decisions.json']));
    expectTranscript('reviewAgain', repo, repo.guard(['review', 'agent']));
    expectTranscript('log', repo, repo.guard(['log']));
  });

  it('doctor', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    expectTranscript('doctor', repo, repo.guard(['doctor']));
  });
});

describe('words', () => {
  it('discard honours --quiet; ci --help describes --format', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    startLane(repo, 'gone');
    const quiet = repo.guard(['discard', 'gone', '--quiet']);
    expect([quiet.code, quiet.stdout, quiet.stderr]).toEqual([0, '', '']);
    const help = repo.guard(['ci', '--help']);
    expect(help.stdout).toMatch(/--format\s+text for people; json/);
  });
});
