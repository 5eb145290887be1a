import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, lines, makeRepo, outsideDir, type TestRepo } from '../helpers.js';

/**
 * adv9 (docs/reliability/adv9.md): the newest doors attacked. The session index's `f-` lines and
 * session keys (scale3), guard's background packing (soak10k2), the write calls without an after
 * event (s2f). Each attack through `guard hook claude` / `guard hook gemini` as its own process
 * with the harness's payload shapes, or plain git and the shell as the agent would run them.
 */
afterAll(cleanupRepos);

function hook(repo: TestRepo, harness: string, payload: object) {
  const r = repo.guardSpawned(['hook', harness], {
    input: JSON.stringify(payload),
    env: { GEMINI_PROJECT_DIR: repo.dir, CLAUDE_PROJECT_DIR: repo.dir },
  });
  expect(r.code, r.stderr).toBe(0);
  return { ...r, json: r.stdout.trim() ? JSON.parse(r.stdout) : null };
}

/** A Claude Code Write, both events, the file written between them as the harness does. */
function claudeWrite(repo: TestRepo, session: string, file: string, content: string, id: string) {
  const call = (event: string) => ({
    session_id: session,
    transcript_path: '/tmp/t.jsonl',
    cwd: repo.dir,
    permission_mode: 'bypassPermissions',
    hook_event_name: event,
    tool_name: 'Write',
    tool_input: { file_path: path.join(repo.dir, file), content },
    tool_use_id: id,
    ...(event === 'PostToolUse' ? { tool_response: {} } : {}),
  });
  const pre = hook(repo, 'claude', call('PreToolUse'));
  expect(pre.json?.hookSpecificOutput?.permissionDecision ?? 'allow').not.toBe('deny');
  repo.write(file, content);
  hook(repo, 'claude', call('PostToolUse'));
}

/** Gemini's BeforeTool (no after event on writes since s2f). */
function gemini(repo: TestRepo, tool: string, input: object, session: string) {
  return hook(repo, 'gemini', {
    session_id: session,
    cwd: repo.dir,
    hook_event_name: 'BeforeTool',
    tool_name: tool,
    tool_input: input,
  });
}
const denied = (r: { json: any }) => r.json?.decision === 'deny';

describe('session keys (scale3: a session is its chain and its index folder)', () => {
  it("a session id spelled as another session's hashed key does not share its chain: log --session and rewind name one session's work", () => {
    const repo = makeRepo({ 'a.py': lines(10), 'b.py': lines(10) });
    // "odd id" is not ref-safe: its key is h + 32 hex digits of its SHA-256; the other session's
    // id is that key, spelled out (a payload the agent crafts, or a harness whose ids look so)
    const odd = 'odd id';
    const twin = 'h' + createHash('sha256').update(odd).digest('hex').slice(0, 32);
    claudeWrite(repo, odd, 'a.py', lines(12), 't1');
    claudeWrite(repo, twin, 'b.py', lines(12), 't2');
    const log = repo.guardJson(['log', '--session', odd]).json;
    const paths = log.entries.flatMap((e: any) => e.paths ?? (e.path ? [e.path] : []));
    expect(paths).toContain('a.py');
    expect(paths).not.toContain('b.py');
    // rewinding the odd session puts back a.py alone: b.py keeps the other session's work
    expect(repo.guard(['rewind', odd]).code).toBe(0);
    expect(repo.read('a.py')).toBe(lines(10));
    expect(repo.read('b.py')).toBe(lines(12));
  }, 60_000);
});

