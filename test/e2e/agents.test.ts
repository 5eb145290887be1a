import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, makeRepo as makeTestRepo, snapshotTree } from '../helpers.js';

/** A repository where `guard init` can install its git hook (makeRepo points hooks at /dev/null). */
function makeRepo(files: Record<string, string>) {
  const repo = makeTestRepo(files);
  repo.git(['config', '--unset', 'core.hooksPath']);
  return repo;
}

afterAll(cleanupRepos);

const ALL = ['claude', 'gemini', 'codex', 'cursor', 'cline', 'copilot'];

describe('guard init --agent', () => {
  it('writes all six configs, merged into existing settings, and a second run changes nothing', () => {
    const repo = makeRepo({
      'a.txt': 'a\n',
      '.claude/settings.json': JSON.stringify({ model: 'x', hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo mine' }] }] } }),
      '.gemini/settings.json': JSON.stringify({ general: { vimMode: true } }),
    });
    const first = repo.guardJson(['init', '--agent', ...ALL]);
    expect(first.code).toBe(0);
    const claude = JSON.parse(repo.read('.claude/settings.json'));
    expect(claude.model).toBe('x');
    expect(claude.hooks.PreToolUse).toHaveLength(2);
    expect(claude.hooks.PreToolUse[0].hooks[0].command).toBe('echo mine');
    expect(claude.hooks.PreToolUse[1]).toMatchObject({ matcher: 'Write|Edit|MultiEdit|Bash', hooks: [{ type: 'command', timeout: 60 }] });
    expect(claude.hooks.PreToolUse[1].hooks[0].command).toMatch(/ hook claude \|\| \{ echo '.*fail closed.*' >&2; exit 2; \}$/);
    expect(claude.hooks.PostToolUse).toHaveLength(1);
    const gemini = JSON.parse(repo.read('.gemini/settings.json'));
    expect(gemini.general).toEqual({ vimMode: true });
    expect(gemini.hooks.BeforeTool[0]).toMatchObject({ matcher: 'write_file|replace|run_shell_command', hooks: [{ name: 'guard', type: 'command', timeout: 60000 }] });
    expect(JSON.parse(repo.read('.codex/hooks.json')).hooks.PreToolUse[0].matcher).toContain('apply_patch');
    expect(JSON.parse(repo.read('.cursor/hooks.json'))).toMatchObject({ version: 1, hooks: { preToolUse: [{ failClosed: true }] } });
    expect(repo.read('.cline/plugins/guard.js')).toMatch(/guard init --agent cline[\s\S]*beforeTool[\s\S]*clineBeforeTool/);
    expect(JSON.parse(repo.read('.github/hooks/guard.json')).hooks.preToolUse[0]).toMatchObject({ type: 'command', timeoutSec: 60 });

    const before = snapshotTree(repo.dir);
    const again = repo.guardJson(['init', '--agent', 'claude,gemini', 'codex', 'cursor', 'cline', 'copilot']);
    expect(again.code).toBe(0);
    expect(again.json.changed).toEqual([]);
    expect(snapshotTree(repo.dir)).toEqual(before);
  });

  it('an unknown harness is a usage error that writes nothing', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const r = repo.guard(['init', '--agent', 'vscode']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown agent harness "vscode"/);
    expect(repo.git(['status', '--porcelain', '--ignored'])).toBe('');
  });

  it('a settings file that is not JSON is a config error, left as it is', () => {
    const repo = makeRepo({ 'a.txt': 'a\n', '.claude/settings.json': '{ nope' });
    const r = repo.guard(['init', '--agent', 'claude']);
    expect(r.code).toBe(2);
    expect(repo.read('.claude/settings.json')).toBe('{ nope');
  });
});

describe('guard doctor, per harness', () => {
  const agent = (json: any, h: string) => json.checks.find((c: any) => c.id === `agent:${h}`);

  it('missing, disabled, timeout too short, Codex not yet trusted, ok', () => {
    const repo = makeRepo({ 'a.txt': 'a\n', '.gemini/settings.json': '{}' });
    let d = repo.guardJson(['doctor']).json;
    expect(agent(d, 'gemini')).toMatchObject({ ok: false, severity: 'warning', message: expect.stringContaining('no guard hook'), hint: 'guard init --agent gemini' });
    expect(agent(d, 'claude')).toMatchObject({ ok: true }); // not used here: info only

    repo.guard(['init', '--agent', 'claude', 'gemini', 'codex']);
    d = repo.guardJson(['doctor']).json;
    expect(agent(d, 'claude')).toMatchObject({ ok: true, message: expect.stringContaining('runs guard hook claude') });
    expect(agent(d, 'gemini')).toMatchObject({ ok: true });
    expect(agent(d, 'codex')).toMatchObject({ ok: false, message: expect.stringContaining('trusted') });

    repo.write('.claude/settings.local.json', '{"disableAllHooks": true}');
    const g = JSON.parse(repo.read('.gemini/settings.json'));
    g.hooks.BeforeTool[0].hooks[0].timeout = 5000;
    repo.write('.gemini/settings.json', JSON.stringify(g));
    d = repo.guardJson(['doctor']).json;
    expect(agent(d, 'claude')).toMatchObject({ ok: false, message: expect.stringContaining('disableAllHooks') });
    expect(agent(d, 'gemini')).toMatchObject({ ok: false, message: expect.stringContaining('timeout is 5 s') });
  });
});

describe('the command the harness configs run', () => {
  it("under yarn Plug'n'Play (no node_modules/.bin) runs the project's guard through yarn", async () => {
    const { guardCommand } = await import('../../src/flows/agents.js');
    const repo = makeRepo({ 'a.txt': 'a\n', '.pnp.cjs': '// yarn pnp\n' });
    expect(guardCommand(repo.dir, 'CLAUDE_PROJECT_DIR')).toBe('cd "$CLAUDE_PROJECT_DIR" && yarn guard');
    expect(guardCommand(repo.dir, null)).toBe(`cd ${repo.dir} && yarn guard`); // a plain temp path needs no quotes
  });
});
