import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { clineAction } from '../../src/harness/cline.js';
import { TRANSLATORS } from '../../src/harness/index.js';
import { opencodeAction, opencodeCwd } from '../../src/harness/opencode.js';
import { PayloadError, type Outcome } from '../../src/harness/types.js';

const SAMPLES = new URL('../../fixtures/harness-samples', import.meta.url).pathname;
const sample = (name: string) => readFileSync(`${SAMPLES}/${name}.json`, 'utf8');
const env = {};

describe('Claude Code payloads (recorded from claude 2.1.330)', () => {
  it('Write: path and whole content; bypassPermissions means nobody to ask', () => {
    const e = TRANSLATORS.claude.translate(sample('claude-Write-PreToolUse'), env);
    expect(e).toMatchObject({
      harness: 'claude',
      phase: 'pre',
      event: 'PreToolUse',
      tool: 'Write',
      sessionId: '156d3256-0874-40e4-9054-ef9cb38ddb8a',
      toolCallId: 'toolu_mwt1s18z2',
      cwd: '/home/dev/project',
      canAsk: false,
    });
    expect(e.action).toEqual({
      kind: 'write',
      files: [
        {
          path: '/home/dev/project/hello.txt',
          change: { kind: 'content', content: 'hello from the rig\n' },
        },
      ],
    });
  });
  it('Edit: one exact-string edit, replace_all read', () => {
    const e = TRANSLATORS.claude.translate(sample('claude-Edit-PreToolUse'), env);
    expect(e.action).toEqual({
      kind: 'write',
      files: [
        {
          path: '/home/dev/project/seed.txt',
          change: {
            kind: 'edits',
            edits: [{ oldString: 'beta', newString: 'BETA', replaceAll: false }],
          },
        },
      ],
    });
  });
  it('PostToolUseFailure (after a command that exits non-zero) is the post event, answered under its own name', () => {
    const p = JSON.parse(sample('claude-Bash-PostToolUse'));
    p.hook_event_name = 'PostToolUseFailure';
    const e = TRANSLATORS.claude.translate(JSON.stringify(p), env);
    expect(e).toMatchObject({
      phase: 'post',
      event: 'PostToolUseFailure',
      action: { kind: 'shell' },
    });
    const a = JSON.parse(
      TRANSLATORS.claude.answer({ kind: 'inform', message: 'lost' }, 'post', e.event).stdout,
    );
    expect(a.hookSpecificOutput).toEqual({
      hookEventName: 'PostToolUseFailure',
      additionalContext: 'lost',
    });
    expect(
      TRANSLATORS.cursor.translate(
        JSON.stringify({
          hook_event_name: 'postToolUseFailure',
          conversation_id: 'c',
          workspace_roots: ['/w'],
          tool_name: 'Shell',
          tool_input: { command: 'x' },
        }),
        env,
      ).phase,
    ).toBe('post');
  });
  it('run_in_background (Claude) and is_background (Gemini) mark a background shell call', () => {
    const p = JSON.parse(sample('claude-Bash-PreToolUse'));
    p.tool_input.run_in_background = true;
    expect(TRANSLATORS.claude.translate(JSON.stringify(p), env).action).toMatchObject({
      kind: 'shell',
      background: true,
    });
    const g = JSON.parse(sample('gemini-run_shell_command-BeforeTool'));
    g.tool_input.is_background = true;
    expect(TRANSLATORS.gemini.translate(JSON.stringify(g), env).action).toMatchObject({
      kind: 'shell',
      background: true,
    });
  });
  it('Monitor (always in the background) and PowerShell are shell calls; a Monitor of a WebSocket runs nothing (adv2)', () => {
    const as = (tool: string, input: object) => {
      const p = JSON.parse(sample('claude-Bash-PreToolUse'));
      p.tool_name = tool;
      p.tool_input = input;
      return JSON.stringify(p);
    };
    expect(
      TRANSLATORS.claude.translate(as('Monitor', { command: 'rm -r src', timeout_ms: 5 }), env)
        .action,
    ).toEqual({ kind: 'shell', command: 'rm -r src', background: true });
    expect(
      TRANSLATORS.claude.translate(as('PowerShell', { command: 'Remove-Item -Recurse src' }), env)
        .action,
    ).toEqual({ kind: 'shell', command: 'Remove-Item -Recurse src' });
    expect(
      TRANSLATORS.claude.translate(as('Monitor', { ws: 'ws://127.0.0.1:9/x' }), env).action,
    ).toEqual({ kind: 'other' });
    // neither field, or a command of another kind (beside a ws or not): refused as a payload error
    for (const input of [{}, { command: 5 }, { command: ['rm'], ws: 'ws://x' }, { ws: 5 }])
      expect(() => TRANSLATORS.claude.translate(as('Monitor', input), env)).toThrow(PayloadError);
  });
  it('Bash before and after', () => {
    expect(TRANSLATORS.claude.translate(sample('claude-Bash-PreToolUse'), env)).toMatchObject({
      phase: 'pre',
      action: { kind: 'shell', command: 'echo shell-ran > shell-ran.txt && ls -a' },
    });
    expect(TRANSLATORS.claude.translate(sample('claude-Bash-PostToolUse'), env)).toMatchObject({
      phase: 'post',
      event: 'PostToolUse',
      toolCallId: 'toolu_mwt1s1p54',
    });
  });
  it('default mode can ask in the terminal UI only; print mode (sdk-cli) or an unknown entry point cannot', () => {
    const p = JSON.parse(sample('claude-Write-PreToolUse'));
    p.permission_mode = 'default';
    expect(
      TRANSLATORS.claude.translate(JSON.stringify(p), { CLAUDE_CODE_ENTRYPOINT: 'cli' }).canAsk,
    ).toBe(true);
    expect(
      TRANSLATORS.claude.translate(JSON.stringify(p), { CLAUDE_CODE_ENTRYPOINT: 'sdk-cli' }).canAsk,
    ).toBe(false);
    expect(TRANSLATORS.claude.translate(JSON.stringify(p), {}).canAsk).toBe(false);
  });
  it('MultiEdit (older builds): edits in order', () => {
    const p = JSON.parse(sample('claude-Edit-PreToolUse'));
    p.tool_name = 'MultiEdit';
    p.tool_input = {
      file_path: '/p/a.ts',
      edits: [
        { old_string: 'a', new_string: 'b' },
        { old_string: 'c', new_string: 'd', replace_all: true },
      ],
    };
    expect(TRANSLATORS.claude.translate(JSON.stringify(p), env).action).toEqual({
      kind: 'write',
      files: [
        {
          path: '/p/a.ts',
          change: {
            kind: 'edits',
            edits: [
              { oldString: 'a', newString: 'b', replaceAll: false },
              { oldString: 'c', newString: 'd', replaceAll: true },
            ],
          },
        },
      ],
    });
  });
  it('another tool is none of guard business', () => {
    const p = JSON.parse(sample('claude-Write-PreToolUse'));
    p.tool_name = 'Read';
    expect(TRANSLATORS.claude.translate(JSON.stringify(p), env).action).toEqual({ kind: 'other' });
  });
});

