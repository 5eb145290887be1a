/**
 * Issue 20, the adversary on the newest door: guard-cli/plugin, guard's hook
 * inside opencode, Kilo and Cline. Each attack calls the plugin's exported
 * handlers as the harness does, against a real repository.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  clineAfterTool,
  clineBeforeTool,
  opencodeAfter,
  opencodeBefore,
  opencodeJudgeBefore,
} from '../../src/plugin/index.js';
import { cleanEnv, cleanupRepos, lines, makeRepo } from '../helpers.js';

afterAll(cleanupRepos);

describe('a shell call whose folder is outside the project', () => {
  for (const harness of ['opencode', 'kilo'] as const) {
    it(`${harness}: bash with workdir /tmp running git -C PROJECT checkout -- . is checkpointed before and reported after`, async () => {
      const repo = makeRepo({ 'app.py': lines(100) });
      writeFileSync(path.join(repo.dir, 'app.py'), lines(100, 'mine'));
      const command = `git -C ${repo.dir} checkout -- .`;
      const input = { tool: 'bash', sessionID: 'ses-out', callID: 'c1' };
      const args = { command, workdir: tmpdir(), description: 'reset' };
      const ctx = { directory: repo.dir, worktree: repo.dir };
      await opencodeBefore(harness, input, { args }, ctx);
      spawnSync('sh', ['-c', command], { env: cleanEnv() });
      const out = { output: 'done' };
      await opencodeAfter(harness, { ...input, args }, out, ctx);
      expect(out.output).toMatch(/app\.py lost 100 of 100 lines/);
      const id = /guard restore (\S+) -- app\.py/.exec(out.output)![1]!;
      expect(repo.git(['show', `refs/guard/checkpoints/${id}:app.py`])).toBe(lines(100, 'mine'));
    });
  }

  it('cline: run_commands judged in the workspace (its rootPath) even when the setup cwd is elsewhere', async () => {
    const repo = makeRepo({ 'app.py': lines(100) });
    writeFileSync(path.join(repo.dir, 'app.py'), lines(100, 'mine'));
    const command = `git -C ${repo.dir} checkout -- .`;
    const c = {
      toolCall: { toolCallId: 't1', toolName: 'run_commands', input: { commands: [command] } },
      snapshot: { conversationId: 'cl-1' },
    };
    const setup = {
      session: { sessionId: 'cl-1' },
      workspaceInfo: { rootPath: repo.dir },
      cwd: tmpdir(),
    };
    expect(await clineBeforeTool(c, setup, { budgetMs: 30_000 })).toBeUndefined();
    spawnSync('sh', ['-c', command], { env: cleanEnv() });
    const after = await clineAfterTool(c, setup, { budgetMs: 30_000 });
    expect(after?.appendContext).toMatch(/app\.py lost 100 of 100 lines/);
  });
});

describe('a target that is no regular file', () => {
  it('opencode: an edit of a FIFO answers within the budget (the plugin does not hang the harness reading it)', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    spawnSync('mkfifo', [path.join(repo.dir, 'pipe')]);
    const input = { tool: 'edit', sessionID: 'ses-f', callID: 'f1' };
    const args = { filePath: 'pipe', oldString: 'x', newString: 'y' };
    const t0 = Date.now();
    const r = await opencodeJudgeBefore(
      {
        harness: 'opencode',
        input,
        output: { args },
        ctx: { directory: repo.dir, worktree: repo.dir },
      },
      { budgetMs: 2000 },
    ).then(
      () => 'allowed',
      (e: Error) => e.message,
    );
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(r).toMatch(/ran out of time|guard/);
  }, 20_000);

  it('cline: an editor call on /dev/zero answers without reading it', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const c = {
      toolCall: {
        toolCallId: 'z1',
        toolName: 'editor',
        input: { command: 'str_replace', path: '/dev/zero', old_text: 'x', new_text: 'y' },
      },
      snapshot: { conversationId: 'cl-z' },
    };
    const t0 = Date.now();
    await clineBeforeTool(
      c,
      { session: { sessionId: 'cl-z' }, workspaceInfo: { rootPath: repo.dir } },
      { budgetMs: 2000 },
    );
    expect(Date.now() - t0).toBeLessThan(10_000);
  }, 20_000);
});
