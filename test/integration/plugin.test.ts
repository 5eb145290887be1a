import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  clineAfterTool,
  clineBeforeTool,
  guardToolCall,
  opencodeAfter,
  opencodeBefore,
} from '../../src/plugin/index.js';
import {
  checkpointsOf,
  cleanEnv,
  cleanupRepos,
  installGuard,
  lines,
  makeRepo,
  type TestRepo,
} from '../helpers.js';

/**
 * guard-cli/plugin: the hook in the harness's own process (Cline, opencode,
 * Kilo). The same path as `guard hook`, proved through git: a truncation
 * refused and kept, a `git checkout -- .` reported with the command that
 * brings the work back, reads untouched, and every failure inside guard a
 * refusal.
 */
afterAll(cleanupRepos);

const rejectedIn = (text: string) => /refs\/guard\/rejected\/\S+?(?=\.)/.exec(text)?.[0] ?? null;

function wipeScenario(repo: TestRepo) {
  // uncommitted work over a committed file, then the command that throws it away
  writeFileSync(path.join(repo.dir, 'notes.py'), lines(150, 'mine'));
  return () => spawnSync('git', ['checkout', '--', '.'], { cwd: repo.dir, env: cleanEnv() });
}

describe('guardToolCall (normalised)', () => {
  it('refuses a truncating write, keeps it under refs/guard/rejected/, leaves the file', async () => {
    const big = lines(270);
    const repo = makeRepo({ 'state.py': big });
    const v = await guardToolCall({
      harness: 'opencode',
      phase: 'before',
      sessionId: 's1',
      toolCallId: 'c1',
      cwd: repo.dir,
      tool: 'write',
      kind: 'write',
      path: 'state.py',
      content: 'line 1\n# ... rest unchanged ...\n',
    });
    expect(v.action).toBe('deny');
    const reason = (v as { reason: string }).reason;
    expect(reason).toContain('state.py would lose 269 of 270 lines');
    const ref = rejectedIn(reason)!;
    expect(repo.git(['show', `${ref}:state.py`])).toBe('line 1\n# ... rest unchanged ...\n');
    expect(repo.read('state.py')).toBe(big);
  });

  it('lets a small edit and a read run', async () => {
    const repo = makeRepo({ 'seed.txt': 'alpha\nbeta\n' });
    const base = {
      harness: 'kilo' as const,
      sessionId: 's',
      cwd: repo.dir,
      phase: 'before' as const,
    };
    expect(
      await guardToolCall({
        ...base,
        tool: 'edit',
        kind: 'edit',
        path: 'seed.txt',
        oldText: 'beta',
        newText: 'BETA',
      }),
    ).toEqual({ action: 'allow' });
    expect(await guardToolCall({ ...base, tool: 'read', kind: 'read', path: 'seed.txt' })).toEqual({
      action: 'allow',
    });
    // the edit was checkpointed first (the same flow as guard hook)
    expect(checkpointsOf(repo)).toHaveLength(1);
  });

  it('fails closed: a payload it cannot read, a relative folder, a broken committed config', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'guard.config.json': '{"lineThreshold": "many"}' });
    const base = {
      harness: 'opencode' as const,
      sessionId: 's',
      cwd: repo.dir,
      phase: 'before' as const,
      tool: 'x',
    };
    for (const call of [
      { ...base, kind: 'write' as const, path: 'a.txt' },
      { ...base, kind: 'patch' as const, patch: 'not a patch' },
      { ...base, cwd: 'relative', kind: 'shell' as const, command: 'ls' },
      { ...base, kind: 'write' as const, path: 'a.txt', content: 'b\n' },
      { ...base, sessionId: '', kind: 'shell' as const, command: 'ls' },
      { ...base, harness: 'claude', kind: 'shell' as const, command: 'ls' } as never,
      null as never,
    ]) {
      const v = await guardToolCall(call);
      expect(v.action, JSON.stringify(call)).toBe('deny');
      expect((v as { reason: string }).reason).toMatch(/fail closed|guard refused/);
    }
    expect(repo.read('a.txt')).toBe('a\n');
  });

  it('an agent may not add or change a plugin (it could rewrite calls after guard judged them) or the config that names plugins', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const base = {
      harness: 'opencode' as const,
      sessionId: 's',
      cwd: repo.dir,
      phase: 'before' as const,
      tool: 'write',
      kind: 'write' as const,
      content: 'export const P = async () => ({});\n',
    };
    for (const p of [
      '.opencode/plugins/zz.js',
      '.opencode/plugin/zz.ts',
      '.kilo/plugins/a.js',
      '.kilocode/plugin/a.js',
      '.cline/plugins/pkg/index.js',
      'opencode.json',
      '.opencode/opencode.jsonc',
      'kilo.json',
      '.opencode/plugins/guard.js',
    ]) {
      const v = await guardToolCall({ ...base, path: p });
      expect(v, p).toMatchObject({ action: 'deny', reason: expect.stringContaining('protected') });
    }
    expect(await guardToolCall({ ...base, path: 'src/plugins/zz.js' })).toEqual({
      action: 'allow',
    });
  });

  it('answers within its budget, refusing, when guard is slower', async () => {
    const repo = makeRepo({ 'state.py': lines(270) });
    const v = await guardToolCall(
      {
        harness: 'cline',
        phase: 'before',
        sessionId: 's',
        cwd: repo.dir,
        tool: 'editor',
        kind: 'write',
        path: 'state.py',
        content: 'x\n',
      },
      { budgetMs: 1 },
    );
    expect(v).toMatchObject({ action: 'deny', reason: expect.stringContaining('ran out of time') });
  });
});

