import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  chainedRecords,
  claudeDecision as decision,
  claudeHook,
  cleanupRepos,
  installGuard,
  lines,
  makeRepo,
  type TestRepo,
} from '../helpers.js';

/**
 * adv6 (docs/reliability/adv6.md): the session chains (git/session-chain.ts) and the journal's
 * seal (git/journal-seal.ts), attacked from the agent's shell so that a session's checkpoints
 * vanish, or are read as other than guard kept them, without a word.
 */

afterAll(cleanupRepos);

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

const sealLock = (repo: TestRepo) => path.join(repo.dir, '.git', 'info', 'guard-journal-seal.lock');
const journal = (repo: TestRepo) => path.join(repo.dir, '.git', 'guard', 'journal');
/** A commit with no parent and nothing in it: a chain begun anew. */
const freshRoot = (repo: TestRepo) =>
  repo
    .git(['commit-tree', '-m', 'x', repo.git(['hash-object', '-t', 'tree', '/dev/null']).trim()])
    .trim();

describe('adv6: the journal seal trusted a lock file the agent can make', () => {
  it('the seal\'s lock made by hand and "+ CHAIN" appended beside it, the chain moved to a fresh root: doctor FAILs and the hook refuses', () => {
    const repo = threeWrites();
    const plant = () => {
      // what a background loop in the agent's shell keeps there: the lock, and a `+` line past the seal
      writeFileSync(sealLock(repo), '');
      appendFileSync(journal(repo), `+ ${CHAIN}\n`);
    };
    plant();
    repo.git(['update-ref', CHAIN, freshRoot(repo)]);
    // on main: the `+` line past the seal was trusted while the lock was there ("a note being
    // written"), so the chain read as "coming": doctor ok, guard log empty, the hook allowed, and
    // after `git gc --prune=now` every checkpoint of the session was gone with no word anywhere
    const doc = repo.guard(['doctor']);
    expect(doc.stdout).toMatch(
      /FAIL .*moved to another commit outside guard .*sessions\/claude\/s1\/chain/,
    );
    plant();
    const r = write(repo, 'notes.txt', 'x\n', 'w4');
    expect(decision(r)).toBe('deny');
    expect(JSON.stringify(r.json)).toMatch(/safety net/);
  });
});

describe('adv6: history cut under a chain (grafts, .git/shallow)', () => {
  it(".git/info/grafts naming the chain's tip (no parents): guard log, restore still read every link", () => {
    const repo = threeWrites();
    writeFileSync(path.join(repo.dir, '.git', 'info', 'grafts'), repo.git(['rev-parse', CHAIN]));
    // on main: guard read through the graft (GIT_NO_REPLACE_OBJECTS does not turn grafts off):
    // "no checkpoints or decisions yet", doctor all ok, and rewind had nothing to rewind
    const log = repo.guardJson(['log']).json;
    const cps = log.entries.filter((e: { kind: string }) => e.kind === 'checkpoint');
    expect(cps).toHaveLength(3);
    expect(repo.guard(['restore', cps[2].id]).code).toBe(0);
    expect(repo.read('app.py')).toBe(lines(200));
  });

  it(".git/shallow naming the chain's tip: doctor FAILs and the hook refuses, before git gc and after it", () => {
    const repo = threeWrites();
    const shallow = path.join(repo.dir, '.git', 'shallow');
    writeFileSync(shallow, repo.git(['rev-parse', CHAIN]));
    // on main: guard log "no checkpoints or decisions yet", doctor ok, the hook allowed; then
    // `git gc --prune=now` deleted every earlier link, checkpoint and record, the chain's ref untouched
    expect(repo.guard(['doctor']).stdout).toMatch(
      /FAIL .*history was cut outside guard: \.git\/shallow names 1 commit.*guard's own records/,
    );
    expect(decision(write(repo, 'notes.txt', 'x\n', 'w4'))).toBe('deny');
    repo.git(['gc', '--prune=now', '-q']);
    expect(decision(write(repo, 'notes.txt', 'x\n', 'w5'))).toBe('deny');
  });

  it('.git/shallow naming HEAD of a history made here: doctor FAILs (gc would delete the commits behind it)', () => {
    const repo = makeRepo({ 'app.py': lines(20) });
    for (let i = 1; i <= 3; i++) {
      repo.write('app.py', lines(20) + `c${i}\n`);
      repo.commitAll(`c${i}`);
    }
    writeFileSync(path.join(repo.dir, '.git', 'shallow'), repo.git(['rev-parse', 'HEAD']));
    expect(repo.guard(['doctor']).stdout).toMatch(
      /FAIL .*history was cut outside guard.*history still in the object store/,
    );
  });

  it('held: a real shallow clone (git clone --depth 1) is not cut history', () => {
    const origin = makeRepo({ 'app.py': lines(20) });
    for (let i = 1; i <= 3; i++) {
      origin.write('app.py', lines(20) + `c${i}\n`);
      origin.commitAll(`c${i}`);
    }
    const clone = makeRepo();
    rmSync(clone.dir, { recursive: true, force: true });
    origin.git(['clone', '-q', '--depth', '1', `file://${origin.dir}`, clone.dir]);
    expect(existsSync(path.join(clone.dir, '.git', 'shallow'))).toBe(true);
    write(clone, 'app.py', lines(20) + 'c4\n', 'w1');
    expect(clone.guard(['doctor']).stdout).not.toMatch(/history was cut/);
    expect(decision(write(clone, 'notes.txt', 'x\n', 'w2'))).toBe(null);
  });
});