describe("provenance from the session index's f- lines (scale3)", () => {
  it('a path one session wrote once and another 101 times since: the commit still names both sessions', () => {
    const repo = makeRepo({ 'app.py': lines(20) });
    const file = path.join(repo.dir, 'app.py');
    expect(
      denied(gemini(repo, 'write_file', { file_path: file, content: lines(21) }, 'first')),
    ).toBe(false);
    repo.write('app.py', lines(21));
    // the busy session's 101 writes in this test's process (guard's in-process CLI: no node start
    // each), the attack's own calls through the real command
    for (let i = 0; i < 101; i++) {
      const content = lines(22 + i);
      const r = repo.guard(['hook', 'gemini'], {
        input: JSON.stringify({
          session_id: 'busy',
          cwd: repo.dir,
          hook_event_name: 'BeforeTool',
          tool_name: 'write_file',
          tool_input: { file_path: file, content },
        }),
        env: { GEMINI_PROJECT_DIR: repo.dir },
      });
      expect(r.stdout).not.toContain('"deny"');
      repo.write('app.py', content);
    }
    repo.git(['add', 'app.py']);
    const r = repo.guardJson(['check']);
    const app = r.json.files.find((f: any) => f.path === 'app.py');
    const sessions = new Set((app?.writtenBy ?? []).map((o: any) => o.session));
    expect(sessions.has('busy')).toBe(true);
    expect(sessions.has('first')).toBe(true);
  }, 240_000);

  it('held: the session index removed (or its f- lines edited) by the agent: guard log --session and guard rewind read the refs', () => {
    const repo = makeRepo({ 'app.py': lines(10) });
    claudeWrite(repo, 's1', 'app.py', lines(14), 't1');
    claudeWrite(repo, 's1', 'app.py', lines(18), 't2');
    // the agent's shell: the index is in .git, its to write
    rmSync(path.join(repo.dir, '.git', 'guard-sessions'), { recursive: true, force: true });
    const log = repo.guardJson(['log', '--session', 's1']).json;
    expect(log.entries.filter((e: any) => e.kind === 'checkpoint').length).toBe(2);
    expect(repo.guard(['rewind', 's1']).code).toBe(0);
    expect(repo.read('app.py')).toBe(lines(10));
  }, 60_000);

  it('held: paths with a newline, a leading dash and non-ASCII letters, each written by a session: the commit names it for each', () => {
    const repo = makeRepo({ 'keep.txt': 'k\n' });
    const names = ['a\nb.py', '-rf', 'ünï.py'];
    for (const n of names) {
      const file = path.join(repo.dir, n);
      expect(
        denied(gemini(repo, 'write_file', { file_path: file, content: 'x = 1\n' }, 'odd')),
      ).toBe(false);
      repo.write(n, 'x = 1\n');
    }
    repo.git(['add', '-A']);
    const files = repo.guardJson(['check']).json.files;
    for (const n of names) {
      const f = files.find((x: any) => x.path === n);
      expect(f?.writtenBy?.[0]?.session, n).toBe('odd');
    }
  }, 60_000);

  // was open (display only): a session whose index has no `w-` file is read from its f- lines
  // alone, so the agent removing `w-` from its own index hid its shell calls' windows from the
  // prompt and the trailers. Now (holes8) the chain's journaled tip witnesses the session's first
  // whole-tree step (`touched/w/` in its link's tree), looked up in one cat-file for the sessions
  // read from their lines: such a session is walked as before
  it('a file written by a shell call, then the w- file removed from its session index: the commit still names the session', () => {
    const repo = makeRepo({ 'keep.txt': 'k\n' });
    const sh = { command: 'node gen.js > made.txt' };
    const call = (event: string) =>
      hook(repo, 'gemini', {
        session_id: 'sh1',
        cwd: repo.dir,
        hook_event_name: event,
        tool_name: 'run_shell_command',
        tool_input: sh,
        ...(event === 'AfterTool' ? { tool_response: {} } : {}),
      });
    // a write first, so the session's chain is journaled with f- lines beside it
    const w = { file_path: path.join(repo.dir, 'w.txt'), content: 'w\n' };
    expect(denied(gemini(repo, 'write_file', w, 'sh1'))).toBe(false);
    repo.write('w.txt', 'w\n');
    call('BeforeTool');
    repo.write('made.txt', lines(30));
    call('AfterTool');
    const dir = path.join(repo.dir, '.git', 'guard-sessions', 'gemini', 'sh1');
    for (const f of readdirSync(dir)) if (f.startsWith('w-')) rmSync(path.join(dir, f));
    repo.git(['add', 'made.txt']);
    const made = repo.guardJson(['check']).json.files.find((x: any) => x.path === 'made.txt');
    expect(made?.writtenBy?.[0]?.session).toBe('sh1');
  }, 60_000);
});

