import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  claudeDecision,
  claudeRepo,
  cleanEnv,
  cleanupRepos,
  lines,
  outsideDir,
  type TestRepo,
} from '../helpers.js';

afterAll(cleanupRepos);

/**
 * Claude Code's after event of a write starts guard only while a person was asked about a write
 * (issue 22, item 3: flows/setup/hook-command.ts askGate, git/asked-marks.ts). The commands are
 * run as Claude Code runs them: the installed command string through `sh -c`, the harness's
 * project variable set, the payload on stdin. Whether node started is seen through a file node
 * `--require`s (NODE_OPTIONS), so a gate that let node start, or one that kept it from starting
 * when a person was asked, fails here.
 */
type Group = { matcher: string; hooks: Array<{ command: string }> };

function installed(repo: TestRepo): Record<string, Group[]> {
  return JSON.parse(repo.read('.claude/settings.json')).hooks;
}

function commandFor(hooks: Record<string, Group[]>, event: string, tool: string): string {
  const found = hooks[event]!.filter((g) => new RegExp(g.matcher).test(tool));
  expect(found).toHaveLength(1);
  return found[0]!.hooks[0]!.command;
}

function payload(repo: TestRepo, tool: string, input: object, id: string, post: boolean): string {
  return JSON.stringify({
    session_id: 'gate-1',
    transcript_path: '/tmp/t.jsonl',
    cwd: repo.dir,
    permission_mode: 'default',
    hook_event_name: post ? 'PostToolUse' : 'PreToolUse',
    tool_name: tool,
    tool_input: input,
    tool_use_id: id,
    ...(post ? { tool_response: {} } : {}),
  });
}