describe('Cline plugin hooks (beforeTool / afterTool)', () => {
  const setup = (repo: TestRepo) => ({
    session: { sessionId: 'cline-1' },
    workspaceInfo: { rootPath: repo.dir },
  });
  const call = (toolName: string, input: object, id = 'call_1') => ({
    toolCall: { toolCallId: id, toolName, input },
    input,
    snapshot: { conversationId: 'conv', agentId: 'a' },
  });

  it('editor truncation: {skip, reason}; apply_patch deleting the file: the same; read_files: nothing', async () => {
    const big = lines(270, 'state line');
    const repo = makeRepo({ 'state.py': big });
    const trunc = await clineBeforeTool(
      call('editor', {
        path: path.join(repo.dir, 'state.py'),
        old_text: big,
        new_text: 'state line 1\n',
      }),
      setup(repo),
    );
    expect(trunc).toMatchObject({
      skip: true,
      reason: expect.stringContaining('state.py would lose 269 of 270 lines'),
    });
    expect(repo.git(['show', `${rejectedIn(trunc!.reason)}:state.py`])).toBe('state line 1\n');
    const del = await clineBeforeTool(
      call('apply_patch', { input: '*** Begin Patch\n*** Delete File: state.py\n*** End Patch\n' }),
      setup(repo),
    );
    expect(del).toMatchObject({
      skip: true,
      reason: expect.stringContaining('state.py would be deleted'),
    });
    expect(
      await clineBeforeTool(call('read_files', { paths: ['state.py'] }), setup(repo)),
    ).toBeUndefined();
    expect(repo.read('state.py')).toBe(big);
  });

  it('editor old_text sent with other line ends than the file: matched as Cline matches it (a CRLF truncation cannot slip past)', async () => {
    const big = lines(270, 'state line');
    const repo = makeRepo({ 'lf.py': big, 'crlf.py': big.replace(/\n/g, '\r\n') });
    const crlfOld = await clineBeforeTool(
      call('editor', { path: 'lf.py', old_text: big.replace(/\n/g, '\r\n'), new_text: 'x\r\n' }),
      setup(repo),
    );
    expect(crlfOld).toMatchObject({
      skip: true,
      reason: expect.stringContaining('lf.py would lose 270 of 270 lines'),
    });
    const lfOld = await clineBeforeTool(
      call('editor', { path: 'crlf.py', old_text: big, new_text: 'x\n' }),
      setup(repo),
    );
    expect(lfOld).toMatchObject({
      skip: true,
      reason: expect.stringContaining('crlf.py would lose 270 of 270 lines'),
    });
  });

  it('editor insert_line into a protected file is measured (and refused)', async () => {
    const repo = makeRepo({ 'guard.config.json': '{}\n' });
    const r = await clineBeforeTool(
      call('editor', { path: 'guard.config.json', new_text: '', insert_line: 1 }),
      setup(repo),
    );
    expect(r).toMatchObject({ skip: true, reason: expect.stringContaining('protected') });
  });

  it('afterTool of an editor call does nothing (nobody was asked); what the net finds waits for the next call', async () => {
    const repo = installGuard({ 'a.py': lines(20) });
    const slow = { budgetMs: 30_000 }; // (the first call of a test process, on a loaded machine)
    const c = call(
      'editor',
      { path: 'a.py', old_text: 'line 1\n', new_text: 'line one\n' },
      'call_e',
    );
    expect((await clineBeforeTool(c, setup(repo), slow))?.reason).toBeUndefined();
    repo.write('a.py', repo.read('a.py').replace('line 1\n', 'line one\n'));
    // guard's git hooks removed between the two events: an after event that ran guard would put them
    // back and say so (hook.ts: the net's report after a tool)
    const hook = path.join(repo.dir, '.husky', '_', 'pre-commit');
    const text = readFileSync(hook, 'utf8');
    rmSync(path.join(repo.dir, '.husky', '_'), { recursive: true });
    expect(await clineAfterTool(c, setup(repo), slow)).toBeUndefined();
    expect(existsSync(hook)).toBe(false);
    // the next call's before event finds it and refuses once, naming it
    const next = await clineBeforeTool(
      call('run_commands', { commands: ['true'] }, 'call_f'),
      setup(repo),
      slow,
    );
    expect(next).toMatchObject({
      skip: true,
      reason: expect.stringMatching(/git hooks were removed outside guard \(_\/pre-commit/),
    });
    expect(readFileSync(hook, 'utf8')).toBe(text);
  });

  it('run_commands wiping uncommitted work: afterTool appends the loss and the restore command', async () => {
    const repo = makeRepo({ 'notes.py': lines(150) });
    const wipe = wipeScenario(repo);
    const c = call('run_commands', { commands: ['git checkout -- .'] }, 'call_9');
    expect(await clineBeforeTool(c, setup(repo))).toBeUndefined();
    wipe();
    const after = await clineAfterTool({ ...c, result: {} } as never, setup(repo));
    expect(after?.appendContext).toContain('notes.py');
    const restore = /guard restore (\S+) -- notes\.py/.exec(after!.appendContext)!;
    expect(restore).not.toBeNull();
    const r = repo.guard(['restore', restore[1]!, '--', 'notes.py']);
    expect(r.code).toBe(0);
    expect(repo.read('notes.py')).toBe(lines(150, 'mine'));
  });
});

describe('opencode / Kilo plugin hooks (tool.execute.before / after)', () => {
  it('write truncation throws the reason; bash loss is appended to the output; read passes', async () => {
    const big = lines(270);
    const repo = makeRepo({ 'state.py': big, 'notes.py': lines(150) });
    const ctx = { directory: repo.dir, worktree: repo.dir };
    await expect(
      opencodeBefore(
        'opencode',
        { tool: 'write', sessionID: 'ses_1', callID: 'c1' },
        { args: { filePath: path.join(repo.dir, 'state.py'), content: 'x\n' } },
        ctx,
      ),
    ).rejects.toThrow(/state\.py would lose 270 of 270 lines[\s\S]*refs\/guard\/rejected\//);
    await expect(
      opencodeBefore(
        'kilo',
        { tool: 'read', sessionID: 'ses_1', callID: 'c2' },
        { args: { filePath: 'state.py' } },
        ctx,
      ),
    ).resolves.toBeUndefined();
    const wipe = wipeScenario(repo);
    const input = { tool: 'bash', sessionID: 'ses_1', callID: 'c3' };
    const args = { command: 'git checkout -- .', description: 'x' };
    await opencodeBefore('opencode', input, { args }, ctx);
    wipe();
    const output = { title: 'git checkout', output: '', metadata: {} };
    await opencodeAfter('opencode', { ...input, args }, output, ctx);
    expect(output.output).toMatch(
      /notes\.py lost 150 of 150 lines[\s\S]*guard restore \S+ -- notes\.py/,
    );
    // guard rewind --to: the session's start brings it back byte for byte
    const log = repo.guardJson(['log', '--session', 'ses_1']).json;
    const first = log.entries.filter((e: { kind: string }) => e.kind === 'checkpoint').pop().id;
    expect(repo.guard(['rewind', 'ses_1', '--to', first]).code).toBe(0);
    expect(repo.read('notes.py')).toBe(lines(150, 'mine'));
    expect(repo.read('state.py')).toBe(big);
  });

  it('a command that removes or changes the plugin file is reported (the next session would run unguarded)', async () => {
    const repo = makeRepo({
      'a.txt': 'a\n',
      '.opencode/plugins/guard.js': '// written by guard init --agent opencode\n',
    });
    const ctx = { directory: repo.dir, worktree: repo.dir };
    const input = {
      tool: 'bash',
      sessionID: 's',
      callID: 'c',
      args: { command: 'rm -f .opencode/plugins/guard.js' },
    };
    const untouched = { output: 'ok' };
    await opencodeAfter('opencode', input, untouched, ctx);
    expect(untouched.output).toBe('ok');
    spawnSync('rm', ['-f', '.opencode/plugins/guard.js'], { cwd: repo.dir });
    const output = { output: 'ok' };
    await opencodeAfter('opencode', input, output, ctx);
    expect(output.output).toMatch(
      /^ok\n\nguard: this command removed \.opencode\/plugins\/guard\.js[\s\S]*guard init --agent opencode/,
    );
    const cline = await clineAfterTool(
      {
        toolCall: { toolCallId: 'x', toolName: 'run_commands', input: { commands: ['true'] } },
        input: { commands: ['true'] },
      },
      { workspaceInfo: { rootPath: repo.dir }, session: { sessionId: 's2' } },
    );
    expect(cline?.appendContext).toMatch(/guard: this command removed \.cline\/plugins\/guard\.js/);
  });

  it('an edit opencode would match loosely (first and last lines only) is refused, not waved through', async () => {
    const big = lines(270);
    const repo = makeRepo({ 'state.py': big });
    const ctx = { directory: repo.dir };
    // opencode's BlockAnchorReplacer takes "line 1 ... line 270" as the whole block in between
    const args = {
      filePath: 'state.py',
      oldString: 'line 1\n    (the rest)\nline 270\n',
      newString: 'line 1\n',
    };
    await expect(
      opencodeBefore('opencode', { tool: 'edit', sessionID: 's', callID: 'c' }, { args }, ctx),
    ).rejects.toThrow(/guard refused this edit: oldString is not in state\.py exactly/);
    // the exact text passes to the policy as before (a one-line change)
    await expect(
      opencodeBefore(
        'opencode',
        { tool: 'edit', sessionID: 's', callID: 'd' },
        { args: { filePath: 'state.py', oldString: 'line 7\n', newString: 'line seven\n' } },
        ctx,
      ),
    ).resolves.toBeUndefined();
    expect(repo.read('state.py')).toBe(big);
  });

  it('bash with a workdir outside any repository: no opinion', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    await expect(
      opencodeBefore(
        'opencode',
        { tool: 'bash', sessionID: 's', callID: 'c' },
        { args: { command: 'ls', workdir: '/' } },
        { directory: repo.dir },
      ),
    ).resolves.toBeUndefined();
  });
});