describe('adv6: history cut, gc, and the cut taken back, by a spelling the net does not read', () => {
  const CUT = `cd .git && git rev-parse ${CHAIN} > shallow && git gc --prune=now -q && rm shallow`;
  const cutAndUndo = (repo: TestRepo) => claudeHook(repo, 's1', 'Bash', { command: CUT }, 'b1');

  it('doctor reads every chain whole and FAILs naming the chain whose commits are gone', () => {
    const repo = threeWrites();
    const r = cutAndUndo(repo);
    expect(decision(r)).toBe(null);
    // (then run, as the agent's shell runs what the hook let through)
    spawnSync('sh', ['-c', CUT], { cwd: repo.dir });
    // on main: doctor all ok (every ref where guard left it), guard log failed on a missing commit,
    // and the hook allowed the session's next call
    const doc = repo.guard(['doctor']);
    expect(doc.code).toBe(1);
    expect(doc.stdout).toMatch(
      /FAIL .*session chain\(s\) of guard's cannot be read whole .*s1\/chain/,
    );
  });

  it("the hook refuses the session's next call: the journal's links behind the chain's tip are gone from the object store (read from the pack indexes, no git process)", () => {
    const repo = threeWrites();
    spawnSync('sh', ['-c', CUT], { cwd: repo.dir });
    expect(decision(write(repo, 'notes.txt', 'x\n', 'w4'))).toBe('deny');
  });
});

describe('adv6: a hook call killed between its link and the journal', () => {
  it('the chain moved to a fresh root while its last word is "+" (a guard killed before its tip line): doctor FAILs and the hook refuses', () => {
    const repo = threeWrites();
    const killed = repo.guard(['hook', 'claude'], {
      input: JSON.stringify({
        session_id: 's1',
        cwd: repo.dir,
        hook_event_name: 'PreToolUse',
        tool_name: 'Write',
        tool_input: { file_path: path.join(repo.dir, 'notes.txt'), content: 'k\n' },
        tool_use_id: 'k1',
      }),
      env: { GUARD_FAULT: 'journal:before-note' },
    });
    expect(killed.code).not.toBe(0);
    // held: the link the killed call wrote is no alarm
    expect(repo.guard(['doctor']).stdout).not.toMatch(/outside guard/);
    repo.git(['update-ref', CHAIN, freshRoot(repo)]);
    // on main: any commit the chain never held passed as "a link being written" while the
    // chain's last word was "+": doctor ok, the hook allowed and built on it
    expect(repo.guard(['doctor']).stdout).toMatch(/FAIL .*moved to another commit outside guard/);
    expect(decision(write(repo, 'notes.txt', 'x\n', 'w4'))).toBe('deny');
  });
});