describe("Claude Code's after event of a write: guard only when a person was asked", () => {
  const started = path.join(outsideDir(), 'started');
  const spy = path.join(path.dirname(started), 'spy.cjs');
  writeFileSync(spy, `require('fs').appendFileSync(${JSON.stringify(started)}, 'node\\n');\n`);
  const nodes = () =>
    existsSync(started) ? readFileSync(started, 'utf8').split('\n').length - 1 : 0;
  const run = (repo: TestRepo, command: string, input: string) => {
    const before = nodes();
    const r = spawnSync('sh', ['-c', command], {
      cwd: repo.dir,
      input,
      encoding: 'utf8',
      env: cleanEnv({
        CLAUDE_PROJECT_DIR: repo.dir,
        CLAUDE_CODE_ENTRYPOINT: 'cli',
        CI: undefined,
        NODE_OPTIONS: `--require ${spy}`,
      }),
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr, nodes: nodes() - before };
  };

  it('an allowed write: no node after it; the shell tools and every before event still start guard', () => {
    const repo = claudeRepo({ 'app.py': lines(20) });
    const hooks = installed(repo);
    const input = { file_path: path.join(repo.dir, 'app.py'), content: lines(21) };
    const pre = run(
      repo,
      commandFor(hooks, 'PreToolUse', 'Write'),
      payload(repo, 'Write', input, 'w1', false),
    );
    expect([pre.code, pre.stdout, pre.nodes]).toEqual([0, '', 1]);
    expect(existsSync(path.join(repo.dir, '.git/guard-asked'))).toBe(false);
    writeFileSync(input.file_path, input.content);
    for (const event of ['PostToolUse', 'PostToolUseFailure']) {
      const post = run(
        repo,
        commandFor(hooks, event, 'Write'),
        payload(repo, 'Write', input, 'w1', true),
      );
      expect([post.code, post.stdout, post.stderr, post.nodes]).toEqual([0, '', '', 0]);
    }
    const shell = { command: 'true' };
    for (const event of ['PreToolUse', 'PostToolUse']) {
      const r = run(
        repo,
        commandFor(hooks, event, 'Bash'),
        payload(repo, 'Bash', shell, 'b1', event !== 'PreToolUse'),
      );
      expect([r.code, r.nodes]).toEqual([0, 1]);
    }
    // a linked worktree (.git a file) or no project variable: guard runs as before
    const noVar = spawnSync('sh', ['-c', commandFor(hooks, 'PostToolUse', 'Edit')], {
      cwd: repo.dir,
      input: payload(repo, 'Write', input, 'w1', true),
      env: cleanEnv({ NODE_OPTIONS: `--require ${spy}` }),
    });
    expect(noVar.status).toBe(0);
    expect(nodes()).toBe(4);
  });

  it('a write put to the person: its after event starts guard and records the approval, then the gate closes again', () => {
    const repo = claudeRepo({ 'state.py': lines(200) });
    const hooks = installed(repo);
    const input = { file_path: path.join(repo.dir, 'state.py'), content: lines(10) };
    const pre = run(
      repo,
      commandFor(hooks, 'PreToolUse', 'Write'),
      payload(repo, 'Write', input, 'w2', false),
    );
    expect(claudeDecision({ json: JSON.parse(pre.stdout) })).toBe('ask');
    expect(existsSync(path.join(repo.dir, '.git/guard-asked'))).toBe(true);
    writeFileSync(input.file_path, input.content);
    const post = run(
      repo,
      commandFor(hooks, 'PostToolUse', 'Write'),
      payload(repo, 'Write', input, 'w2', true),
    );
    expect([post.code, post.stdout, post.nodes]).toEqual([0, '', 1]);
    const log = repo.guardJson(['log', '--session', 'gate-1']).json;
    expect(log.entries.find((e: { kind: string }) => e.kind === 'decision')).toMatchObject({
      path: 'state.py',
      decision: 'approved',
      decider: 'person',
    });
    // taken away with its mark: the next allowed write's after event starts no node (state.py's
    // session base is still its 200 lines: another write of it is asked about again)
    expect(existsSync(path.join(repo.dir, '.git/guard-asked'))).toBe(false);
    const next = { file_path: path.join(repo.dir, 'other.py'), content: lines(5) };
    expect(
      run(repo, commandFor(hooks, 'PreToolUse', 'Write'), payload(repo, 'Write', next, 'w3', false))
        .nodes,
    ).toBe(1);
    writeFileSync(next.file_path, next.content);
    expect(
      run(repo, commandFor(hooks, 'PostToolUse', 'Write'), payload(repo, 'Write', next, 'w3', true))
        .nodes,
    ).toBe(0);
  });

  it("a mark left by a write the person refused (no after event) goes after 30 minutes; another's stays; a link there is not followed", () => {
    const repo = claudeRepo({ 'app.py': lines(20) });
    const hooks = installed(repo);
    const dir = path.join(repo.dir, '.git/guard-asked');
    mkdirSync(dir);
    const old = path.join(dir, 'a'.repeat(32));
    const fresh = path.join(dir, 'b'.repeat(32));
    writeFileSync(old, '{}\n');
    writeFileSync(fresh, '{}\n');
    const t = (Date.now() - 31 * 60_000) / 1000;
    spawnSync('touch', ['-d', `@${t}`, old]);
    const input = { file_path: path.join(repo.dir, 'app.py'), content: lines(21) };
    const post = run(
      repo,
      commandFor(hooks, 'PostToolUse', 'Write'),
      payload(repo, 'Write', input, 'w4', true),
    );
    expect([post.code, post.nodes]).toEqual([0, 1]);
    expect([existsSync(old), existsSync(fresh)]).toEqual([false, true]);
    rmSync(dir, { recursive: true });
    // a link planted in its place: the gate stays open (node runs), nothing is removed through it
    const elsewhere = outsideDir();
    const victim = path.join(elsewhere, 'c'.repeat(32));
    writeFileSync(victim, 'keep\n');
    spawnSync('touch', ['-d', `@${t}`, victim]);
    spawnSync('ln', ['-s', elsewhere, dir]);
    const again = run(
      repo,
      commandFor(hooks, 'PostToolUse', 'Write'),
      payload(repo, 'Write', input, 'w5', true),
    );
    expect([again.code, again.nodes]).toEqual([0, 1]);
    expect(readFileSync(victim, 'utf8')).toBe('keep\n');
  });

  it("the gated command put on PreToolUse (it would let writes through unjudged), or the write tools' gate changed: doctor and the next hook call say so", () => {
    const repo = claudeRepo({ 'app.py': lines(20) });
    const s = JSON.parse(repo.read('.claude/settings.json'));
    const gated = s.hooks.PostToolUse.at(-1).hooks[0].command as string;
    s.hooks.PreToolUse.at(-1).hooks[0].command = gated;
    repo.write('.claude/settings.json', JSON.stringify(s, null, 2));
    const checks = repo.guardJson(['doctor']).json.checks;
    expect(checks).toContainEqual(
      expect.objectContaining({
        id: 'agent:claude',
        message: expect.stringMatching(/no guard hook/),
      }),
    );
    expect(checks).toContainEqual(
      expect.objectContaining({ id: 'integrity:agent', severity: 'error' }),
    );
    const pre = repo.guard(['hook', 'claude'], {
      input: payload(repo, 'Bash', { command: 'ls' }, 'g1', false),
    });
    expect(JSON.parse(pre.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
    // the write tools' after event made to skip always: the net's entries differ
    const t = JSON.parse(repo.read('.claude/settings.json'));
    t.hooks.PreToolUse.at(-1).hooks[0].command = gated.slice(gated.indexOf('|| ') + 3);
    t.hooks.PostToolUse.at(-1).hooks[0].command = `true || ${gated}`;
    repo.write('.claude/settings.json', JSON.stringify(t, null, 2));
    expect(repo.guardJson(['doctor']).json.checks).toContainEqual(
      expect.objectContaining({ id: 'integrity:agent', severity: 'error' }),
    );
  });
});