describe('Gemini CLI payloads (recorded from gemini 0.61.0)', () => {
  it('write_file, replace, run_shell_command; no tool-call id; never asks', () => {
    const w = TRANSLATORS.gemini.translate(sample('gemini-write_file-BeforeTool'), env);
    expect(w).toMatchObject({
      harness: 'gemini',
      phase: 'pre',
      sessionId: 'e71295c7-3b7a-4e9b-8048-d57adad59cb5',
      toolCallId: null,
      canAsk: false,
    });
    expect(w.action).toEqual({
      kind: 'write',
      files: [
        {
          path: '/home/dev/project/hello.txt',
          change: { kind: 'content', content: 'hello from the rig\n' },
        },
      ],
    });
    expect(TRANSLATORS.gemini.translate(sample('gemini-replace-BeforeTool'), env).action).toEqual({
      kind: 'write',
      files: [
        {
          path: '/home/dev/project/seed.txt',
          change: {
            kind: 'edits',
            edits: [{ oldString: 'beta', newString: 'BETA', replaceAll: false }],
          },
        },
      ],
    });
    expect(
      TRANSLATORS.gemini.translate(sample('gemini-run_shell_command-AfterTool'), env),
    ).toMatchObject({
      phase: 'post',
      action: { kind: 'shell', command: 'echo shell-ran > shell-ran.txt && ls -a' },
    });
  });
});

