import { mkdirSync, statSync, writeFileSync } from 'node:fs';
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
      '.claude/settings.json': JSON.stringify({
        model: 'x',
        hooks: {
          PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo mine' }] }],
        },
      }),
      '.gemini/settings.json': JSON.stringify({ general: { vimMode: true } }),
    });
    const first = repo.guardJson(['init', '--agent', ...ALL]);
    expect(first.code).toBe(0);
    const claude = JSON.parse(repo.read('.claude/settings.json'));
    expect(claude.model).toBe('x');
    expect(claude.hooks.PreToolUse).toHaveLength(2);
    expect(claude.hooks.PreToolUse[0].hooks[0].command).toBe('echo mine');
    // Claude Code runs the tool when a hook times out unless the hook says onFailure: "block" (its 2.1.330 schema)
    expect(claude.hooks.PreToolUse[1]).toMatchObject({
      // NotebookEdit and MCP tools write files too (holes3): anchored, as Claude tests a regex unanchored
      matcher: '^(Write|Edit|MultiEdit|NotebookEdit|Bash|PowerShell|Monitor|mcp__.*)$',
      hooks: [{ type: 'command', timeout: 60, onFailure: 'block' }],
    });
    expect(claude.hooks.PostToolUse[0].hooks[0].onFailure).toBe('block');
    expect(claude.hooks.PreToolUse[1].hooks[0].command).toMatch(
      / hook claude \|\| \{ echo '.*fail closed.*' >&2; exit 2; \}$/,
    );
    // Claude Code can ask a person: the after event of a write is where the approval is recorded,
    // so it is installed, behind a test that starts guard only while a write was put to a person
    // (hook-command.ts askGate; test/e2e/hook-ask-gate.test.ts); the shell tools' runs guard always
    expect(claude.hooks.PostToolUse).toHaveLength(2);
    expect(claude.hooks.PostToolUse[0].matcher).toBe('^(Bash|PowerShell|Monitor|mcp__.*)$');
    expect(claude.hooks.PostToolUse[0].hooks[0].command).toBe(
      claude.hooks.PreToolUse[1].hooks[0].command,
    );
    expect(claude.hooks.PostToolUse[1]).toMatchObject({
      matcher: '^(Write|Edit|MultiEdit|NotebookEdit)$',
      hooks: [{ type: 'command', timeout: 60, onFailure: 'block' }],
    });
    expect(claude.hooks.PostToolUse[1].hooks[0].command).toBe(
      '[ -d "$CLAUDE_PROJECT_DIR/.git" ] && [ ! -e "$CLAUDE_PROJECT_DIR/.git/guard-asked" ] || ' +
        claude.hooks.PreToolUse[1].hooks[0].command,
    );
    expect(claude.hooks.PostToolUseFailure).toEqual(claude.hooks.PostToolUse);
    const gemini = JSON.parse(repo.read('.gemini/settings.json'));
    expect(gemini.general).toEqual({ vimMode: true });
    expect(gemini.hooks.BeforeTool[0]).toMatchObject({
      matcher: 'write_file|replace|run_shell_command',
      hooks: [{ name: 'guard', type: 'command', timeout: 60000 }],
    });
    expect(JSON.parse(repo.read('.codex/hooks.json')).hooks.PreToolUse[0].matcher).toContain(
      'apply_patch',
    );
    expect(JSON.parse(repo.read('.cursor/hooks.json'))).toMatchObject({
      version: 1,
      hooks: { preToolUse: [{ failClosed: true }] },
    });
    // nobody can be asked in these: after a write there is nothing to record, so no after event for it
    expect(gemini.hooks.AfterTool[0].matcher).toBe('run_shell_command');
    expect(JSON.parse(repo.read('.codex/hooks.json')).hooks.PostToolUse[0].matcher).toBe(
      'Bash|shell|exec_command',
    );
    expect(JSON.parse(repo.read('.cursor/hooks.json')).hooks.postToolUse[0]).toMatchObject({
      matcher: 'Shell',
      failClosed: true,
    });
    expect(repo.read('.cline/plugins/guard.js')).toMatch(
      /guard init --agent cline[\s\S]*beforeTool[\s\S]*clineBeforeTool/,
    );
    expect(JSON.parse(repo.read('.github/hooks/guard.json')).hooks.preToolUse[0]).toMatchObject({
      type: 'command',
      timeoutSec: 60,
    });

    const before = snapshotTree(repo.dir);
    const again = repo.guardJson([
      'init',
      '--agent',
      'claude,gemini',
      'codex',
      'cursor',
      'cline',
      'copilot',
    ]);
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
    expect(agent(d, 'gemini')).toMatchObject({
      ok: false,
      severity: 'warning',
      message: expect.stringContaining('no guard hook'),
      hint: 'guard init --agent gemini',
    });
    expect(agent(d, 'claude')).toBeUndefined(); // not used here: one info line for all of them
    expect(agent(d, 'absent')).toMatchObject({
      ok: true,
      message: expect.stringContaining('claude, '),
    });
    expect(agent(d, 'absent').message).not.toContain('gemini');

    repo.guard(['init', '--agent', 'claude', 'gemini', 'codex']);
    d = repo.guardJson(['doctor']).json;
    expect(agent(d, 'claude')).toMatchObject({
      ok: true,
      message: expect.stringContaining('runs guard hook claude'),
    });
    expect(agent(d, 'gemini')).toMatchObject({
      ok: true,
      message: expect.stringContaining(
        'before write_file, replace, run_shell_command; after run_shell_command',
      ),
    });
    expect(agent(d, 'codex')).toMatchObject({
      ok: false,
      message: expect.stringContaining('trusted'),
    });

    repo.write('.claude/settings.local.json', '{"disableAllHooks": true}');
    const g = JSON.parse(repo.read('.gemini/settings.json'));
    g.hooks.BeforeTool[0].hooks[0].timeout = 5000;
    repo.write('.gemini/settings.json', JSON.stringify(g));
    d = repo.guardJson(['doctor']).json;
    expect(agent(d, 'claude')).toMatchObject({
      ok: false,
      message: expect.stringContaining('disableAllHooks'),
    });
    expect(agent(d, 'gemini')).toMatchObject({
      ok: false,
      message: expect.stringContaining('timeout is 5 s'),
    });

    // a hook written by an older guard init (no onFailure): Claude Code runs the tool when guard cannot answer
    repo.write('.claude/settings.local.json', '{}');
    const c = JSON.parse(repo.read('.claude/settings.json'));
    for (const ev of Object.keys(c.hooks))
      for (const g of c.hooks[ev]) for (const h of g.hooks) delete h.onFailure;
    repo.write('.claude/settings.json', JSON.stringify(c));
    d = repo.guardJson(['doctor']).json;
    expect(agent(d, 'claude')).toMatchObject({
      ok: false,
      message: expect.stringContaining('no onFailure: "block"'),
      hint: expect.stringContaining('guard init --agent claude'),
    });
  });
});