describe("the session base from the session index's p- and w- entries", () => {
  const fileOf = (n: number) => lines(n);
  /** A gemini session empties a 200-line file 30 lines a write; `reset` runs before each write, in the agent's shell. */
  function stepByStep(repo: TestRepo, reset: string | null): boolean[] {
    const file = path.join(repo.dir, 'a.py');
    const allowed: boolean[] = [];
    for (const n of [170, 140, 110, 80, 50]) {
      if (reset) {
        const sh = { command: reset };
        const call = (event: string) =>
          hook(repo, 'gemini', {
            session_id: 'g1',
            cwd: repo.dir,
            hook_event_name: event,
            tool_name: 'run_shell_command',
            tool_input: sh,
            ...(event === 'AfterTool' ? { tool_response: {} } : {}),
          });
        expect(denied(call('BeforeTool'))).toBe(false);
        execFileSync('sh', ['-c', reset], { cwd: repo.dir });
        call('AfterTool');
      }
      const ok = !denied(gemini(repo, 'write_file', { file_path: file, content: fileOf(n) }, 'g1'));
      if (ok) repo.write('a.py', fileOf(n));
      allowed.push(ok);
    }
    return allowed;
  }

  it('held (control): five writes of 30 lines less each are refused once the session has lost 120 of 200', () => {
    const repo = makeRepo({ 'a.py': fileOf(200) });
    expect(stepByStep(repo, null)).toEqual([true, true, true, false, false]);
  }, 120_000);

  // was open: the index is the agent's to write, and a missing entry read as "the session has not
  // touched the path here" (session-index.ts sessionBases), so the base was the disk as it is now:
  // the file emptied 30 lines at a time, every write allowed. Now (holes8) the step that makes a
  // first-touch entry puts a gitlink to itself in its link's tree (`touched/...`), which later
  // links keep, and each entry a write reads is looked up in the chain's tip (in the cat-file the
  // call runs anyway, or one of its own when none of the call's paths has an entry): missing or
  // naming another commit, the index is dropped and the bases read from the refs
  it("the same with the session's p- and w- entries removed by its shell before each write: still refused", () => {
    const repo = makeRepo({ 'a.py': fileOf(200) });
    const allowed = stepByStep(
      repo,
      'rm -f .git/guard-sessions/gemini/g1/p-* .git/guard-sessions/gemini/g1/w-*',
    );
    expect(allowed.slice(3)).toEqual([false, false]);
  }, 180_000);

  // holes8: a session base is the earlier of `w-` and `p-` by the entries' times; the agent gives
  // the real `w-` (a shell call after three writes, 110 lines) an earlier time than the real `p-`
  // (the first write, 200 lines): the base would be the later one
  it("the session's w- entry given an earlier time than its p- (both naming their real steps): the base is still the first touch", () => {
    const repo = makeRepo({ 'a.py': fileOf(200) });
    const file = path.join(repo.dir, 'a.py');
    for (const n of [170, 140, 110]) {
      expect(
        denied(gemini(repo, 'write_file', { file_path: file, content: fileOf(n) }, 'g1')),
      ).toBe(false);
      repo.write('a.py', fileOf(n));
    }
    const sh = (event: string) =>
      hook(repo, 'gemini', {
        ...{ session_id: 'g1', cwd: repo.dir, hook_event_name: event },
        ...{ tool_name: 'run_shell_command', tool_input: { command: 'true' } },
        ...(event === 'AfterTool' ? { tool_response: {} } : {}),
      });
    sh('BeforeTool');
    sh('AfterTool');
    const dir = path.join(repo.dir, '.git', 'guard-sessions', 'gemini', 'g1');
    const w = readdirSync(dir).find((f) => f.startsWith('w-'))!;
    const entry = JSON.parse(readFileSync(path.join(dir, w), 'utf8'));
    writeFileSync(
      path.join(dir, w),
      JSON.stringify({ ...entry, time: '2000-01-01T00:00:00.000Z' }),
    );
    // 200 -> 80 from the first touch: refused (from the forged base, 110 -> 80, it would pass)
    expect(denied(gemini(repo, 'write_file', { file_path: file, content: fileOf(80) }, 'g1'))).toBe(
      true,
    );
  }, 120_000);

  // holes8, the witness attacked: an entry made unreadable (garbage) or renamed reads as missing,
  // and the chain's tip still names it
  it("held: the session's p- entries overwritten with garbage, or renamed, before each write: still refused", () => {
    for (const reset of [
      'for f in .git/guard-sessions/gemini/g1/p-*; do [ -e "$f" ] && echo x > "$f"; done; true',
      'for f in .git/guard-sessions/gemini/g1/p-*; do [ -e "$f" ] && mv "$f" "$f.old"; done; true',
    ]) {
      const repo = makeRepo({ 'a.py': fileOf(200) });
      expect(stepByStep(repo, reset).slice(3), reset).toEqual([false, false]);
    }
  }, 240_000);

  // holes8: the witness is a gitlink to the step of the session's first touch (the step that made
  // the entry, O_EXCL), so an entry rewritten to name a commit the agent made (`git commit-tree` of
  // the file as it is now, with an earlier time) does not pass for the session base
  it("the session's p- and w- entries rewritten to name a commit of the file as it is now, before each write: still refused", () => {
    const repo = makeRepo({ 'a.py': fileOf(200) });
    const forge = [
      'c=$(git commit-tree "$(git write-tree)" -m x)',
      'for f in .git/guard-sessions/gemini/g1/p-* .git/guard-sessions/gemini/g1/w-*; do [ -e "$f" ] && printf \'{"commit":"%s","checkpoint":"x","time":"2000-01-01T00:00:00.000Z","ref":"refs/guard/x"}\' "$c" > "$f"; done; true',
    ].join('; ');
    // (the index holds what a.py is on disk: `git add` first, as the agent would)
    const allowed = stepByStep(repo, `git add a.py; ${forge}`);
    expect(allowed.slice(3)).toEqual([false, false]);
  }, 180_000);
});