describe('Codex payloads (recorded from codex 0.169.0)', () => {
  it('apply_patch Add File', () => {
    const e = TRANSLATORS.codex.translate(sample('codex-apply_patch-PreToolUse'), env);
    expect(e).toMatchObject({
      harness: 'codex',
      phase: 'pre',
      toolCallId: 'call_mwt1t0kw1',
      canAsk: false,
    });
    expect(e.action).toEqual({
      kind: 'write',
      files: [{ path: 'hello.txt', change: { kind: 'content', content: 'hello from the rig\n' } }],
    });
  });
  it('apply_patch Update File', () => {
    const e = TRANSLATORS.codex.translate(sample('codex-apply_patch_update-PreToolUse'), env);
    expect(e.action).toEqual({
      kind: 'write',
      files: [
        {
          path: 'seed.txt',
          change: {
            kind: 'chunks',
            chunks: [{ context: null, oldLines: ['beta'], newLines: ['BETA'], endOfFile: false }],
          },
        },
      ],
    });
  });
  it('Bash, and a patch sent through Bash as a heredoc is a write', () => {
    expect(TRANSLATORS.codex.translate(sample('codex-Bash-PostToolUse'), env)).toMatchObject({
      phase: 'post',
      action: { kind: 'shell' },
    });
    const p = JSON.parse(sample('codex-Bash-PreToolUse'));
    p.tool_input.command =
      "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: old.txt\n*** End Patch\nEOF\n";
    expect(TRANSLATORS.codex.translate(JSON.stringify(p), env).action).toEqual({
      kind: 'write',
      files: [{ path: 'old.txt', change: { kind: 'delete' } }],
    });
    p.tool_input.command =
      "cd sub && apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: n.txt\n+x\n*** End Patch\nPATCH";
    expect(TRANSLATORS.codex.translate(JSON.stringify(p), env).action).toEqual({
      kind: 'write',
      files: [{ path: 'sub/n.txt', change: { kind: 'content', content: 'x\n' } }],
    });
  });
});