describe('guard init --agent, the Claude-style rows (harness/table.ts)', () => {
  it("writes each row's config with a matcher over every write and shell tool, guarded against a dying guard", () => {
    const repo = makeRepo({
      'a.txt': 'a\n',
      '.factory/hooks.json': JSON.stringify({ hooks: { Stop: [] } }),
    });
    const r = repo.guardJson(['init', '--agent', 'qwen', 'auggie', 'droid', 'crush', 'continue']);
    expect(r.code, r.stderr).toBe(0);
    const group = (file: string, ev = 'PreToolUse') => JSON.parse(repo.read(file)).hooks[ev].at(-1);
    expect(group('.qwen/settings.json')).toMatchObject({
      matcher: 'write_file|edit|replace|run_shell_command',
      hooks: [{ type: 'command', timeout: 60000 }],
    });
    expect(group('.qwen/settings.json').hooks[0].command).toMatch(
      /"\$QWEN_PROJECT_DIR"\/node_modules\/\.bin\/guard hook qwen \|\| \{ echo '.*' >&2; exit 2; \}$|hook qwen \|\| \{ echo/,
    );
    // Qwen cannot ask a person: its after event is installed for the shell tool alone
    expect(group('.qwen/settings.json', 'PostToolUse').matcher).toBe('run_shell_command');
    expect(group('.factory/settings.json', 'PostToolUse').matcher).toBe('Execute');
    expect(group('.augment/settings.json').matcher).toBe(
      'save-file|str-replace-editor|apply_patch|remove-files|launch-process',
    );
    expect(group('.factory/settings.json').matcher).toBe(
      'Create|Edit|MultiEdit|ApplyPatch|Execute',
    );
    // Droid: the hooks.json that newer builds read instead of settings.json gets guard's hook too
    const fh = JSON.parse(repo.read('.factory/hooks.json'));
    expect(fh.hooks.Stop).toEqual([]);
    expect(fh.hooks.PreToolUse[0].hooks[0].command).toContain('hook droid');
    expect(group('crush.json').hooks[0].command).toContain('hook crush');
    expect(group('.continue/settings.json').hooks[0].command).toContain('hook continue');
    expect(r.json.warnings.join('\n')).toMatch(/Continue CLI 1\.5\.47 loads these hooks but/);
    const d = repo.guardJson(['doctor']).json;
    for (const h of ['qwen', 'auggie', 'droid', 'crush', 'continue'])
      expect(
        d.checks.find((c: any) => c.id === `agent:${h}`),
        h,
      ).toMatchObject({ ok: true });
    // idempotent
    const again = repo.guardJson([
      'init',
      '--agent',
      'qwen',
      'auggie',
      'droid',
      'crush',
      'continue',
    ]);
    expect(again.json.changed).toEqual([]);
  });
});

describe('guard doctor: when the harness would not run guard', () => {
  const agent = (repo: ReturnType<typeof makeRepo>, h: string, env?: Record<string, string>) =>
    repo
      .guardJson(['doctor'], env ? { env } : {})
      .json.checks.find((c: any) => c.id === `agent:${h}`);

  it('a matcher that lets a write tool past guard', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.guard(['init', '--agent', 'claude', 'qwen']);
    const c = JSON.parse(repo.read('.claude/settings.json'));
    c.hooks.PreToolUse[0].matcher = 'Write|Bash';
    repo.write('.claude/settings.json', JSON.stringify(c));
    const q = JSON.parse(repo.read('.qwen/settings.json'));
    q.hooks.PreToolUse[0].matcher = 'write_file|run_shell_command';
    repo.write('.qwen/settings.json', JSON.stringify(q));
    expect(agent(repo, 'claude')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/does not run for Edit, MultiEdit/),
      hint: expect.stringContaining('guard init --agent claude'),
    });
    expect(agent(repo, 'qwen')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/does not run for edit, replace/),
    });
    // a second group of guard's whose matcher covers the rest makes it whole again
    c.hooks.PreToolUse.push({
      matcher: 'Edit|MultiEdit|NotebookEdit|PowerShell|Monitor|mcp__.*',
      hooks: c.hooks.PreToolUse[0].hooks,
    });
    repo.write('.claude/settings.json', JSON.stringify(c));
    expect(agent(repo, 'claude')).toMatchObject({ ok: true });
  });

  it("disableAllHooks in any file Continue CLI reads; Droid's hooks.json without guard", () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.guard(['init', '--agent', 'continue', 'droid']);
    repo.write('.claude/settings.local.json', '{"disableAllHooks": true}');
    expect(agent(repo, 'continue')).toMatchObject({
      ok: false,
      message: expect.stringContaining('.claude/settings.local.json'),
    });
    repo.write('.factory/hooks.json', '{"hooks": {}}');
    expect(agent(repo, 'droid')).toMatchObject({
      ok: false,
      message: expect.stringContaining('.factory/hooks.json exists without guard'),
      hint: "guard init --agent droid (it writes guard's hook into both)",
    });
    repo.guard(['init', '--agent', 'droid']);
    expect(agent(repo, 'droid')).toMatchObject({ ok: true });
  });

  it('Copilot: a folder it does not trust skips the repository hooks in copilot -p', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.guard(['init', '--agent', 'copilot']);
    const home = path.join(repo.dir, '.git', 'home');
    mkdirSync(path.join(home, '.copilot'), { recursive: true });
    expect(agent(repo, 'copilot', { HOME: home })).toMatchObject({
      ok: false,
      message: expect.stringContaining('not one: the hook is skipped silently'),
      hint: expect.stringContaining('--trust-folder'),
    });
    // as Copilot 1.0.102 writes it: comment lines first
    writeFileSync(
      path.join(home, '.copilot', 'config.json'),
      `// User settings belong in settings.json.\n// This file is managed automatically.\n${JSON.stringify({ trusted_folders: [path.dirname(repo.dir)] })}`,
    );
    expect(agent(repo, 'copilot', { HOME: home })).toMatchObject({ ok: true });
    writeFileSync(path.join(home, '.copilot', 'config.json'), '{}');
    expect(
      agent(repo, 'copilot', { HOME: home, GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS: 'true' }),
    ).toMatchObject({ ok: true });
  });
});

