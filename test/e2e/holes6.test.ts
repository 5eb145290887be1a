import { spawnSync } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { asClaudeBash, refusedRepo } from './agent-shell.js';
import {
  CLI,
  claudeHook,
  claudeRepo,
  cleanEnv,
  cleanupRepos,
  lines,
  outsideDir,
  type TestRepo,
} from '../helpers.js';

/**
 * holes6 (docs/reliability/holes6.md): issue 20's holes left open after holes5 and adv5, each
 * performed through the real doors: `guard hook claude` with Claude Code's payload shapes, the
 * built CLI, real git, and shell commands run as Claude Code's Bash runs them.
 */

afterAll(() => cleanupRepos());

const G = `${process.execPath} ${CLI}`;

describe("holes6: guard's own evidence reset by a command the hook cannot read", () => {
  it('guard recover eval-ed with CLAUDECODE unset, after a ref deleted and the journal written again from for-each-ref: refused, doctor still FAILs', () => {
    const { repo, before } = refusedRepo();
    const [rejected] = before;
    const command = [
      'unset CLAUDECODE',
      'r=$(git for-each-ref --format="%(refname)" refs/guard/rejected/)',
      'u="git update-ref"; $u -d "$r"',
      'git for-each-ref --format="%(objectname) %(refname)" refs/guard/ > .git/guard/journal',
      `c="${G} rec"; eval "\${c}over"`,
    ].join('; ');
    const r = asClaudeBash(repo, command);
    // on main: recover starts the journal again from the refs there are and exits 0; doctor is content
    expect(r.status, r.stdout + r.stderr).not.toBe(0);
    expect(r.stderr).toMatch(/a person runs it, not an agent's command tool/);
    const d = repo.guard(['doctor']);
    expect(d.code).toBe(1);
    expect(d.stdout).toMatch(/rewritten outside guard/);
    // a person's recover (no agent above it) runs: the person has seen doctor's word first
    expect(repo.guard(['recover']).code).toBe(0);
    expect(rejected).toBeDefined();
  });
});

/** The four ways of building a command at run time the hook's reading of the text does not follow. */
const HIDDEN: Record<string, (c: string) => string> = {
  'eval "$x"': (c) => `x='${c}'; eval "$x"`,
  'sh -c "$V"': (c) => `V='${c}'; sh -c "$V"`,
  'a script it just wrote': (c) => `printf '%s\\n' '${c}' > t.sh && bash t.sh; rm -f t.sh`,
  '$(printf ...)': (c) => `$(printf '%s' 'sh') -c "$(printf '%s' '${c}')"`,
};

/** A repository with uncommitted work in git's tree (src/a.py 50 -> 200 lines, src/new.py untracked) and an ignored .env. */
function workRepo(): TestRepo {
  const repo = claudeRepo({ 'src/a.py': lines(50), 'src/b.py': lines(40), '.gitignore': '.env\n' });
  writeFileSync(path.join(repo.dir, 'src/a.py'), lines(200));
  writeFileSync(path.join(repo.dir, 'src/new.py'), lines(30));
  writeFileSync(path.join(repo.dir, '.env'), 'SECRET=1\n');
  return repo;
}

/** One Bash call through the hook and the shell, as Claude Code makes it: before, the command, after. */
function bashCall(repo: TestRepo, command: string, id: string) {
  const pre = claudeHook(repo, 's', 'Bash', { command }, id);
  const run =
    pre.json?.hookSpecificOutput?.permissionDecision === 'deny'
      ? null
      : asClaudeBash(repo, command);
  const post = claudeHook(repo, 's', 'Bash', { command }, id, true);
  return { pre, run, said: String(post.json?.systemMessage ?? '') };
}

const restoreFrom = (repo: TestRepo, said: string, file: string) => {
  const cp = /guard restore (\S+) --/.exec(said)?.[1];
  expect(cp, said).toBeDefined();
  expect(repo.guard(['restore', cp!, '--', file]).code).toBe(0);
  return readFileSync(path.join(repo.dir, file), 'utf8');
};

describe('holes6: destructive commands built at run time (the checkpoint covers whatever the command does)', () => {
  it.each(Object.keys(HIDDEN))(
    'rm -rf of tracked work behind %s: kept and reported by the after-event',
    (how) => {
      const repo = workRepo();
      const { said } = bashCall(repo, HIDDEN[how]!('rm -rf src'), 'b1');
      expect(said).toMatch(/src\/a\.py was deleted \(200 lines\)/);
      expect(said).toMatch(/src\/new\.py was deleted/);
      expect(restoreFrom(repo, said, 'src/a.py')).toBe(lines(200));
    },
  );

  it.each(Object.keys(HIDDEN))(
    'git reset --hard behind %s: the uncommitted edit kept and reported',
    (how) => {
      const repo = workRepo();
      const { said } = bashCall(repo, HIDDEN[how]!('git reset --hard -q'), 'b1');
      expect(said).toMatch(/src\/a\.py lost 150 of 200 lines/);
      expect(restoreFrom(repo, said, 'src/a.py')).toBe(lines(200));
    },
  );

  it.each(Object.keys(HIDDEN))(
    'git clean -fdX of ignored files behind %s: .env kept and reported',
    (how) => {
      const repo = workRepo();
      const { said } = bashCall(repo, HIDDEN[how]!('git clean -fdXq'), 'b1');
      expect(said).toMatch(/\.env \(ignored, removed\)/);
      expect(restoreFrom(repo, said, '.env')).toBe('SECRET=1\n');
    },
  );

  it.each(Object.keys(HIDDEN))(
    "git update-ref -d of guard's refs behind %s (refs/gu''ard spelled apart): reported after, the next call refused, a person's recover puts them back",
    (how) => {
      const repo = workRepo();
      bashCall(repo, 'ls', 'b0');
      const before = repo.refs('refs/guard/');
      const del =
        'r=refs/gu; git for-each-ref --format="delete %(refname)" ${r}ard/ | git update-ref --stdin';
      const { pre, said } = bashCall(repo, HIDDEN[how]!(del), 'b1');
      expect(pre.json?.hookSpecificOutput?.permissionDecision).not.toBe('deny');
      expect(said).toMatch(/of guard's refs were removed outside guard/);
      const next = claudeHook(repo, 's', 'Bash', { command: 'ls' }, 'b2');
      expect(next.json?.hookSpecificOutput?.permissionDecision).toBe('deny');
      expect(repo.guard(['recover']).code).toBe(0);
      for (const ref of before.filter((r) => r.startsWith('refs/guard/checkpoints/')))
        expect(repo.refs('refs/guard/checkpoints/')).toContain(ref);
    },
  );

  it("rm -rf, guard's refs deleted, reflog expired and git gc --prune=now, behind eval: the after-event says the checkpoint itself is gone (not kept: one uid)", () => {
    const repo = workRepo();
    bashCall(repo, 'ls', 'b0');
    const c =
      'rm -rf src; r=refs/gu; git for-each-ref --format="delete %(refname)" ${r}ard/ | git update-ref --stdin; git reflog expire --expire=now --all; git gc -q --prune=now';
    const { said, run } = bashCall(repo, HIDDEN['eval "$x"']!(c), 'b1');
    expect(run?.status, run?.stderr).toBe(0);
    // on main: "guard could not check this tool call and blocked it (fail closed): git diff failed: bad object ..."
    expect(said).toMatch(
      /removed guard's checkpoint from before it \(\S+: its commit is no longer in git/,
    );
    expect(said).not.toMatch(/could not check this tool call/);
  });
});

describe('holes6: the pinned file (lane bases) sealed like the journal', () => {
  it('a lane base removed by hand with "- REF" appended to journal-pinned (and the journal): the next hook call is refused, doctor FAILs; a person\'s recover quiets it', () => {
    const repo = claudeRepo({ 'app.py': lines(10), 'notes.txt': 'n\n' });
    expect(repo.guard(['start', 'l1']).code).toBe(0);
    const [lane] = repo.refs('refs/guard/lanes/');
    expect(lane).toBeDefined();
    // the lane's start far from the journal's newest 64 tips: only the pinned file speaks for it
    for (let i = 0; i < 40; i++)
      expect(repo.guard(['write', 'notes.txt'], { input: `n${i}\n` }).code).toBe(0);
    repo.git(['update-ref', '-d', lane!]);
    for (const f of ['journal-pinned', 'journal'])
      appendFileSync(path.join(repo.dir, '.git', 'guard', f), `- ${lane}\n`);
    const h = claudeHook(repo, 's', 'Bash', { command: 'ls' }, 'b1');
    // on main: no opinion (the pinned file's "- REF" was read as guard's own removal)
    expect(h.json?.hookSpecificOutput?.permissionDecision, h.stdout).toBe('deny');
    expect(h.stdout).toContain(lane);
    const d = repo.guard(['doctor']);
    expect(d.code).toBe(1);
    expect(d.stdout).toMatch(/removed outside guard/);
    const rec = repo.guard(['recover']);
    expect(rec.code, rec.stdout + rec.stderr).toBe(0);
    expect(repo.refs('refs/guard/lanes/')).toEqual([lane]);
    expect(repo.guard(['doctor']).stdout).not.toMatch(/outside guard/);
  });

  it('journal-pinned written again without the lane (sed), the lane ref removed: refused, doctor names the file', () => {
    const repo = claudeRepo({ 'app.py': lines(10), 'notes.txt': 'n\n' });
    expect(repo.guard(['start', 'l1']).code).toBe(0);
    const [lane] = repo.refs('refs/guard/lanes/');
    for (let i = 0; i < 40; i++)
      expect(repo.guard(['write', 'notes.txt'], { input: `n${i}\n` }).code).toBe(0);
    repo.git(['update-ref', '-d', lane!]);
    const f = path.join(repo.dir, '.git', 'guard', 'journal-pinned');
    writeFileSync(
      f,
      readFileSync(f, 'utf8')
        .split('\n')
        .filter((l) => !l.endsWith(` ${lane}`))
        .join('\n'),
    );
    const h = claudeHook(repo, 's', 'Bash', { command: 'ls' }, 'b1');
    expect(h.json?.hookSpecificOutput?.permissionDecision, h.stdout).toBe('deny');
    const d = repo.guard(['doctor']);
    expect(d.code).toBe(1);
    expect(d.stdout).toMatch(/journal-pinned: lane bases\) was changed outside guard/);
    // a person's recover starts the list again from the lane refs there are, and seals it
    expect(repo.guard(['recover']).code).toBe(0);
    expect(repo.guard(['doctor']).stdout).not.toMatch(/journal-pinned/);
  });
});

describe('holes6: the plain hook process fails closed before its own handler too', () => {
  it("its folder removed before it starts (process.cwd() fails): a deny in Claude's form, not exit 3", () => {
    const repo = claudeRepo({ 'app.py': lines(50) });
    const gone = path.join(outsideDir(), 'gone');
    const payload = JSON.stringify({
      session_id: 's',
      transcript_path: '/tmp/t.jsonl',
      cwd: gone,
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: `rm -rf ${repo.dir}/app.py` },
      tool_use_id: 'b1',
    });
    const r = spawnSync(
      'sh',
      ['-c', `mkdir "$D" && cd "$D" && rmdir "$D" && exec "$NODE" "$CLI" hook claude`],
      {
        input: payload,
        encoding: 'utf8',
        env: cleanEnv({ D: gone, NODE: process.execPath, CLI }),
      },
    );
    // on main: exit 3, "guard: internal error: ENOENT ... uv_cwd" and no answer: Claude Code reads
    // exit 3 as a non-blocking error and runs the tool under a hook entry without `|| exit 2`
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
  });
});

const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

describe('holes6: the commit prompt in a terminal the agent made, its variables unset', () => {
  it.skipIf(!hasScript)(
    "`printf 'y\\n' | env -u CLAUDECODE script -qc 'git commit'` from the agent's Bash: no prompt, the rewrite is not committed",
    () => {
      const repo = claudeRepo({ 'app.py': lines(200) });
      const before = repo.git(['rev-parse', 'HEAD']).trim();
      writeFileSync(path.join(repo.dir, 'app.py'), 'x\n');
      repo.git(['add', 'app.py']);
      const r = asClaudeBash(
        repo,
        `printf 'y\\ny\\ny\\n' | env -u CLAUDECODE script -qec "git commit -qm drop" /dev/null`,
      );
      // on main: the prompt opened in script's terminal, read the piped "y" and the commit landed
      // ("guard: 0 allowed, 1 approved")
      expect(r.stdout + r.stderr).not.toMatch(/approved/);
      expect(repo.git(['rev-parse', 'HEAD']).trim()).toBe(before);
    },
  );
});
