import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLI,
  claudeDecision as decision,
  cleanEnv,
  checkpointRev,
  checkpointsOf,
  cleanupRepos,
  decisionsOf,
  stepsOf,
  lines,
  makeRepo,
  outsideDir,
  type TestRepo,
} from '../helpers.js';

afterAll(cleanupRepos);

/** The session steps (refs, or links of the session chains), without the policy anchors beside them (git/session-policy.ts). */
const steps = stepsOf;

type Env = Record<string, string | undefined>;

/** A Claude Code PreToolUse/PostToolUse payload, shaped as claude 2.1.330 sends it. */
function claude(
  repo: TestRepo,
  tool: string,
  input: object,
  o: { post?: boolean; session?: string; id?: string; mode?: string } = {},
): string {
  return JSON.stringify({
    session_id: o.session ?? 'sess-1',
    transcript_path: '/tmp/t.jsonl',
    cwd: repo.dir,
    permission_mode: o.mode ?? 'bypassPermissions',
    hook_event_name: o.post ? 'PostToolUse' : 'PreToolUse',
    tool_name: tool,
    tool_input: input,
    tool_use_id: o.id ?? 'toolu_1',
    ...(o.post ? { tool_response: {} } : {}),
  });
}

function hook(repo: TestRepo, harness: string, payload: string, env: Env = {}) {
  const r = repo.guard(['hook', harness], { input: payload, env });
  return { ...r, json: r.stdout.trim() ? JSON.parse(r.stdout) : null };
}