describe('the journal and the chains after --no-deref (adv6), once more', () => {
  it("held: an existing session's chain made a symbolic ref to another session's chain: doctor FAILs, the session's next call is refused, recover puts it back and the other chain stays", () => {
    const repo = makeRepo({ 'a.py': lines(10), 'b.py': lines(10) });
    claudeWrite(repo, 's1', 'a.py', lines(12), 't1');
    claudeWrite(repo, 's2', 'b.py', lines(12), 't2');
    const s1 = 'refs/guard/sessions/claude/s1/chain';
    const s2 = 'refs/guard/sessions/claude/s2/chain';
    const [was1, was2] = [repo.git(['rev-parse', s1]).trim(), repo.git(['rev-parse', s2]).trim()];
    repo.git(['symbolic-ref', s1, s2]);
    const doctor = repo.guard(['doctor']);
    expect(doctor.stdout + doctor.stderr).toMatch(/FAIL.*s1\/chain -> symbolic/);
    const next = hook(repo, 'claude', {
      session_id: 's1',
      transcript_path: '/tmp/t.jsonl',
      cwd: repo.dir,
      permission_mode: 'bypassPermissions',
      hook_event_name: 'PreToolUse',
      tool_name: 'Write',
      tool_input: { file_path: path.join(repo.dir, 'a.py'), content: lines(13) },
      tool_use_id: 't3',
    });
    expect(next.json?.hookSpecificOutput?.permissionDecision).toBe('deny');
    expect(repo.git(['rev-parse', s2]).trim()).toBe(was2);
    expect(repo.guard(['recover']).code).toBe(0);
    expect(repo.git(['symbolic-ref', '-q', s1], { allowFail: true }).trim()).toBe('');
    expect(repo.git(['rev-parse', s1]).trim()).toBe(was1);
    expect(repo.git(['rev-parse', s2]).trim()).toBe(was2);
  }, 60_000);
});