describe('Cursor, Cline, Copilot (shaped from their docs; field names unverified)', () => {
  it('Cursor preToolUse Write / StrReplace / Shell and legacy beforeShellExecution', () => {
    const base = {
      hook_event_name: 'preToolUse',
      conversation_id: 'conv-1',
      generation_id: 'gen-1',
      workspace_roots: ['/w'],
    };
    expect(
      TRANSLATORS.cursor.translate(
        JSON.stringify({
          ...base,
          tool_name: 'Write',
          tool_input: { file_path: '/w/a.ts', contents: 'x\n' },
        }),
        env,
      ),
    ).toMatchObject({
      harness: 'cursor',
      phase: 'pre',
      sessionId: 'conv-1',
      cwd: '/w',
      canAsk: false,
      action: {
        kind: 'write',
        files: [{ path: '/w/a.ts', change: { kind: 'content', content: 'x\n' } }],
      },
    });
    expect(
      TRANSLATORS.cursor.translate(
        JSON.stringify({
          ...base,
          tool_name: 'StrReplace',
          tool_input: { path: 'a.ts', old_string: 'a', new_string: 'b' },
        }),
        env,
      ).action,
    ).toMatchObject({ kind: 'write', files: [{ change: { kind: 'edits' } }] });
    expect(
      TRANSLATORS.cursor.translate(
        JSON.stringify({
          hook_event_name: 'beforeShellExecution',
          command: 'rm -rf src',
          cwd: '/w',
          conversation_id: 'c',
        }),
        env,
      ),
    ).toMatchObject({ phase: 'pre', action: { kind: 'shell', command: 'rm -rf src' } });
  });
  it('Cline CLI shell-hook payloads (recorded from cline 3.0.65): tool_call / tool_result, the CLI tool names', () => {
    const patch = TRANSLATORS.cline.translate(sample('cline-apply_patch-PreToolUse'), env);
    expect(patch).toMatchObject({
      harness: 'cline',
      phase: 'pre',
      event: 'tool_call',
      tool: 'apply_patch',
      sessionId: 'conv_1795520906948_lpfanu0',
      toolCallId: 'call_mwumsexq3',
      cwd: '/home/dev/project',
      canAsk: false,
    });
    expect(patch.action).toMatchObject({
      kind: 'write',
      files: [{ path: 'seed.txt', change: { kind: 'chunks' } }],
    });
    expect(TRANSLATORS.cline.translate(sample('cline-editor-PreToolUse'), env).action).toEqual({
      kind: 'write',
      files: [
        {
          path: '/home/dev/project/notes.py',
          change: {
            kind: 'edits',
            edits: [
              {
                oldString: 'note line 7\n',
                newString: 'note line 7 (kept by the agent)\n',
                replaceAll: false,
              },
            ],
          },
        },
      ],
    });
    expect(
      TRANSLATORS.cline.translate(sample('cline-run_commands-PostToolUse'), env),
    ).toMatchObject({
      phase: 'post',
      event: 'tool_result',
      toolCallId: 'call_mwumrwf53',
      action: { kind: 'shell', command: 'echo shell-ran > shell-ran.txt && ls -a' },
    });
    // a read is no business of guard's (the old translator refused it: every read failed closed)
    const read = JSON.parse(sample('cline-editor-PreToolUse'));
    read.tool_call = { id: 'r', name: 'read_files', input: { paths: ['a'] } };
    expect(TRANSLATORS.cline.translate(JSON.stringify(read), env).action).toEqual({
      kind: 'other',
    });
  });
  it('Cline editor: insert_line, create (no old_text), several commands', () => {
    expect(clineAction('editor', { path: 'a', new_text: 'x', insert_line: 3 })).toEqual({
      kind: 'write',
      files: [{ path: 'a', change: { kind: 'insert', line: 3, text: 'x' } }],
    });
    expect(clineAction('editor', { path: 'a', new_text: 'x', old_text: null })).toEqual({
      kind: 'write',
      files: [
        {
          path: 'a',
          change: { kind: 'edits', edits: [{ oldString: '', newString: 'x', replaceAll: false }] },
        },
      ],
    });
    expect(clineAction('run_commands', { commands: ['a', 'b'] })).toEqual({
      kind: 'shell',
      command: 'a\nb',
    });
    expect(() => clineAction('run_commands', { commands: [1] })).toThrow(PayloadError);
    expect(() => clineAction('editor', { path: 'a', new_text: 'x', insert_line: '2' })).toThrow(
      /insert_line/,
    );
  });
  it('opencode / Kilo tool args (from the opencode 1.18.33 schemas)', () => {
    expect(opencodeAction('write', { filePath: '/w/a', content: 'x' })).toEqual({
      kind: 'write',
      files: [{ path: '/w/a', change: { kind: 'content', content: 'x' } }],
    });
    expect(
      opencodeAction('edit', { filePath: 'a', oldString: 'o', newString: 'n', replaceAll: true }),
    ).toEqual({
      kind: 'write',
      files: [
        {
          path: 'a',
          change: { kind: 'edits', edits: [{ oldString: 'o', newString: 'n', replaceAll: true }] },
        },
      ],
    });
    expect(
      opencodeAction('apply_patch', {
        patchText: '*** Begin Patch\n*** Delete File: a\n*** End Patch',
      }),
    ).toEqual({ kind: 'write', files: [{ path: 'a', change: { kind: 'delete' } }] });
    expect(opencodeAction('bash', { command: 'ls', description: 'd' })).toEqual({
      kind: 'shell',
      command: 'ls',
    });
    expect(opencodeAction('read', { filePath: 'a' })).toEqual({ kind: 'other' });
    // an MCP server's tool (or a custom one): judged as a shell call, as Claude's mcp__* (adv3)
    expect(opencodeAction('fs_write_file', { path: 'a', content: 'x' })).toEqual({
      kind: 'shell',
      command: 'fs_write_file {"path":"a","content":"x"}',
    });
    expect(opencodeAction('todowrite', { todos: [] })).toEqual({ kind: 'other' });
    expect(opencodeCwd('bash', { workdir: 'sub' }, '/w')).toBe('/w/sub');
    expect(opencodeCwd('bash', { workdir: '/x' }, '/w')).toBe('/x');
    expect(opencodeCwd('write', { workdir: '/x' }, '/w')).toBe('/w');
    expect(() => opencodeAction('write', { filePath: 'a' })).toThrow(/args\.content is missing/);
  });
  it('Copilot toolArgs as a JSON string (older builds); toolResult marks the post event; never asks (test/unit/harness-table.test.ts has the recorded ones)', () => {
    const e = TRANSLATORS.copilot.translate(
      JSON.stringify({
        timestamp: 1795425175675,
        cwd: '/w',
        toolName: 'create',
        toolArgs: JSON.stringify({ path: 'a.md', file_text: 'hi\n' }),
      }),
      env,
    );
    expect(e).toMatchObject({
      harness: 'copilot',
      phase: 'pre',
      cwd: '/w',
      canAsk: false,
      sessionId: 'copilot-2026-11-23',
      action: {
        kind: 'write',
        files: [{ path: 'a.md', change: { kind: 'content', content: 'hi\n' } }],
      },
    });
    const post = TRANSLATORS.copilot.translate(
      JSON.stringify({
        timestamp: 1,
        cwd: '/w',
        toolName: 'bash',
        toolArgs: '{"command":"ls"}',
        toolResult: { resultType: 'success' },
      }),
      env,
    );
    expect(post).toMatchObject({ phase: 'post', action: { kind: 'shell', command: 'ls' } });
  });
});