describe('guard hook claude: writes', () => {
  it('denies a truncation: file untouched, the proposal kept as a rejected ref, a reason the model can act on', () => {
    const big = lines(270);
    const repo = makeRepo({ 'state.py': big });
    const proposal = 'line 1\n# ... rest of the code unchanged ...\n';
    const r = hook(
      repo,
      'claude',
      claude(repo, 'Write', { file_path: path.join(repo.dir, 'state.py'), content: proposal }),
    );
    expect(r.code).toBe(0);
    expect(decision(r)).toBe('deny');
    const reason: string = r.json.hookSpecificOutput.permissionDecisionReason;
    const ref = /refs\/guard\/rejected\/\S+?(?=\.)/.exec(reason)![0];
    expect(reason).toContain('state.py would lose 269 of 270 lines');
    expect(reason).toContain('rest of the code unchanged');
    expect(reason).toMatch(/Write the whole file/);
    expect(repo.read('state.py')).toBe(big);
    expect(repo.git(['show', `${ref}:state.py`])).toBe(proposal);
    expect(repo.git(['show', `${ref}^:state.py`])).toBe(big);
    const rec = repo.git(['log', '-1', '--format=%B', decisionsOf(repo)[0]!]);
    expect(rec).toContain('"decision":"blocked"');
    expect(rec).toContain('"harness":"claude","session":"sess-1","toolCall":"toolu_1"');
  });

  it('asks when a person can answer (default mode, not auto); the checkpoint comes first', () => {
    const repo = makeRepo({ 'state.py': lines(200) });
    const r = hook(
      repo,
      'claude',
      claude(
        repo,
        'Write',
        { file_path: path.join(repo.dir, 'state.py'), content: lines(10) },
        { mode: 'default' },
      ),
      { CI: undefined, CLAUDE_CODE_ENTRYPOINT: 'cli' },
    );
    expect(decision(r)).toBe('ask');
    const cp = /checkpoint (\S+) /.exec(r.json.hookSpecificOutput.permissionDecisionReason)![1]!;
    expect(repo.git(['show', `${checkpointRev(repo, cp)}:state.py`])).toBe(lines(200));
    // the harness then runs the write; its post event records the person's approval
    writeFileSync(path.join(repo.dir, 'state.py'), lines(10));
    const post = hook(
      repo,
      'claude',
      claude(
        repo,
        'Write',
        { file_path: path.join(repo.dir, 'state.py'), content: lines(10) },
        { mode: 'default', post: true },
      ),
      { CI: undefined, CLAUDE_CODE_ENTRYPOINT: 'cli' },
    );
    expect(post.stdout).toBe('');
    const log = repo.guardJson(['log', '--session', 'sess-1']).json;
    expect(log.entries.find((e: any) => e.kind === 'decision')).toMatchObject({
      path: 'state.py',
      decision: 'approved',
      decider: 'person',
      session: 'sess-1',
    });
  });

  it('the same call in auto mode (CI) or print mode is denied', () => {
    const repo = makeRepo({ 'state.py': lines(200) });
    const p = claude(
      repo,
      'Write',
      { file_path: path.join(repo.dir, 'state.py'), content: lines(10) },
      { mode: 'default' },
    );
    expect(decision(hook(repo, 'claude', p, { CI: 'true' }))).toBe('deny');
    expect(
      decision(hook(repo, 'claude', p, { CI: undefined, CLAUDE_CODE_ENTRYPOINT: 'sdk-cli' })),
    ).toBe('deny');
  });

  it('allows a small edit with no opinion, after checkpointing the path', () => {
    const repo = makeRepo({ 'seed.txt': 'alpha\nbeta\ngamma\n' });
    const r = hook(
      repo,
      'claude',
      claude(repo, 'Edit', {
        file_path: path.join(repo.dir, 'seed.txt'),
        old_string: 'beta',
        new_string: 'BETA',
      }),
    );
    expect(r).toMatchObject({ code: 0, stdout: '' });
    const [cp] = checkpointsOf(repo);
    expect(repo.git(['show', `${cp}:seed.txt`])).toBe('alpha\nbeta\ngamma\n');
    expect(repo.git(['log', '-1', '--format=%B', cp!])).toContain(
      '"session":"sess-1","toolCall":"toolu_1"',
    );
    expect(repo.git(['log', '-1', '--format=%B', decisionsOf(repo)[0]!])).toContain(
      '"decision":"allowed"',
    );
  });

  it('an edit guard cannot reproduce (old_string not found, even loosely) is refused, the file checkpointed', () => {
    const repo = makeRepo({ 'seed.txt': 'alpha\n' });
    const r = hook(
      repo,
      'claude',
      claude(repo, 'Edit', {
        file_path: path.join(repo.dir, 'seed.txt'),
        old_string: 'zzz',
        new_string: 'y',
      }),
    );
    expect(decision(r)).toBe('deny');
    expect(r.json.hookSpecificOutput.permissionDecisionReason).toMatch(
      /Read the file again and send old_string exactly/,
    );
    const [cp] = checkpointsOf(repo);
    expect(repo.git(['show', `${cp}:seed.txt`])).toBe('alpha\n');
    // a refused call wrote nothing: it is no session step (rewind would otherwise put the path back)
    expect(steps(repo)).toEqual([]);
  });

  it('session base: ten small edits cannot add up to a rewrite', () => {
    const repo = makeRepo({ 'm.py': lines(200) });
    const file = path.join(repo.dir, 'm.py');
    const answers: string[] = [];
    for (let i = 1; i <= 10; i++) {
      const now = readFileSync(file, 'utf8').split('\n');
      const next = now.slice(20).join('\n'); // drop 20 lines: 10% of the base each time
      const r = hook(
        repo,
        'claude',
        claude(repo, 'Write', { file_path: file, content: next }, { id: `t${i}` }),
      );
      answers.push(decision(r) ?? 'none');
      if (decision(r) === null) writeFileSync(file, next); // the harness writes what guard let through
    }
    // 4 x 20 lines = 40%; the 5th would make 50% of the 200 lines the session started from
    expect(answers.slice(0, 5)).toEqual(['none', 'none', 'none', 'none', 'deny']);
    expect(answers.slice(5).every((a) => a === 'deny')).toBe(true);
    expect(readFileSync(file, 'utf8').split('\n').length - 1).toBe(120);
    // another session starts from what is there now
    expect(
      decision(
        hook(
          repo,
          'claude',
          claude(
            repo,
            'Write',
            {
              file_path: file,
              content: readFileSync(file, 'utf8').split('\n').slice(20).join('\n'),
            },
            { session: 'sess-2' },
          ),
        ),
      ),
    ).toBeNull();
  });

  it('writes into .git/ or out through a symlinked folder or ".." are denied; outside the repository: no opinion', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const out = outsideDir();
    symlinkSync(out, path.join(repo.dir, 'linked'));
    for (const p of [
      path.join(repo.dir, '.git', 'config'),
      path.join(repo.dir, 'linked', 'x.txt'),
      'sub/../../escape.txt',
    ]) {
      const r = hook(repo, 'claude', claude(repo, 'Write', { file_path: p, content: 'x' }));
      expect(decision(r), p).toBe('deny');
      expect(r.json.hookSpecificOutput.permissionDecisionReason).toMatch(
        /guard refused this write/,
      );
    }
    expect(
      hook(
        repo,
        'claude',
        claude(repo, 'Write', { file_path: path.join(out, 'y.txt'), content: 'x' }),
      ).stdout,
    ).toBe('');
  });

  it('an agent may not rewrite the hook config that runs guard', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const r = hook(
      repo,
      'claude',
      claude(repo, 'Write', {
        file_path: path.join(repo.dir, '.claude', 'settings.json'),
        content: '{"disableAllHooks":true}',
      }),
    );
    expect(decision(r)).toBe('deny');
    expect(r.json.hookSpecificOutput.permissionDecisionReason).toContain('own gate');
  });
});