describe("a hook call's checkpoint (held by its session's chain) claimed by a record the agent plants", () => {
  /** s1 writes a.py (50 -> 52 lines): its checkpoint, held by the chain alone, and a forged commit with the checkpoint's message and a.py emptied to one line. */
  function setup() {
    const repo = makeRepo({ 'a.py': lines(50) });
    claudeWrite(repo, 's1', 'a.py', lines(52), 't1');
    const cp = repo
      .guardJson(['log'])
      .json.entries.find((e: any) => e.kind === 'checkpoint' && /Write/.test(e.reason))
      .id as string;
    expect(repo.refs('refs/guard/checkpoints/')).toEqual([]);
    const chain = 'refs/guard/sessions/claude/s1/chain';
    const [, step, record] = repo.git(['log', '-1', '--format=%P', chain]).trim().split(' ');
    const message = (c: string) => repo.git(['cat-file', 'commit', c]).replace(/^[^]*?\n\n/, '');
    const blob = repo.git(['hash-object', '-w', '--stdin'], { input: 'pwned\n' }).trim();
    const tree = repo.git(['mktree'], { input: `100644 blob ${blob}\ta.py\n` }).trim();
    const forged = repo
      .git(['commit-tree', tree, '-p', 'HEAD'], { input: message(`${step}^`) })
      .trim();
    return { repo, cp, chain, step: step!, record: record!, message, tree, forged };
  }

  it("a ref planted at the checkpoint's id (refs/guard/checkpoints/ID, a forged commit): guard restore ID puts back what guard kept", () => {
    const { repo, cp, forged } = setup();
    repo.git(['update-ref', `refs/guard/checkpoints/${cp}`, forged]);
    repo.write('a.py', lines(3));
    const r = repo.guard(['restore', cp, '--', 'a.py']);
    expect(r.code, r.stderr).toBe(0);
    expect(repo.read('a.py')).toBe(lines(50));
  }, 60_000);

  it("a chain planted under another session's name, its link naming the id a second later: guard restore ID puts back what guard kept", () => {
    const { repo, cp, chain, step, record, message, tree, forged } = setup();
    const t = Number(repo.git(['log', '-1', '--format=%ct', chain]).trim()) + 1;
    const env = { GIT_COMMITTER_DATE: `${t} +0000`, GIT_AUTHOR_DATE: `${t} +0000` };
    const empty = repo.git(['mktree'], { input: '' }).trim();
    const git = (args: string[], input: string) => repo.git(args, { input, env }).trim();
    const step2 = git(['commit-tree', tree, '-p', forged], message(step));
    const root = git(['commit-tree', empty], 'guard session chain\n\n{"v":1,"kind":"chain"}\n');
    const link = git(['commit-tree', empty, '-p', root, '-p', step2, '-p', record], message(chain));
    repo.git(['update-ref', 'refs/guard/sessions/claude/zz/chain', link]);
    repo.write('a.py', lines(3));
    const r = repo.guard(['restore', cp, '--', 'a.py']);
    expect(r.code, r.stderr).toBe(0);
    expect(repo.read('a.py')).toBe(lines(50));
  }, 60_000);

  /** A chain planted at `ref`, its one link a copy of s1's with `edit` applied to the messages, committed `dt` seconds after s1's link. */
  function plantChain(
    x: ReturnType<typeof setup>,
    ref: string,
    dt: number,
    edit: (m: string) => string,
  ) {
    const { repo, chain, step, record, message, tree } = x;
    const t = Number(repo.git(['log', '-1', '--format=%ct', chain]).trim()) + dt;
    const env = { GIT_COMMITTER_DATE: `${t} +0000`, GIT_AUTHOR_DATE: `${t} +0000` };
    const empty = repo.git(['mktree'], { input: '' }).trim();
    const git = (args: string[], input: string) => repo.git(args, { input, env }).trim();
    const cp2 = git(['commit-tree', tree, '-p', 'HEAD'], edit(message(`${step}^`)));
    const step2 = git(['commit-tree', tree, '-p', cp2], edit(message(step)));
    const root = git(['commit-tree', empty], 'guard session chain\n\n{"v":1,"kind":"chain"}\n');
    const link = git(
      ['commit-tree', empty, '-p', root, '-p', step2, '-p', record],
      edit(message(chain)),
    );
    repo.git(['update-ref', ref, link]);
  }

  it("the same session id under another harness's name (a planted chain whose link is a second older): guard rewind s1 puts back what guard kept", () => {
    const x = setup();
    plantChain(x, 'refs/guard/sessions/gemini/s1/chain', 0, (m) =>
      m
        .replace(/"harness":"claude"/g, '"harness":"gemini"')
        .replace(/"time":"([^"]*)T([^"]*)"/g, (_, d) => `"time":"${d}T00:00:00.000Z"`),
    );
    repo(x).write('a.py', lines(3));
    const r = repo(x).guard(['rewind', 's1']);
    expect(r.code, r.stderr).toBe(0);
    expect(repo(x).read('a.py')).toBe(lines(50));
  }, 60_000);

  it('a session planted newer than the last real one: guard rewind (the latest session) rewinds the real one', () => {
    const x = setup();
    plantChain(x, 'refs/guard/sessions/claude/zz/chain', 2, (m) =>
      m.replace(/"session":"s1"/g, '"session":"zz"').replace(/claude s1:/, 'claude zz:'),
    );
    repo(x).write('a.py', lines(3));
    const r = repo(x).guard(['rewind']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('session s1');
    expect(repo(x).read('a.py')).toBe(lines(50));
  }, 60_000);
});
const repo = (x: { repo: TestRepo }) => x.repo;

/** ~3,000 reachable loose objects on a branch of their own (fast-import unpacks below its limit): past guard's threshold. */
function looseObjects(repo: TestRepo): () => number {
  const files = Array.from(
    { length: 3000 },
    (_, i) => `M 100644 inline f${i}\ndata ${String(i).length + 1}\n${i}\n`,
  ).join('');
  const stream = `commit refs/heads/bulk\ncommitter t <t@t> 0 +0000\ndata 5\nbulk\n${files}\n`;
  repo.git(['-c', 'fastimport.unpackLimit=100000', 'fast-import', '--quiet'], { input: stream });
  return () => Number(/^count: (\d+)$/m.exec(repo.git(['count-objects', '-v']))![1]);
}

async function untilPacked(loose: () => number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (loose() > 100 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
}

describe("guard's background packing (soak10k2) under the agent's repository settings", () => {
  it("objects/info/alternates naming a copy of the store, then removed with the copy after guard's gc: the history and guard's records are still there", async () => {
    const repo = makeRepo({ 'app.py': lines(10) });
    claudeWrite(repo, 's1', 'app.py', lines(14), 't1');
    // packed, as any clone is and as guard's own packing leaves a repository: two packs
    repo.git(['gc', '-q']);
    repo.write('b.py', lines(3));
    repo.commitAll('b');
    repo.git(['repack', '-q']);
    // the agent's shell: a copy of the object store, named as an alternate (adds, deletes nothing),
    // and gc --auto told to repack everything past one pack (else it packs the loose objects alone)
    const copy = path.join(outsideDir(), 'objects');
    execFileSync('cp', ['-r', path.join(repo.dir, '.git', 'objects'), copy]);
    writeFileSync(path.join(repo.dir, '.git', 'objects', 'info', 'alternates'), `${copy}\n`);
    repo.git(['config', 'gc.autoPackLimit', '1']);
    const loose = looseObjects(repo);
    expect(loose()).toBeGreaterThan(2500);
    // the session's next call: past the threshold, guard starts its gc (repack -l on main)
    claudeWrite(repo, 's1', 'app.py', lines(16), 't2');
    await untilPacked(loose, 15_000);
    // the agent's shell tidies up: the alternate and the copy go
    rmSync(path.join(repo.dir, '.git', 'objects', 'info', 'alternates'));
    rmSync(copy, { recursive: true, force: true });
    expect(repo.gitRun(['cat-file', '-e', 'HEAD']).code).toBe(0);
    const log = repo.guardJson(['log', '--session', 's1']).json;
    expect(log.entries.filter((e: any) => e.kind === 'checkpoint').length).toBe(2);
  }, 120_000);

  it("held: a promisor pack naming guard's chain tip, with extensions.partialClone set: guard's gc keeps the chain", async () => {
    const repo = makeRepo({ 'app.py': lines(10) });
    claudeWrite(repo, 's1', 'app.py', lines(14), 't1');
    repo.git(['gc', '-q']);
    const chain = repo.refs('refs/guard/sessions/').find((r) => r.endsWith('/chain'))!;
    const tip = repo.git(['rev-parse', chain]).trim();
    // the agent's shell: a tag of the chain's tip packed alone and marked as a promisor's, the
    // repository made a partial clone (pack-objects --exclude-promisor-objects stops at such objects)
    const tag = repo
      .git(['mktag'], { input: `object ${tip}\ntype commit\ntag t\ntagger a <a@b> 0 +0000\n\nx\n` })
      .trim();
    const pack = repo
      .git(['pack-objects', '-q', '.git/objects/pack/pack'], { input: `${tag}\n` })
      .trim();
    writeFileSync(path.join(repo.dir, '.git', 'objects', 'pack', `pack-${pack}.promisor`), '');
    rmSync(path.join(repo.dir, '.git', 'objects', tag.slice(0, 2), tag.slice(2)), { force: true });
    for (const [k, v] of [
      ['core.repositoryformatversion', '1'],
      ['extensions.partialClone', 'origin'],
      ['remote.origin.url', path.join(outsideDir(), 'none')],
      ['remote.origin.promisor', 'true'],
      // a full repack (-A) past one pack: the promisor pack is the second
      ['gc.autoPackLimit', '1'],
    ])
      repo.git(['config', k!, v!]);
    const loose = looseObjects(repo);
    claudeWrite(repo, 's1', 'app.py', lines(16), 't2');
    await untilPacked(loose, 60_000);
    expect(loose()).toBeLessThan(100);
    const noFetch = { GIT_NO_LAZY_FETCH: '1' };
    expect(repo.gitRun(['cat-file', '-e', `${tip}^{tree}`], noFetch).code).toBe(0);
    expect(repo.gitRun(['cat-file', '-e', `${tip}^2^`], noFetch).code).toBe(0);
    const log = repo.guardJson(['log', '--session', 's1']).json;
    expect(log.entries.filter((e: any) => e.kind === 'checkpoint').length).toBe(2);
  }, 120_000);
});

describe('s2f: a write judged from its payload, with no after event', () => {
  it('held: gemini replace whose old_string is there twice, without allow_multiple or with expected_replacements 2 (the harness replaces both): refused', () => {
    const repo = makeRepo({ 'app.py': 'x = 1\n' + lines(40) + 'x = 1\n' });
    const file = path.join(repo.dir, 'app.py');
    const edit = { file_path: file, old_string: 'x = 1\n', new_string: '' };
    expect(denied(gemini(repo, 'replace', edit, 'g1'))).toBe(true);
    expect(denied(gemini(repo, 'replace', { ...edit, expected_replacements: 2 }, 'g1'))).toBe(true);
  }, 60_000);
});
