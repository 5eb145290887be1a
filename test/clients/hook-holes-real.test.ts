/**
 * Two holes of `guard hook` checked in the real Claude Code (2.1.330),
 * offline against the scripted model (test/harness/): an Edit that Claude
 * matches only after turning the file's CRLF into LF (the 150-line file
 * that became 1 line), and a command that exits non-zero, after which
 * Claude sends PostToolUseFailure instead of PostToolUse. guard is
 * installed in the project by `guard init --agent claude`, as a user does.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupRepos, lines, type TestRepo } from '../helpers.js';
import { claudeProject, installClaude, playClaude } from '../harness/claude-project.js';
import type { Installed } from '../harness/install.js';
import type { ModelServer } from '../harness/model-server.js';
import type { HarnessRun } from '../harness/run.js';

const CRLF_FILE = Array.from({ length: 150 }, (_, i) => `row ${i}`).join('\r\n') + '\r\n';
const WORK = lines(200) + lines(150, 'work');
const FAILING = 'git checkout -- . && ./no-such-test.sh';

let installed: Installed;
let repo: TestRepo;
let server: ModelServer;
let run: HarnessRun;

beforeAll(async () => {
  installed = await installClaude();
  repo = claudeProject({ 'data.txt': CRLF_FILE, 'big.py': lines(200) });
  repo.write('big.py', WORK);
  ({ run, server } = await playClaude(installed, repo, [
    {
      kind: 'edit',
      file: path.join(repo.dir, 'data.txt'),
      old: CRLF_FILE.replace(/\r\n/g, '\n'),
      new: 'row 0\n',
    },
    { kind: 'shell', command: FAILING },
  ]));
}, 300_000);

afterAll(cleanupRepos);

const told = (step: number) => JSON.stringify(server.requestAtStep(step + 1)?.body?.messages ?? []);

describe('guard hook in the real Claude Code: loose edits and failed commands', () => {
  it('plays the script', () => {
    expect(run.timedOut, run.stderr.slice(-2000)).toBe(false);
    expect(server.requestAtStep(2), run.stdout.slice(-3000)).toBeDefined();
  });

  it('an Edit that matches only after CRLF -> LF is measured and refused: the file keeps its 150 lines', () => {
    expect(readFileSync(path.join(repo.dir, 'data.txt'), 'utf8')).toBe(CRLF_FILE);
    const text = told(0);
    expect(text).toContain('guard refused this write');
    expect(text).toContain('data.txt would lose 149 of 150 lines');
    expect(repo.refs('refs/guard/rejected/')).toHaveLength(1);
  });

  it('after a command that exits non-zero (PostToolUseFailure) the model is told what it destroyed', () => {
    expect(repo.read('big.py')).toBe(lines(200));
    const text = told(1);
    expect(text.slice(text.lastIndexOf('no-such-test'))).toContain('big.py lost 150 of 350 lines');
  });
});

describe('guard hook in the real Claude Code: a background command', () => {
  let bgRepo: TestRepo;
  let bgServer: ModelServer;
  let bgRun: HarnessRun;
  beforeAll(async () => {
    bgRepo = claudeProject({ 'big.py': lines(200) });
    bgRepo.write('big.py', WORK);
    ({ run: bgRun, server: bgServer } = await playClaude(installed, bgRepo, [
      // its post event comes while it sleeps; the checkout runs 2 s later, during the next command
      { kind: 'shell', command: 'sleep 2; git checkout -- .', background: true },
      { kind: 'shell', command: 'sleep 5' },
    ]));
  }, 300_000);

  it('what it destroyed after its post event is told to the model at the next call, and guard rewind brings it back', () => {
    expect(bgServer.requestAtStep(2), bgRun.stdout.slice(-3000)).toBeDefined();
    expect(bgRepo.read('big.py')).toBe(lines(200));
    const text = JSON.stringify(bgServer.requestAtStep(2)?.body?.messages ?? []);
    expect(text).toContain('big.py lost 150 of 350 lines');
    expect(text).toContain('run in the background');
    const rw = bgRepo.guardJson(['rewind', bgRun.sessionId!]);
    expect(rw.code, rw.stderr).toBe(0);
    expect(bgRepo.read('big.py')).toBe(WORK);
  });
});