describe('guard hook: shell calls', () => {
  it('reports what `git checkout -- .` destroyed, with the one command that brings it back', () => {
    const repo = makeRepo({ 'big.py': lines(270), 'small.txt': 'x\n' });
    const work = lines(270) + lines(150, 'new');
    repo.write('big.py', work);
    repo.write('notes.md', 'untracked work\n');
    const pre = hook(
      repo,
      'claude',
      claude(repo, 'Bash', { command: 'git checkout -- . && git clean -fdq' }, { id: 'b1' }),
    );
    expect(pre).toMatchObject({ code: 0, stdout: '' });
    repo.git(['checkout', '--', '.']);
    repo.git(['clean', '-fdq']);
    const post = hook(
      repo,
      'claude',
      claude(
        repo,
        'Bash',
        { command: 'git checkout -- . && git clean -fdq' },
        { id: 'b1', post: true },
      ),
    );
    const msg: string = post.json.hookSpecificOutput.additionalContext;
    expect(post.json.systemMessage).toBe(msg);
    expect(post.stderr).toContain(msg);
    expect(msg).toContain('big.py lost 150 of 420 lines');
    expect(msg).toContain('notes.md was deleted');
    const restore = /run: (guard restore \S+ -- big\.py notes\.md)/.exec(msg)![1]!;
    // nothing was undone behind the agent's back
    expect(repo.read('big.py')).toBe(lines(270));
    const r = repo.guard(restore.split(' ').slice(1));
    expect(r.code).toBe(0);
    expect(repo.read('big.py')).toBe(work);
    expect(repo.read('notes.md')).toBe('untracked work\n');
  });

  it('a harmless command is told nothing; its checkpoint is reused when nothing changed', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    hook(repo, 'claude', claude(repo, 'Bash', { command: 'ls' }, { id: 's1' }));
    const post = hook(
      repo,
      'claude',
      claude(repo, 'Bash', { command: 'ls' }, { id: 's1', post: true }),
    );
    expect(post.stdout).toBe('');
    expect(checkpointsOf(repo)).toHaveLength(1);
  });
});

