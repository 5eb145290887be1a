import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  chainedRecords,
  claudeDecision as decision,
  claudeHook,
  cleanupRepos,
  lines,
  makeRepo,
  type TestRepo,
} from '../helpers.js';

/**
 * adv7 (docs/reliability/adv7.md): other ways git reads a cut history than `.git/shallow` and
 * `.git/info/grafts` (adv6): GIT_SHALLOW_FILE for gc, a forged commit-graph.
 */

afterAll(cleanupRepos);

const CHAIN = 'refs/guard/sessions/claude/s1/chain';

function write(repo: TestRepo, file: string, content: string, id: string) {
  const r = claudeHook(repo, 's1', 'Write', { file_path: path.join(repo.dir, file), content }, id);
  expect(r.code).toBe(0);
  if (decision(r) === null) writeFileSync(path.join(repo.dir, file), content);
  return r;
}

/** Three allowed writes of app.py in session s1: three links, three checkpoints only the chain holds. */
function threeWrites(): TestRepo {
  const repo = makeRepo({ 'app.py': lines(200), 'notes.txt': 'n\n' });
  for (let i = 1; i <= 3; i++) write(repo, 'app.py', lines(200) + `more ${i}\n`, `w${i}`);
  expect(chainedRecords(repo).checkpoints).toHaveLength(3);
  return repo;
}

/** `.git/objects/info/commit-graph` with `oid`'s first parent made "none" (the trailing checksum left stale: git does not check it on read). */
function forgeGraph(repo: TestRepo, oid: string): void {
  const file = path.join(repo.dir, '.git', 'objects', 'info', 'commit-graph');
  const b = readFileSync(file);
  const chunk = (id: string) => {
    for (let i = 0; i <= b[6]!; i++)
      if (b.toString('latin1', 8 + 12 * i, 12 + 12 * i) === id)
        return Number(b.readBigUInt64BE(12 + 12 * i));
    throw new Error(`no ${id} chunk`);
  };
  const n = b.readUInt32BE(chunk('OIDF') + 255 * 4);
  const oidl = chunk('OIDL');
  let at = -1;
  for (let i = 0; i < n; i++)
    if (b.toString('hex', oidl + 20 * i, oidl + 20 * i + 20) === oid) at = i;
  expect(at).toBeGreaterThanOrEqual(0);
  b.writeUInt32BE(0x70000000, chunk('CDAT') + at * 36 + 20);
  writeFileSync(file, b);
}

describe('adv7: history read cut by other means than .git/shallow', () => {
  it('held: GIT_SHALLOW_FILE naming the chain tip for `git gc --prune=now`: gc fails, nothing is lost, doctor quiet', () => {
    const repo = threeWrites();
    const r = spawnSync(
      'sh',
      ['-c', `git rev-parse ${CHAIN} > ../s && GIT_SHALLOW_FILE=../s git gc --prune=now -q`],
      { cwd: repo.dir, encoding: 'utf8' },
    );
    // git 2.39: "fatal: shallow file has changed since we read it", "failed to run repack"
    expect(r.status).not.toBe(0);
    expect(repo.git(['rev-list', '--count', CHAIN]).trim()).not.toBe('1');
    expect(chainedRecords(repo).checkpoints).toHaveLength(3);
    expect(repo.guard(['doctor']).stdout).not.toMatch(/outside guard/);
  });

  // was a hole: git reads a commit's parents from the commit-graph file without checking its
  // checksum; a graph that said the chain's tip had no parent cut every guard read of the chain
  // (guard log "no checkpoints or decisions yet", doctor quiet). guard's git runs read no graph now
  it('a forged commit-graph giving the chain tip no parent: guard log still lists the three writes', () => {
    const repo = threeWrites();
    repo.git(['commit-graph', 'write', '--reachable']);
    forgeGraph(repo, repo.git(['rev-parse', CHAIN]).trim());
    expect(repo.git(['rev-list', '--count', CHAIN]).trim()).toBe('1');
    const log = repo.guard(['log', '--session', 's1']);
    // on main: "guard: no checkpoints or decisions yet"
    expect(log.stdout).not.toMatch(/no checkpoints or decisions yet/);
    expect(log.stdout.match(/checkpoint +before Write/g) ?? [], log.stdout).toHaveLength(3);
    expect(repo.guard(['doctor']).stdout).not.toMatch(/outside guard/);
  });
});