describe('bad payloads name what is wrong', () => {
  for (const [h, text, want] of [
    ['claude', '', /empty/],
    ['claude', '[1]', /not a JSON object/],
    [
      'claude',
      '{"hook_event_name":"PreToolUse","tool_name":"Write","session_id":"s","cwd":"/w","tool_input":{"file_path":"/w/a"}}',
      /tool_input\.content is missing/,
    ],
    ['gemini', '{"hook_event_name":"Nope"}', /neither BeforeTool nor AfterTool/],
    [
      'codex',
      '{"hook_event_name":"PreToolUse","tool_name":"apply_patch","session_id":"s","cwd":"/w","tool_input":{"command":"*** Begin Patch\\nrubbish\\n*** End Patch"}}',
      /patch line 2/,
    ],
    [
      'cline',
      '{"hookName":"PreToolUse","taskId":"t","workspaceRoots":["/w"]}',
      /neither tool_call nor tool_result/,
    ],
    [
      'cline',
      '{"hookName":"tool_call","taskId":"t","workspaceRoots":["/w"]}',
      /tool_call is missing/,
    ],
    ['copilot', '{"toolName":"bash","toolArgs":"{not json","cwd":"/w"}', /toolArgs/],
  ] as const) {
    it(`${h}: ${want}`, () => {
      expect(() => TRANSLATORS[h].translate(text, env)).toThrow(PayloadError);
      expect(() => TRANSLATORS[h].translate(text, env)).toThrow(want);
    });
  }
});

describe('answers in each protocol', () => {
  const deny: Outcome = { kind: 'deny', reason: 'R' };
  const ask: Outcome = { kind: 'ask', reason: 'Q' };
  const none: Outcome = { kind: 'none' };
  const inform: Outcome = { kind: 'inform', message: 'M' };
  const out = (h: keyof typeof TRANSLATORS, o: Outcome, phase: 'pre' | 'post' = 'pre') => {
    const a = TRANSLATORS[h].answer(o, phase);
    return { json: a.stdout ? JSON.parse(a.stdout) : null, code: a.exitCode, stderr: a.stderr };
  };
  it('Claude: hookSpecificOutput deny / ask; nothing for no opinion; additionalContext + systemMessage after', () => {
    expect(out('claude', deny)).toEqual({
      json: {
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'deny',
          permissionDecisionReason: 'R',
        },
      },
      code: 0,
      stderr: 'R\n',
    });
    expect(out('claude', ask).json.hookSpecificOutput.permissionDecision).toBe('ask');
    expect(out('claude', none)).toEqual({ json: null, code: 0, stderr: '' });
    expect(out('claude', inform, 'post').json).toEqual({
      systemMessage: 'M',
      hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'M' },
    });
  });
  it('Codex: ask becomes deny (Codex has no ask)', () => {
    expect(out('codex', ask).json).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: 'Q',
      },
    });
  });
  it('Gemini {decision, reason}', () => {
    expect(out('gemini', deny).json).toEqual({ decision: 'deny', reason: 'R' });
    expect(out('gemini', inform, 'post').json.hookSpecificOutput).toEqual({
      hookEventName: 'AfterTool',
      additionalContext: 'M',
    });
  });
  it('Cursor {permission, user_message, agent_message}', () => {
    expect(out('cursor', deny).json).toEqual({
      permission: 'deny',
      user_message: 'R',
      agent_message: 'R',
    });
    expect(out('cursor', ask).json.permission).toBe('ask');
    expect(out('cursor', none).json).toEqual({});
  });
  it('Cline {cancel, errorMessage}', () => {
    expect(out('cline', deny).json).toEqual({
      cancel: true,
      errorMessage: 'R',
      contextModification: 'R',
    });
    expect(out('cline', none).json).toEqual({ cancel: false });
    expect(out('cline', inform, 'post').json).toEqual({ cancel: false, contextModification: 'M' });
  });
  it('Copilot {permissionDecision, permissionDecisionReason}', () => {
    expect(out('copilot', deny).json).toEqual({
      permissionDecision: 'deny',
      permissionDecisionReason: 'R',
    });
    // Copilot -p turns an ask into a denial nobody can answer: guard denies and keeps the ref
    expect(out('copilot', ask).json.permissionDecision).toBe('deny');
  });
});