describe('guard rewind', () => {
  it('without a session rewinds the latest one here, read from the newest session folders (packed or loose)', () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const write = (file: string, session: string, id: string) => {
      const p = path.join(repo.dir, file);
      hook(
        repo,
        'claude',
        claude(repo, 'Write', { file_path: p, content: `${session}\n` }, { session, id }),
      );
      writeFileSync(p, `${session}\n`);
    };
    write('a.txt', 'older', 'o1');
    // the older session's steps packed, the newer one's loose: one second apart at least
    repo.git(['-c', 'core.hooksPath=/dev/null', 'pack-refs', '--all', '--prune']);
    spawnSync('sleep', ['1.1']);
    write('b.txt', 'newer', 'n1');
    const r = repo.guardJson(['rewind']);
    expect(r.code).toBe(0);
    expect(r.json.session).toBe('newer');
    expect(r.json.changes).toEqual([{ path: 'b.txt', action: 'rewritten' }]);
    expect(repo.read('a.txt')).toBe('older\n');
  });

  it('puts back every path the session wrote (file writes and shell changes), byte for byte, and nothing else', () => {
    const orig = 'one\r\ntwo\n\u00e9\n';
    const repo = makeRepo({ 'a.txt': orig, 'b.txt': lines(50), 'c.txt': 'person\n' });
    const a = path.join(repo.dir, 'a.txt');
    expect(
      hook(
        repo,
        'claude',
        claude(
          repo,
          'Edit',
          { file_path: a, old_string: 'two', new_string: 'TWO' },
          { session: 'S', id: 'e1' },
        ),
      ).stdout,
    ).toBe('');
    writeFileSync(a, orig.replace('two', 'TWO'));
    hook(
      repo,
      'claude',
      claude(repo, 'Bash', { command: 'rm b.txt && echo new > d.txt' }, { session: 'S', id: 'b1' }),
    );
    spawnSync('sh', ['-c', 'rm b.txt && echo new > d.txt'], { cwd: repo.dir });
    hook(
      repo,
      'claude',
      claude(
        repo,
        'Bash',
        { command: 'rm b.txt && echo new > d.txt' },
        { session: 'S', id: 'b1', post: true },
      ),
    );
    repo.write('c.txt', 'the person edited this meanwhile\n');
    const r = repo.guardJson(['rewind', 'S']);
    expect(r.code).toBe(0);
    expect(r.json.changes).toEqual([
      { path: 'a.txt', action: 'rewritten' },
      { path: 'b.txt', action: 'recreated' },
      { path: 'd.txt', action: 'removed' },
    ]);
    expect(readFileSync(a, 'utf8')).toBe(orig);
    expect(repo.read('b.txt')).toBe(lines(50));
    expect(existsSync(path.join(repo.dir, 'd.txt'))).toBe(false);
    expect(repo.read('c.txt')).toBe('the person edited this meanwhile\n');
    // and the rewind can be undone
    expect(repo.guard(['restore', r.json.undo]).code).toBe(0);
    expect(repo.read('a.txt')).toBe(orig.replace('two', 'TWO'));
  });

  it('--to CHECKPOINT puts back only what the session wrote from there on', () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    for (const f of ['a', 'b']) {
      hook(
        repo,
        'claude',
        claude(
          repo,
          'Write',
          { file_path: path.join(repo.dir, `${f}.txt`), content: `${f}2\n` },
          { session: 'T', id: f },
        ),
      );
      repo.write(`${f}.txt`, `${f}2\n`);
    }
    const log = repo.guardJson(['log', '--session', 'T']).json;
    const second = log.entries.find(
      (e: any) => e.kind === 'checkpoint' && e.paths?.[0] === 'b.txt',
    ).id;
    const r = repo.guardJson(['rewind', 'T', '--to', second]);
    expect(r.json.changes).toEqual([{ path: 'b.txt', action: 'rewritten' }]);
    expect(repo.read('a.txt')).toBe('a2\n');
    expect(repo.read('b.txt')).toBe('b\n');
  });

  it('an unknown session is a usage error', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const r = repo.guard(['rewind', 'nope']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no session "nope"/);
  });
});

/** Payloads for a write into .git/ and a malformed one, per harness, and how each blocks. */
const GIT_WRITE: Record<string, (dir: string) => string> = {
  claude: (d) =>
    JSON.stringify({
      session_id: 's',
      cwd: d,
      permission_mode: 'default',
      hook_event_name: 'PreToolUse',
      tool_name: 'Write',
      tool_input: { file_path: `${d}/.git/hooks/pre-commit`, content: 'exit 0' },
      tool_use_id: 't',
    }),
  gemini: (d) =>
    JSON.stringify({
      session_id: 's',
      cwd: d,
      hook_event_name: 'BeforeTool',
      tool_name: 'write_file',
      tool_input: { file_path: `${d}/.git/hooks/pre-commit`, content: 'exit 0' },
    }),
  codex: (d) =>
    JSON.stringify({
      session_id: 's',
      cwd: d,
      hook_event_name: 'PreToolUse',
      tool_name: 'apply_patch',
      tool_input: {
        command: '*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+exit 0\n*** End Patch\n',
      },
      tool_use_id: 't',
    }),
  cursor: (d) =>
    JSON.stringify({
      hook_event_name: 'preToolUse',
      conversation_id: 's',
      workspace_roots: [d],
      tool_name: 'Write',
      tool_input: { file_path: `${d}/.git/hooks/pre-commit`, contents: 'exit 0' },
    }),
  // Cline CLI's shell-hook payload (guard installs its plugin instead; src/plugin, test/e2e/plugin-file.test.ts)
  cline: (d) =>
    JSON.stringify({
      hookName: 'tool_call',
      taskId: 's',
      workspaceRoots: [d],
      tool_call: {
        id: 't',
        name: 'editor',
        input: { path: '.git/hooks/pre-commit', new_text: 'exit 0' },
      },
    }),
  copilot: (d) =>
    JSON.stringify({
      timestamp: 1,
      cwd: d,
      toolName: 'create',
      toolArgs: JSON.stringify({ path: `${d}/.git/hooks/pre-commit`, file_text: 'exit 0' }),
    }),
};

