import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { claudeHook, cleanupRepos, lines, makeRepo, type TestRepo } from '../helpers.js';

afterAll(cleanupRepos);

/**
 * One ref per agent session whose steps chain (git/session-chain.ts, docs/refs.md): a hook call's
 * checkpoint, step and decision record have no ref of their own; they hang off the session's
 * chain, `refs/guard/sessions/<harness>/<key>/chain`, one link per call. Everything that read
 * them by ref reads them through the chains: guard log, restore, rewind, --prune, the net.
 */

const CHAIN = 'refs/guard/sessions/claude/s1/chain';

function write(repo: TestRepo, file: string, content: string, id: string, session = 's1') {
  const r = claudeHook(
    repo,
    session,
    'Write',
    { file_path: path.join(repo.dir, file), content },
    id,
  );
  expect(r.code).toBe(0);
  writeFileSync(path.join(repo.dir, file), content);
  return r;
}

/** Three small writes of app.py in session s1: three links on one chain. */
function threeWrites(): TestRepo {
  const repo = makeRepo({ 'app.py': lines(20) });
  for (let i = 1; i <= 3; i++) write(repo, 'app.py', lines(20) + `more ${i}\n`, `w${i}`);
  return repo;
}

const links = (repo: TestRepo, ref = CHAIN) =>
  repo.git(['log', '--first-parent', '--format=%s', ref]).split('\n').filter(Boolean);