describe('adv6: the seal forgot its oldest foreign range', () => {
  it('a checkpoint deleted and "- REF" appended, then 33 appends each followed by a note of guard\'s (a commit, guard check): doctor still FAILs', () => {
    const repo = makeRepo({ 'app.py': lines(20) });
    expect(claudeHook(repo, 's1', 'Bash', { command: 'true' }, 'b1').code).toBe(0);
    const [cp] = repo.refs('refs/guard/checkpoints/');
    repo.git(['update-ref', '-d', cp!]);
    appendFileSync(journal(repo), `- ${cp}\n`);
    for (let i = 0; i < 33; i++) {
      appendFileSync(journal(repo), `x${i}\n`);
      repo.git(['commit', '-q', '--allow-empty', '--no-verify', '-m', `e${i}`]);
      repo.guard(['check']);
    }
    // on main: the seal kept the newest 32 foreign ranges, so the oldest, holding the "- REF",
    // read as guard's own word again: the removed checkpoint passed unreported
    expect(repo.guard(['doctor']).stdout).toMatch(
      new RegExp(`FAIL .*removed outside guard \\(${cp}\\)`),
    );
  });
});

describe('adv6: held', () => {
  it('held: the chain moved forward to a forged link (parents: the tip and its step, its message copied): doctor FAILs, the hook refuses', () => {
    const repo = threeWrites();
    const msg = repo.git(['log', '-1', '--format=%B', CHAIN]);
    const forged = repo
      .git([
        'commit-tree',
        '-p',
        CHAIN,
        '-p',
        `${CHAIN}^2`,
        '-m',
        msg,
        repo.git(['rev-parse', `${CHAIN}^{tree}`]).trim(),
      ])
      .trim();
    repo.git(['update-ref', CHAIN, forged]);
    expect(repo.guard(['doctor']).stdout).toMatch(/FAIL .*moved to another commit outside guard/);
    expect(decision(write(repo, 'notes.txt', 'x\n', 'w4'))).toBe('deny');
  });

  it('held: the chain moved back by hand in packed-refs (its loose file removed): doctor FAILs', () => {
    const repo = threeWrites();
    repo.git(['pack-refs', '--all']);
    const old = repo.git(['rev-parse', `${CHAIN}~2`]).trim();
    const packed = path.join(repo.dir, '.git', 'packed-refs');
    writeFileSync(
      packed,
      readFileSync(packed, 'utf8').replace(
        new RegExp(`^[0-9a-f]+ ${CHAIN}$`, 'm'),
        `${old} ${CHAIN}`,
      ),
    );
    expect(repo.git(['rev-parse', CHAIN]).trim()).toBe(old);
    expect(repo.guard(['doctor']).stdout).toMatch(/FAIL .*moved to another commit outside guard/);
  });

  it('held: the chain moved back, then git gc --prune=now: doctor FAILs; recover says what it cannot bring back', () => {
    const repo = threeWrites();
    repo.git(['update-ref', CHAIN, `${CHAIN}~2`]);
    repo.git(['reflog', 'expire', '--expire=now', '--all']);
    repo.git(['gc', '--prune=now', '-q']);
    expect(repo.guard(['doctor']).stdout).toMatch(/FAIL .*moved to another commit outside guard/);
    const r = repo.guard(['recover']);
    expect(r.stdout + r.stderr).toMatch(/sessions\/claude\/s1\/chain/);
  });

  it('held: session ids with odd characters each get a chain of their own under a ref-safe name, read back by guard log --session', () => {
    const repo = makeRepo({ 'app.py': lines(20) });
    const ids = [
      '../s1',
      'a/b',
      'with space',
      'ünï',
      'x'.repeat(300),
      '-lead',
      'chain',
      'policy',
      's1',
    ];
    ids.forEach((id, i) => write(repo, `f${i}.py`, `f ${i}\n`, `w${i}`, id));
    const chains = repo.refs('refs/guard/sessions/').filter((r) => r.endsWith('/chain'));
    expect(chains).toHaveLength(ids.length);
    for (const c of chains) expect(repo.gitRun(['check-ref-format', c]).code).toBe(0);
    for (const id of ids) {
      // (`--session=-lead`: `--session -lead` reads -lead as an option, as any CLI would)
      const log = repo.guardJson(['log', `--session=${id}`]).json;
      expect(log.entries.length).toBeGreaterThanOrEqual(1);
    }
    expect(repo.guard(['doctor']).stdout).not.toMatch(/outside guard/);
  });
});