function blocked(harness: string, stdout: string): string | null {
  const j = JSON.parse(stdout);
  switch (harness) {
    case 'claude':
    case 'codex':
      return j.hookSpecificOutput?.permissionDecision === 'deny'
        ? j.hookSpecificOutput.permissionDecisionReason
        : null;
    case 'gemini':
      return j.decision === 'deny' ? j.reason : null;
    case 'cursor':
      return j.permission === 'deny' ? j.agent_message : null;
    case 'cline':
      return j.cancel === true ? j.errorMessage : null;
    case 'copilot':
      return j.permissionDecision === 'deny' ? j.permissionDecisionReason : null;
  }
  return null;
}

describe('fail closed, per harness', () => {
  for (const h of Object.keys(GIT_WRITE)) {
    it(`${h}: a write into .git/, a malformed payload and a broken policy all block`, () => {
      const repo = makeRepo({ 'a.txt': 'a\n' });
      const git = hook(repo, h, GIT_WRITE[h]!(repo.dir));
      expect(git.code).toBe(0);
      expect(blocked(h, git.stdout)).toMatch(/inside \.git/);
      const bad = hook(repo, h, '{"not": "a payload"');
      expect(bad.code).toBe(0);
      expect(blocked(h, bad.stdout)).toMatch(/fail closed.*not JSON/);
      // a committed config guard cannot read: every write blocks, saying why
      repo.write('guard.config.json', '{"lineThreshold": "lots"}');
      repo.commitAll('bad config');
      const p = GIT_WRITE[h]!(repo.dir).replace(/\.git\/hooks\/pre-commit/g, 'ok.txt');
      expect(blocked(h, hook(repo, h, p).stdout)).toMatch(/fail closed.*lineThreshold/);
    });
  }

  it('a guard killed mid-call blocks through the command guard init --agent installs, for each harness', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.git(['config', '--unset', 'core.hooksPath']);
    expect(repo.guard(['init', '--agent', ...Object.keys(GIT_WRITE)]).code).toBe(0);
    const env = cleanEnv({
      CI: 'true',
      GUARD_FAULT: 'hook:before-record',
      CLAUDE_PROJECT_DIR: repo.dir,
      GEMINI_PROJECT_DIR: repo.dir,
    });
    const payload = (h: string) =>
      GIT_WRITE[h]!(repo.dir).replace(/\.git\/hooks\/pre-commit/g, 'new.txt');
    const sh = (command: string, h: string) =>
      spawnSync('sh', ['-c', command], { cwd: repo.dir, env, input: payload(h) });
    // Claude, Gemini, Codex: exit 2 with the reason on stderr is their block
    const commands = {
      claude: JSON.parse(repo.read('.claude/settings.json')).hooks.PreToolUse[0].hooks[0].command,
      gemini: JSON.parse(repo.read('.gemini/settings.json')).hooks.BeforeTool[0].hooks[0].command,
      codex: JSON.parse(repo.read('.codex/hooks.json')).hooks.PreToolUse[0].hooks[0].command,
    };
    for (const [h, command] of Object.entries(commands)) {
      const r = sh(command, h);
      expect(r.status, h).toBe(2);
      expect(r.stderr.toString(), h).toMatch(/fail closed/);
    }
    // Cursor, Copilot: the deny JSON (Cline runs guard in process, as a plugin: no command to kill)
    expect(
      JSON.parse(
        sh(
          JSON.parse(repo.read('.cursor/hooks.json')).hooks.preToolUse[0].command,
          'cursor',
        ).stdout.toString(),
      ),
    ).toMatchObject({ permission: 'deny' });
    expect(
      JSON.parse(
        sh(
          JSON.parse(repo.read('.github/hooks/guard.json')).hooks.preToolUse[0].bash,
          'copilot',
        ).stdout.toString(),
      ),
    ).toMatchObject({ permissionDecision: 'deny' });
    // and without the fault the same commands answer no opinion (a write guard allows)
    const calm = cleanEnv({ CI: 'true', CLAUDE_PROJECT_DIR: repo.dir });
    const ok = spawnSync('sh', ['-c', commands.claude], {
      cwd: repo.dir,
      env: calm,
      input: payload('claude'),
    });
    expect({ status: ok.status, stdout: ok.stdout.toString() }).toEqual({ status: 0, stdout: '' });
  });
});