describe('session chains', () => {
  it('a session of hook writes is one ref: no checkpoint, step or decision ref per call; log, log --session, restore read them', () => {
    const repo = threeWrites();
    expect(repo.refs('refs/guard/checkpoints/')).toEqual([]);
    expect(repo.refs('refs/guard/decisions/')).toEqual([]);
    expect(repo.refs('refs/guard/sessions/').filter((r) => !r.includes('/policy/'))).toEqual([
      CHAIN,
    ]);
    // three links, then the chain's root
    expect(links(repo)).toHaveLength(4);
    expect(links(repo).at(-1)).toBe('guard session chain');
    const log = repo.guardJson(['log']).json;
    const cps = log.entries.filter((e: { kind: string }) => e.kind === 'checkpoint');
    expect(cps).toHaveLength(3);
    expect(log.entries.filter((e: { kind: string }) => e.kind === 'decision')).toHaveLength(3);
    expect(repo.guardJson(['log', '--session', 's1']).json.entries).toHaveLength(6);
    // the oldest checkpoint holds app.py as it was before the first write
    const r = repo.guard(['restore', cps[2].id]);
    expect(r.code).toBe(0);
    expect(repo.read('app.py')).toBe(lines(20));
  });

  it('a chain moved back by hand is noticed like a removed ref; guard recover puts it back', () => {
    const repo = threeWrites();
    const tip = repo.git(['rev-parse', CHAIN]).trim();
    repo.git(['update-ref', CHAIN, `${CHAIN}~2`]);
    const doc = repo.guard(['doctor']);
    expect(doc.stdout + doc.stderr).toMatch(/moved to another commit outside guard.*chain/);
    const next = claudeHook(
      repo,
      's1',
      'Write',
      { file_path: path.join(repo.dir, 'b.py'), content: 'x\n' },
      'w4',
    );
    expect(JSON.stringify(next.json)).toMatch(/safety net/);
    expect(repo.guard(['recover']).code).toBe(0);
    expect(repo.git(['rev-parse', CHAIN]).trim()).toBe(tip);
    expect(repo.guard(['doctor']).stdout).not.toMatch(/outside guard/);
  });

  it('a chain removed by hand is noticed, and put back by recover', () => {
    const repo = threeWrites();
    const tip = repo.git(['rev-parse', CHAIN]).trim();
    repo.git(['update-ref', '-d', CHAIN]);
    const doc = repo.guard(['doctor']);
    expect(doc.stdout + doc.stderr).toMatch(/removed outside guard/);
    expect(repo.guard(['recover']).code).toBe(0);
    expect(repo.git(['rev-parse', CHAIN]).trim()).toBe(tip);
  });

  it('eight hook calls of one session at once: eight links, none lost, the net quiet', async () => {
    const repo = makeRepo({ 'app.py': lines(20) });
    const { spawn } = await import('node:child_process');
    const { claudePayload, cleanEnv } = await import('../helpers.js');
    const cli = path.resolve(__dirname, '../../dist/cli/main.js');
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => {
        const p = spawn(process.execPath, [cli, 'hook', 'claude'], {
          cwd: repo.dir,
          env: cleanEnv(),
        });
        p.stdin.end(
          claudePayload(
            repo,
            's1',
            'Write',
            { file_path: path.join(repo.dir, `f${i}.py`), content: `f ${i}\n` },
            `p${i}`,
          ),
        );
        let out = '';
        p.stdout.on('data', (b: Buffer) => (out += b.toString()));
        return new Promise<void>((done) =>
          p.on('close', (code) => {
            expect(code).toBe(0);
            expect(out).toBe('');
            done();
          }),
        );
      }),
    );
    const written = links(repo).filter((s) => /write f\d\.py/.test(s));
    expect(written).toHaveLength(8);
    expect(repo.guard(['doctor']).stdout).not.toMatch(/outside guard/);
    expect(repo.guardJson(['log', '--session', 's1']).json.entries).toHaveLength(16);
  });

  it('both layouts in one repository: steps with a ref each (an older guard) and a chain', () => {
    const repo = makeRepo({ 'app.py': lines(20) });
    // what an older guard wrote (GUARD_SESSION_CHAIN=0 writes the per-call refs)
    const r = repo.guard(['hook', 'claude'], {
      input: JSON.stringify({
        session_id: 's2',
        cwd: repo.dir,
        hook_event_name: 'PreToolUse',
        tool_name: 'Write',
        tool_input: { file_path: path.join(repo.dir, 'app.py'), content: lines(20) + 'old\n' },
        tool_use_id: 'x',
      }),
      env: { GUARD_SESSION_CHAIN: '0' },
    });
    expect(r.code).toBe(0);
    writeFileSync(path.join(repo.dir, 'app.py'), lines(20) + 'old\n');
    expect(
      repo.refs('refs/guard/sessions/claude/s2/').filter((x) => !x.includes('/policy/')),
    ).toHaveLength(1);
    expect(repo.refs('refs/guard/checkpoints/')).toHaveLength(1);
    write(repo, 'app.py', lines(20) + 'old\nnew\n', 'w1', 's2');
    // s2: one step with a ref of its own, one on its chain
    expect(repo.guardJson(['log', '--session', 's2']).json.entries).toHaveLength(4);
    expect(
      repo.guardJson(['log']).json.entries.filter((e: { kind: string }) => e.kind === 'checkpoint'),
    ).toHaveLength(2);
    const rw = repo.guard(['rewind', 's2']);
    expect(rw.code).toBe(0);
    // back to before the session's first write: the step with a ref of its own
    expect(repo.read('app.py')).toBe(lines(20));
  });

  it('guard log --prune cuts a chain: the kept links on a new root, the pruned calls gone, their decisions kept', () => {
    const repo = threeWrites();
    const pruned = repo.guardJson(['log', '--prune', '--keep', '1']).json;
    expect(pruned.pruned.checkpoints).toBe(2);
    // the newest link, on a new root
    expect(links(repo)).toHaveLength(2);
    const log = repo.guardJson(['log']).json;
    expect(log.entries.filter((e: { kind: string }) => e.kind === 'checkpoint')).toHaveLength(1);
    // without --include-rejected the decisions stay: the pruned calls' with refs of their own
    expect(log.entries.filter((e: { kind: string }) => e.kind === 'decision')).toHaveLength(3);
    expect(repo.refs('refs/guard/decisions/')).toHaveLength(2);
    expect(repo.guard(['doctor']).stdout).not.toMatch(/outside guard/);
    expect(repo.guardJson(['log', '--prune', '--keep', '0']).json.pruned.checkpoints).toBe(1);
    expect(repo.refs('refs/guard/sessions/').filter((r) => !r.includes('/policy/'))).toEqual([]);
  });
});