describe('the command the harness configs run', () => {
  it("under yarn Plug'n'Play (no node_modules/.bin) runs the project's guard through yarn", async () => {
    const { guardCommand } = await import('../../src/flows/setup/agents.js');
    const repo = makeRepo({ 'a.txt': 'a\n', '.pnp.cjs': '// yarn pnp\n' });
    expect(guardCommand(repo.dir, 'CLAUDE_PROJECT_DIR')).toBe(
      'cd "$CLAUDE_PROJECT_DIR" && yarn guard',
    );
    expect(guardCommand(repo.dir, null)).toBe(`cd ${repo.dir} && yarn guard`); // a plain temp path needs no quotes
  });
});

describe("the harness configs are guard's own gate", () => {
  it("a write tool of the agent may not rewrite any harness's hook config (disableAllHooks, a narrower matcher)", () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const claudeStyle = (h: string, tool: string, input: object) =>
      JSON.stringify({
        session_id: 's',
        conversation_id: 's',
        workspace_roots: [repo.dir],
        cwd: repo.dir,
        hook_event_name: 'PreToolUse',
        permission_mode: 'yolo',
        tool_name: tool,
        tool_input: input,
      });
    const cases: [string, string][] = [
      [
        'qwen',
        claudeStyle('qwen', 'write_file', {
          file_path: path.join(repo.dir, '.qwen/settings.json'),
          content: '{"disableAllHooks": true}',
        }),
      ],
      [
        'droid',
        claudeStyle('droid', 'Create', {
          file_path: path.join(repo.dir, '.factory/hooks.json'),
          content: '{"hooks": {}}',
        }),
      ],
      [
        'droid',
        claudeStyle('droid', 'Create', {
          file_path: path.join(repo.dir, '.factory/settings.json'),
          content: '{}',
        }),
      ],
      [
        'auggie',
        claudeStyle('auggie', 'save-file', { path: '.augment/settings.json', file_content: '{}' }),
      ],
      [
        'crush',
        claudeStyle('crush', 'write', {
          file_path: path.join(repo.dir, 'crush.json'),
          content: '{}',
        }),
      ],
      [
        'continue',
        claudeStyle('continue', 'Write', {
          filepath: path.join(repo.dir, '.continue/settings.json'),
          content: '{"disableAllHooks": true}',
        }),
      ],
      [
        'copilot',
        JSON.stringify({
          sessionId: 's',
          cwd: repo.dir,
          toolName: 'apply_patch',
          toolArgs: '*** Begin Patch\n*** Add File: .github/hooks/guard.json\n+{}\n*** End Patch\n',
        }),
      ],
    ];
    for (const [h, payload] of cases) {
      const r = repo.guard(['hook', h], { input: payload });
      expect(r.code, `${h}: ${r.stderr}`).toBe(0);
      const out = JSON.parse(r.stdout);
      const decision = out.hookSpecificOutput?.permissionDecision ?? out.permissionDecision;
      expect(decision, `${h}: ${r.stdout}`).toBe('deny');
      expect(JSON.stringify(out)).toContain('own gate');
    }
  });
});