describe('concurrency', () => {
  /** `guard hook claude` started on `input`, not waited on: its exit code and stdout when it ends. */
  function startHook(repo: TestRepo, input: string, env: NodeJS.ProcessEnv) {
    const child = spawn(process.execPath, [CLI, 'hook', 'claude'], { cwd: repo.dir, env });
    let out = '';
    child.stdout.on('data', (b) => (out += b));
    const done = new Promise<{ code: number; out: string }>((resolve) =>
      child.on('close', (code) => resolve({ code: code ?? 99, out })),
    );
    child.stdin.end(input);
    return done;
  }

  it('8 hook calls at once on different files: 8 checkpoints, nothing lost', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 8; i++) files[`f${i}.txt`] = lines(20, `f${i}`);
    const repo = makeRepo(files);
    const env = cleanEnv({ CI: 'true' });
    const runs = Array.from({ length: 8 }, (_, i) =>
      startHook(
        repo,
        claude(
          repo,
          'Edit',
          {
            file_path: path.join(repo.dir, `f${i}.txt`),
            old_string: `f${i} 3\n`,
            new_string: `F${i} 3\n`,
          },
          { id: `c${i}` },
        ),
        env,
      ),
    );
    const results = await Promise.all(runs);
    expect(results).toEqual(Array.from({ length: 8 }, () => ({ code: 0, out: '' })));
    const cps = checkpointsOf(repo);
    expect(cps).toHaveLength(8);
    const held = cps
      .map((cp) => repo.git(['log', '-1', '--format=%B', cp]))
      .map((m) => /"paths":\["(f\d)\.txt"\]/.exec(m)![1])
      .sort();
    expect(held).toEqual(['f0', 'f1', 'f2', 'f3', 'f4', 'f5', 'f6', 'f7']);
    expect(steps(repo)).toHaveLength(8);
    expect(repo.git(['for-each-ref', '--format=%(refname)', 'refs/guard/tmp/'])).toBe('');
  });

  it("a call of the session read while another has moved the chain and not yet noted its tip: no alarm (CI's 8 calls at once, under load)", async () => {
    const repo = makeRepo({ 'f0.txt': lines(20, 'f0'), 'f1.txt': lines(20, 'f1') });
    const env = cleanEnv({ CI: 'true' });
    const edit = (i: number, id: string) =>
      claude(
        repo,
        'Edit',
        {
          file_path: path.join(repo.dir, `f${i}.txt`),
          old_string: `f${i} 3\n`,
          new_string: `F${i} 3\n`,
        },
        { id },
      );
    expect(repo.guard(['hook', 'claude'], { input: edit(0, 'c0'), env }).stdout).toBe('');
    const chain = path.join(repo.dir, '.git', 'refs/guard/sessions/claude/sess-1/chain');
    const before = readFileSync(chain, 'utf8');
    // A stops just after fast-import moved the chain (and before anything else of its own)
    const a = startHook(repo, edit(1, 'c1'), {
      ...env,
      GUARD_FAULT_PAUSE: 'records:refs-moved',
      GUARD_FAULT_PAUSE_MS: '4000',
    });
    for (let i = 0; i < 200 && readFileSync(chain, 'utf8') === before; i++)
      await new Promise((r) => setTimeout(r, 25));
    expect(readFileSync(chain, 'utf8')).not.toBe(before);
    // B, the session's next call, reads the net while A is stopped there
    const b = repo.guard(['hook', 'claude'], {
      input: claude(repo, 'Bash', { command: 'ls' }, { id: 'b1' }),
      env,
    });
    expect(
      b.stdout,
      'on 5146eb5: "refs/guard/sessions/claude/sess-1/chain -> ..." moved outside guard',
    ).toBe('');
    expect(await a).toEqual({ code: 0, out: '' });
    expect(repo.guard(['doctor']).stdout).not.toMatch(/outside guard/);
  });
});