describe('adv6: a ref planted where guard writes by rule', () => {
  it.each([
    [
      'a symbolic ref',
      (repo: TestRepo, ref: string) => repo.git(['symbolic-ref', ref, 'refs/heads/main']),
    ],
    [
      'a symlink to the branch file',
      (repo: TestRepo, ref: string) => {
        const at = path.join(repo.dir, '.git', ref);
        mkdirSync(path.dirname(at), { recursive: true });
        symlinkSync(path.join(repo.dir, '.git', 'refs', 'heads', 'main'), at);
      },
    ],
  ])(
    "%s at a new session's chain name: the session's first write is refused and the user's branch stays where it was",
    (_, plant) => {
      const repo = makeRepo({ 'app.py': lines(20) });
      // (another session's write first: guard's journal and seal are there, as in a real repository)
      write(repo, 'app.py', lines(20) + 'more\n', 'w0', 's1');
      const main = repo.git(['rev-parse', 'main']).trim();
      const ref = 'refs/guard/sessions/claude/s2/chain';
      plant(repo, ref);
      // on main: fast-import wrote the chain's root and first link through it: main moved onto
      // guard's link (its tree empty, the user's history off the branch), every file "added"
      const r = write(repo, 'notes.txt', 'x\n', 'w1', 's2');
      expect(decision(r)).toBe('deny');
      expect(repo.git(['rev-parse', 'main']).trim()).toBe(main);
    },
  );
});

describe("adv6: a chain made by hand before a session's first call", () => {
  it("a new session's chain name pointed at another session's chain: the session's first write is refused, not continued on the other session's links", () => {
    const repo = threeWrites();
    const s2 = 'refs/guard/sessions/claude/s2/chain';
    repo.git(['update-ref', s2, CHAIN]);
    // on main: s2's first link went on s1's three: guard log --session s2 listed s1's writes as
    // s2's, and guard rewind --session s2 would revert them (no door checks a ref the journal
    // has no word on)
    const r = write(repo, 'notes.txt', 'x\n', 'w1', 's2');
    expect(decision(r)).toBe('deny');
    expect(JSON.stringify(r.json)).toMatch(/never wrote/);
    expect(repo.git(['rev-parse', s2]).trim()).toBe(repo.git(['rev-parse', CHAIN]).trim());
  });

  it("held: a session resumed after other sessions' calls is no planted chain (eight calls of one session at once: session-chain.test.ts)", () => {
    const repo = threeWrites();
    for (let i = 0; i < 3; i++) write(repo, `o${i}.py`, `o ${i}\n`, `o${i}`, `other${i}`);
    expect(decision(write(repo, 'notes.txt', 'x\n', 'w9'))).toBe(null);
  });
});

describe('adv6: a symbolic ref planted at a branch gate tip guard moves', () => {
  it('refs/guard/verified/heads/main made a symbolic ref to another branch: the next commit on main leaves that branch where it was', () => {
    const AUTO = { CI: 'true' };
    const repo = installGuard({ 'a.txt': 'a\n' });
    repo.write('a.txt', 'a\nb\n');
    expect(repo.gitRun(['commit', '-qam', 'c1'], AUTO).code).toBe(0);
    repo.git(['checkout', '-qb', 'other']);
    repo.write('o.txt', 'o\n');
    repo.git(['add', 'o.txt']);
    expect(repo.gitRun(['commit', '-qm', 'other work'], AUTO).code).toBe(0);
    const other = repo.git(['rev-parse', 'other']).trim();
    repo.git(['checkout', '-q', 'main']);
    repo.git(['symbolic-ref', 'refs/guard/verified/heads/main', 'refs/heads/other']);
    repo.write('a.txt', 'a\nb\nc\n');
    repo.gitRun(['commit', '-qam', 'c2'], AUTO);
    // on main: the gate's update-ref of the verified tip wrote through the symbolic ref, and
    // moved \`other\` onto main's tip: its own commit off every branch
    expect(repo.git(['rev-parse', 'other']).trim()).toBe(other);
  });
});