describe('guard run lanes are sessions too', () => {
  it('guard log --session LANE lists the run; guard rewind LANE (from the main tree) puts its files back', () => {
    const repo = makeRepo({ 'keep.txt': lines(30), 'gone.txt': lines(5) });
    const r = repo.guard([
      'run',
      'agent',
      '--',
      'sh',
      '-c',
      'rm gone.txt; echo changed > keep.txt; echo new > made.txt',
    ]);
    expect(r.code).toBe(0);
    const lane = path.join(repo.dir, '.guard', 'lanes', 'agent');
    expect(readFileSync(path.join(lane, 'keep.txt'), 'utf8')).toBe('changed\n');
    const log = repo.guardJson(['log', '--session', 'agent']).json;
    expect(log.entries.map((e: any) => e.phase)).toEqual(['post', 'pre']);
    const rw = repo.guardJson(['rewind', 'agent']);
    expect(rw.code).toBe(0);
    expect(rw.json.changes).toEqual([
      { path: 'gone.txt', action: 'recreated' },
      { path: 'keep.txt', action: 'rewritten' },
      { path: 'made.txt', action: 'removed' },
    ]);
    expect(readFileSync(path.join(lane, 'keep.txt'), 'utf8')).toBe(lines(30));
    expect(readFileSync(path.join(lane, 'gone.txt'), 'utf8')).toBe(lines(5));
  });
});

describe('guard hook: its own time budget', () => {
  it('answers in the blocking form when it runs out of time', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const r = hook(
      repo,
      'gemini',
      GIT_WRITE.gemini!(repo.dir).replace('.git/hooks/pre-commit', 'b.txt'),
      {
        GUARD_HOOK_TIMEOUT: '1',
        GUARD_FAULT_PAUSE: 'hook:before-record',
        GUARD_FAULT_PAUSE_MS: '2500',
      },
    );
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({
      decision: 'deny',
      reason: expect.stringContaining('ran out of time (1 s)'),
    });
  });

  it('usage: an unknown harness', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const r = repo.guard(['hook', 'emacs'], { input: '{}' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown harness "emacs"/);
  });
});

describe('pruning', () => {
  it('guard log --prune takes a session step along with its checkpoint', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    hook(
      repo,
      'claude',
      claude(repo, 'Write', { file_path: path.join(repo.dir, 'a.txt'), content: 'b\n' }),
    );
    expect(steps(repo)).toHaveLength(1);
    const r = repo.guardJson(['log', '--prune', '--keep', '0']);
    expect(r.json.pruned.checkpoints).toBe(1);
    // the session's policy anchors (git/session-policy.ts) go with its last step
    expect(repo.refs('refs/guard/sessions/')).toEqual([]);
  });
});

describe('guard hook codex: patches', () => {
  const codex = (repo: TestRepo, patch: string, viaShell = false) =>
    JSON.stringify({
      session_id: 'cx',
      turn_id: 't',
      cwd: repo.dir,
      hook_event_name: 'PreToolUse',
      model: 'gpt-5.5',
      permission_mode: 'bypassPermissions',
      tool_name: viaShell ? 'Bash' : 'apply_patch',
      tool_input: { command: viaShell ? `apply_patch <<'EOF'\n${patch}EOF\n` : patch },
      tool_use_id: 'call_1',
    });

  it('a move of a big file is a rename, allowed; deleting it is refused', () => {
    const repo = makeRepo({ 'src/app.py': lines(300) });
    const move =
      '*** Begin Patch\n*** Update File: src/app.py\n*** Move to: src/main.py\n@@\n-line 3\n+LINE 3\n*** End Patch\n';
    const r = hook(repo, 'codex', codex(repo, move));
    expect(r.stdout).toBe('');
    const [cp] = checkpointsOf(repo);
    expect(repo.git(['log', '-1', '--format=%B', cp!])).toContain(
      '"paths":["src/main.py","src/app.py"]',
    );
    const del = hook(
      repo,
      'codex',
      codex(repo, '*** Begin Patch\n*** Delete File: src/app.py\n*** End Patch\n', true),
    );
    expect(decision(del)).toBe('deny');
    expect(del.json.hookSpecificOutput.permissionDecisionReason).toContain(
      'src/app.py would be deleted (300 lines)',
    );
  });
});
