/**
 * Harness-protocol transcripts: for each harness, a payload in (recorded
 * from the real binary where one ran here, else shaped from its package
 * source or docs, as each case says) and what guard reads from it and
 * answers. The Claude-style harnesses go through the one table
 * (src/harness/table.ts); Copilot through its own translator.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TRANSLATORS } from '../../src/harness/index.js';
import { ROWS, matcherOf } from '../../src/harness/table.js';
import { PayloadError, type HarnessName, type Outcome } from '../../src/harness/types.js';
import { MATCHERS, missedTools } from '../../src/flows/setup/agents.js';

const SAMPLES = new URL('../../fixtures/harness-samples', import.meta.url).pathname;
const sample = (name: string) => readFileSync(`${SAMPLES}/${name}.json`, 'utf8');
const env = {};
const deny: Outcome = { kind: 'deny', reason: 'R' };
const ask: Outcome = { kind: 'ask', reason: 'Q' };
const inform: Outcome = { kind: 'inform', message: 'M' };

/** A payload, what guard makes of it, and its answers to deny / ask / inform. */
function transcript(h: HarnessName, payload: string) {
  const e = TRANSLATORS[h].translate(payload, env);
  const a = (o: Outcome) => TRANSLATORS[h].answer(o, e.phase);
  return { e, deny: a(deny), ask: a(ask), inform: a(inform), none: a({ kind: 'none' }) };
}

const claudeDeny = (pre = 'PreToolUse') => ({
  stdout:
    JSON.stringify({
      hookSpecificOutput: {
        hookEventName: pre,
        permissionDecision: 'deny',
        permissionDecisionReason: 'R',
      },
    }) + '\n',
  stderr: 'R\n',
  exitCode: 0,
});
const claudeInform =
  JSON.stringify({
    systemMessage: 'M',
    hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'M' },
  }) + '\n';

describe('Copilot CLI 1.0.102 (recorded from the real binary)', () => {
  it('create {path, file_text} -> a whole-file write; deny, never ask', () => {
    const t = transcript('copilot', sample('copilot-create-preToolUse'));
    expect(t.e).toMatchObject({
      harness: 'copilot',
      phase: 'pre',
      event: 'preToolUse',
      tool: 'create',
      sessionId: '22cc34cc-8072-4eaf-9ba0-45d3b34b1dfa',
      cwd: '/home/dev/project',
      canAsk: false,
    });
    expect(t.e.action).toEqual({
      kind: 'write',
      files: [
        {
          path: '/home/dev/project/hello.txt',
          change: { kind: 'content', content: 'hello from the rig\n' },
        },
      ],
    });
    expect(t.deny).toEqual({
      stdout: '{"permissionDecision":"deny","permissionDecisionReason":"R"}\n',
      stderr: 'R\n',
      exitCode: 0,
    });
    // Copilot in -p turns `ask` into a denial addressed to a person, with no ref kept: guard never asks
    expect(JSON.parse(t.ask.stdout)).toEqual({
      permissionDecision: 'deny',
      permissionDecisionReason: 'Q',
    });
    expect(t.none.stdout).toBe('{}\n');
  });
  it('edit {path, old_str, new_str}; the truncating edit whose old text is the whole file', () => {
    expect(transcript('copilot', sample('copilot-edit-preToolUse')).e.action).toEqual({
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
    const t = transcript('copilot', sample('copilot-edit-preToolUse-truncate'));
    expect(t.e.action).toMatchObject({
      kind: 'write',
      files: [{ path: '/home/dev/project/state.py', change: { kind: 'edits' } }],
    });
  });
  it('apply_patch (GPT-5 models): toolArgs is the raw V4A patch, parsed like Codex', () => {
    const t = transcript('copilot', sample('copilot-apply_patch-preToolUse'));
    expect(t.e).toMatchObject({
      tool: 'apply_patch',
      sessionId: 'b46d8362-79dc-4134-bcb5-d1f5399f208f',
      canAsk: false,
    });
    expect(t.e.action).toEqual({
      kind: 'write',
      files: [
        {
          path: 'notes.py',
          change: {
            kind: 'chunks',
            chunks: [
              {
                context: null,
                oldLines: ['note line 7'],
                newLines: ['note line 7 (kept by the agent)'],
                endOfFile: false,
              },
            ],
          },
        },
      ],
    });
  });
  it('bash before and after; after, additionalContext reaches the model', () => {
    expect(transcript('copilot', sample('copilot-bash-preToolUse')).e.action).toEqual({
      kind: 'shell',
      command: 'echo shell-ran > shell-ran.txt && ls -a',
    });
    const post = transcript('copilot', sample('copilot-bash-postToolUse'));
    expect(post.e).toMatchObject({ phase: 'post', event: 'postToolUse' });
    expect(post.inform.stdout).toBe('{"additionalContext":"M"}\n');
    expect(transcript('copilot', sample('copilot-edit-postToolUse')).e.phase).toBe('post');
  });
  it('bash with mode "async" (recorded from 1.0.102): a background call; its after event comes at once', () => {
    const pre = transcript('copilot', sample('copilot-bash-async-preToolUse'));
    expect(pre.e.action).toEqual({
      kind: 'shell',
      command: 'sleep 3; rm big_module.py',
      background: true,
    });
    const post = transcript('copilot', sample('copilot-bash-async-postToolUse'));
    expect(post.e).toMatchObject({ phase: 'post', action: { kind: 'shell', background: true } });
    // detach (only with async) too; sync, or none, is not
    const as = (args: object) =>
      TRANSLATORS.copilot.translate(
        JSON.stringify({ ...JSON.parse(sample('copilot-bash-preToolUse')), toolArgs: args }),
        {},
      ).action;
    expect(as({ command: 'x', mode: 'async', detach: true })).toMatchObject({ background: true });
    expect(as({ command: 'x', detach: true })).toMatchObject({ background: true });
    expect(as({ command: 'x', mode: 'sync' })).toEqual({ kind: 'shell', command: 'x' });
    expect(as({ command: 'x' })).toEqual({ kind: 'shell', command: 'x' });
  });
  it('a sync bash past its initial wait (recorded from 1.0.102): the post event says it runs on', () => {
    const post = transcript('copilot', sample('copilot-bash-still-running-postToolUse'));
    expect(post.e).toMatchObject({
      phase: 'post',
      action: { kind: 'shell', command: 'sleep 36; rm big_module.py', stillRunning: true },
    });
    // a command that completed, and the before event, do not
    expect(transcript('copilot', sample('copilot-bash-postToolUse')).e.action).not.toHaveProperty(
      'stillRunning',
    );
    const p = JSON.parse(sample('copilot-bash-still-running-postToolUse'));
    delete p.toolResult;
    expect(TRANSLATORS.copilot.translate(JSON.stringify(p), {}).action).not.toHaveProperty(
      'stillRunning',
    );
  });
  it('the snake_case copy sent for PascalCase events (Write {path, file_text}, Bash)', () => {
    const w = transcript('copilot', sample('copilot-pascalcase-Write-PreToolUse'));
    expect(w.e).toMatchObject({
      phase: 'pre',
      event: 'PreToolUse',
      tool: 'Write',
      sessionId: '1518875b-09c2-4148-8e2f-b9e13551b374',
      action: { kind: 'write', files: [{ path: '/home/dev/project/hello.txt' }] },
    });
    expect(transcript('copilot', sample('copilot-pascalcase-Bash-PostToolUse')).e).toMatchObject({
      phase: 'post',
      action: { kind: 'shell' },
    });
  });
  it('older builds: toolArgs as a JSON object in a string; no sessionId: one stand-in per day', () => {
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
      sessionId: 'copilot-2026-11-23',
      action: {
        kind: 'write',
        files: [{ path: 'a.md', change: { kind: 'content', content: 'hi\n' } }],
      },
    });
  });
  it("a patch hidden in another tool's text is still read as a patch; other text fails closed", () => {
    const patch = '*** Begin Patch\n*** Delete File: src/a.py\n*** End Patch\n';
    expect(
      TRANSLATORS.copilot.translate(
        JSON.stringify({ cwd: '/w', toolName: 'apply_patch', toolArgs: { input: patch } }),
        env,
      ).action,
    ).toEqual({ kind: 'write', files: [{ path: 'src/a.py', change: { kind: 'delete' } }] });
    expect(() =>
      TRANSLATORS.copilot.translate(
        JSON.stringify({ cwd: '/w', toolName: 'create', toolArgs: 'rm -rf /' }),
        env,
      ),
    ).toThrow(/toolArgs of create is text/);
    expect(() =>
      TRANSLATORS.copilot.translate(
        JSON.stringify({
          cwd: '/w',
          toolName: 'apply_patch',
          toolArgs: '*** Begin Patch\nnonsense\n*** End Patch',
        }),
        env,
      ),
    ).toThrow(PayloadError);
  });
});

describe('Qwen Code 0.24.4 (recorded from the real binary)', () => {
  it('write_file, edit, run_shell_command; yolo: deny, never ask', () => {
    const w = transcript('qwen', sample('qwen-write_file-PreToolUse'));
    expect(w.e).toMatchObject({
      harness: 'qwen',
      phase: 'pre',
      tool: 'write_file',
      sessionId: '8d86cef8-b934-4230-b94e-e21040cee589',
      cwd: '/home/dev/project',
      canAsk: false,
    });
    expect(w.e.action).toEqual({
      kind: 'write',
      files: [{ path: '/home/dev/project/new.txt', change: { kind: 'content', content: 'new\n' } }],
    });
    expect(w.deny).toEqual(claudeDeny());
    expect(JSON.parse(w.ask.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
    expect(transcript('qwen', sample('qwen-edit-PreToolUse')).e.action).toEqual({
      kind: 'write',
      files: [
        {
          path: '/home/dev/project/seed.txt',
          change: { kind: 'edits', edits: [{ oldString: 'b', newString: 'B', replaceAll: false }] },
        },
      ],
    });
    expect(transcript('qwen', sample('qwen-run_shell_command-PreToolUse')).e).toMatchObject({
      toolCallId: expect.stringMatching(/^toolu_/),
      action: { kind: 'shell', command: 'echo hi > shell.txt; cat seed.txt' },
    });
    const post = transcript('qwen', sample('qwen-run_shell_command-PostToolUse'));
    expect(post.e.phase).toBe('post');
    expect(post.inform.stdout).toBe(claudeInform);
  });
  it('PostToolUseFailure (a command that failed) is a post event too; replace is the old name of edit', () => {
    const p = JSON.parse(sample('qwen-run_shell_command-PostToolUse'));
    p.hook_event_name = 'PostToolUseFailure';
    p.error = 'exit 127';
    expect(TRANSLATORS.qwen.translate(JSON.stringify(p), env)).toMatchObject({
      phase: 'post',
      action: { kind: 'shell' },
    });
    const e = JSON.parse(sample('qwen-edit-PreToolUse'));
    e.tool_name = 'replace';
    e.tool_input.replace_all = true;
    expect(TRANSLATORS.qwen.translate(JSON.stringify(e), env).action).toMatchObject({
      files: [{ change: { edits: [{ replaceAll: true }] } }],
    });
  });
});

describe('Continue CLI 1.5.47 (package source; its binary runs no hook, see harness-real-chat)', () => {
  const base = {
    session_id: 's-1',
    transcript_path: '/t',
    cwd: '/w',
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
  };
  it('Write says filepath: read through the Claude row too (Continue reads .claude/settings.json)', () => {
    for (const h of ['claude', 'continue'] as const) {
      const t = transcript(
        h,
        JSON.stringify({
          ...base,
          tool_name: 'Write',
          tool_input: { filepath: '/w/a.py', content: 'x\n' },
        }),
      );
      expect(t.e.action).toEqual({
        kind: 'write',
        files: [{ path: '/w/a.py', change: { kind: 'content', content: 'x\n' } }],
      });
      expect(t.deny).toEqual(claudeDeny());
    }
    // Continue has nobody to ask in -p and no ask of its own
    expect(
      TRANSLATORS.continue.translate(
        JSON.stringify({ ...base, tool_name: 'Bash', tool_input: { command: 'ls' } }),
        env,
      ).canAsk,
    ).toBe(false);
  });
});

describe('Auggie 0.36.0 (shaped from its package source: not run, it needs an Augment login)', () => {
  const base = {
    hook_event_name: 'PreToolUse',
    conversation_id: 'conv-7',
    workspace_roots: ['/w'],
    is_mcp_tool: false,
  };
  const t = (tool_name: string, tool_input: object) =>
    transcript('auggie', JSON.stringify({ ...base, tool_name, tool_input }));
  it('save-file adds the final newline unless told not to; session and folder from conversation_id and workspace_roots', () => {
    const w = t('save-file', { path: 'a.py', file_content: 'x' });
    expect(w.e).toMatchObject({
      harness: 'auggie',
      sessionId: 'conv-7',
      cwd: '/w',
      toolCallId: null,
      canAsk: false,
    });
    expect(w.e.action).toEqual({
      kind: 'write',
      files: [{ path: 'a.py', change: { kind: 'content', content: 'x\n' } }],
    });
    expect(
      t('save-file', { path: 'a.py', file_content: 'x', add_last_line_newline: false }).e.action,
    ).toMatchObject({ files: [{ change: { content: 'x' } }] });
    expect(w.deny).toEqual(claudeDeny());
  });
  it('str-replace-editor: numbered edits in order; insert removes nothing', () => {
    expect(
      t('str-replace-editor', {
        command: 'str_replace',
        path: 'a.py',
        old_str_1: 'a',
        new_str_1: 'b',
        old_str_start_line_number_1: 1,
        old_str_end_line_number_1: 1,
        old_str_2: 'c',
        new_str_2: '',
      }).e.action,
    ).toEqual({
      kind: 'write',
      files: [
        {
          path: 'a.py',
          change: {
            kind: 'edits',
            edits: [
              { oldString: 'a', newString: 'b', replaceAll: false },
              { oldString: 'c', newString: '', replaceAll: false },
            ],
          },
        },
      ],
    });
    expect(
      t('str-replace-editor', { command: 'str_replace', path: 'a.py', old_str: 'a', new_str: 'b' })
        .e.action,
    ).toMatchObject({ files: [{ change: { edits: [{ oldString: 'a' }] } }] });
    expect(
      t('str-replace-editor', { command: 'insert', path: 'a.py', insert_line_1: 3, new_str_1: 'x' })
        .e.action,
    ).toEqual({ kind: 'other' });
    // an old_str without its new_str, a gap in the numbers, a lone new_str_N: fail closed, never a silent pass
    expect(() =>
      t('str-replace-editor', { command: 'str_replace', path: 'a.py', old_str_1: 'a' }),
    ).toThrow(/not pairs/);
    expect(() =>
      t('str-replace-editor', {
        command: 'str_replace',
        path: 'a.py',
        old_str_1: 'a',
        new_str_1: 'b',
        old_str_3: 'the whole file',
        new_str_3: '',
      }),
    ).toThrow(/not pairs/);
    expect(() =>
      t('str-replace-editor', {
        command: 'str_replace',
        path: 'a.py',
        old_str_1: 'a',
        new_str_1: 'b',
        new_str_2: 'x',
      }),
    ).toThrow(/not pairs/);
    expect(() =>
      t('str-replace-editor', {
        command: 'str_replace',
        path: 'a.py',
        old_str_1: 7,
        new_str_1: 'b',
      }),
    ).toThrow(PayloadError);
  });
  it('apply_patch {input}, remove-files {file_paths}, launch-process {command}', () => {
    expect(
      t('apply_patch', { input: '*** Begin Patch\n*** Add File: n.py\n+x\n*** End Patch' }).e
        .action,
    ).toEqual({
      kind: 'write',
      files: [{ path: 'n.py', change: { kind: 'content', content: 'x\n' } }],
    });
    expect(t('remove-files', { file_paths: ['a.py', 'b.py'] }).e.action).toEqual({
      kind: 'write',
      files: [
        { path: 'a.py', change: { kind: 'delete' } },
        { path: 'b.py', change: { kind: 'delete' } },
      ],
    });
    expect(
      t('launch-process', {
        command: 'git checkout -- .',
        wait: true,
        max_wait_seconds: 60,
        cwd: '/w',
      }).e.action,
    ).toEqual({ kind: 'shell', command: 'git checkout -- .' });
    expect(t('view', { path: 'a.py' }).e.action).toEqual({ kind: 'other' });
  });
});

describe('Factory Droid 0.225.2 (recorded from the real binary)', () => {
  it('Create, Edit (change_all), Execute; no tool-call id; deny, never ask', () => {
    const c = transcript('droid', sample('droid-Create-PreToolUse'));
    expect(c.e).toMatchObject({
      harness: 'droid',
      phase: 'pre',
      tool: 'Create',
      sessionId: '006c01c5-d098-4ae9-bf23-f4bc0d6c1013',
      cwd: '/home/dev/project',
      toolCallId: null,
      canAsk: false,
    });
    expect(c.e.action).toEqual({
      kind: 'write',
      files: [{ path: '/home/dev/project/new.txt', change: { kind: 'content', content: 'new\n' } }],
    });
    expect(c.deny).toEqual(claudeDeny());
    const e = JSON.parse(sample('droid-Edit-PreToolUse'));
    expect(TRANSLATORS.droid.translate(JSON.stringify(e), env).action).toEqual({
      kind: 'write',
      files: [
        {
          path: '/home/dev/project/seed.txt',
          change: { kind: 'edits', edits: [{ oldString: 'b', newString: 'B', replaceAll: false }] },
        },
      ],
    });
    e.tool_input.change_all = true;
    expect(TRANSLATORS.droid.translate(JSON.stringify(e), env).action).toMatchObject({
      files: [{ change: { edits: [{ replaceAll: true }] } }],
    });
    expect(transcript('droid', sample('droid-Execute-PreToolUse')).e.action).toEqual({
      kind: 'shell',
      command: 'echo hi > shell.txt; cat seed.txt',
    });
    const post = transcript('droid', sample('droid-Execute-PostToolUse'));
    expect(post.e.phase).toBe('post');
    expect(post.inform.stdout).toBe(claudeInform);
  });
});

describe('Factory Droid (docs) and Crush (from its docs only: unverified)', () => {
  const base = {
    session_id: 's',
    transcript_path: '/t',
    cwd: '/w',
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
  };
  it('Droid Create / Edit / Execute', () => {
    const c = transcript(
      'droid',
      JSON.stringify({
        ...base,
        tool_name: 'Create',
        tool_input: { file_path: '/w/a.py', content: 'x\n' },
      }),
    );
    expect(c.e.action).toMatchObject({ kind: 'write', files: [{ path: '/w/a.py' }] });
    expect(c.deny).toEqual(claudeDeny());
    expect(
      transcript(
        'droid',
        JSON.stringify({
          ...base,
          tool_name: 'Edit',
          tool_input: { file_path: '/w/a.py', old_str: 'a', new_str: 'b' },
        }),
      ).e.action,
    ).toMatchObject({ files: [{ change: { edits: [{ oldString: 'a', newString: 'b' }] } }] });
    expect(
      transcript(
        'droid',
        JSON.stringify({ ...base, tool_name: 'Execute', tool_input: { command: 'rm -rf src' } }),
      ).e.action,
    ).toEqual({ kind: 'shell', command: 'rm -rf src' });
  });
  it('Crush: the payload shapes its source has had (hook_event_name, event, event_type with working_dir)', () => {
    const input = { tool_name: 'write', tool_input: { file_path: '/w/a.py', content: 'x\n' } };
    for (const envelope of [
      base,
      { event: 'PreToolUse', session_id: 's', cwd: '/w' },
      { event_type: 'pre_tool_use', session_id: 's', working_dir: '/w' },
    ]) {
      expect(transcript('crush', JSON.stringify({ ...envelope, ...input })).e).toMatchObject({
        phase: 'pre',
        cwd: '/w',
        action: { kind: 'write' },
      });
    }
    expect(
      transcript(
        'crush',
        JSON.stringify({
          event_type: 'post_tool_use',
          session_id: 's',
          working_dir: '/w',
          tool_name: 'bash',
          tool_input: { command: 'ls' },
        }),
      ).e.phase,
    ).toBe('post');
  });
  it('Crush write / edit / bash', () => {
    expect(
      transcript(
        'crush',
        JSON.stringify({
          ...base,
          tool_name: 'write',
          tool_input: { file_path: '/w/a.py', content: 'x\n' },
        }),
      ).e.action,
    ).toMatchObject({ kind: 'write' });
    expect(
      transcript(
        'crush',
        JSON.stringify({ ...base, tool_name: 'bash', tool_input: { command: 'ls' } }),
      ).e.action,
    ).toEqual({ kind: 'shell', command: 'ls' });
  });
});

describe('the table itself', () => {
  const base = {
    session_id: 's',
    cwd: '/w',
    conversation_id: 'c',
    workspace_roots: ['/w'],
    hook_event_name: 'PreToolUse',
  };
  it('a tool name that is a property of every object is no tool (no prototype lookup)', () => {
    for (const name of Object.keys(ROWS) as (keyof typeof ROWS)[]) {
      for (const tool of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
        expect(
          TRANSLATORS[name].translate(
            JSON.stringify({ ...base, tool_name: tool, tool_input: {} }),
            env,
          ).action,
        ).toEqual({ kind: 'other' });
      }
    }
  });
  it('every row: its events, its own session/folder fields, wrong types fail closed naming the field', () => {
    for (const [name, row] of Object.entries(ROWS)) {
      const h = name as keyof typeof ROWS;
      const bad = { ...base, hook_event_name: 'Nope', tool_name: 'x', tool_input: {} };
      expect(() => TRANSLATORS[h].translate(JSON.stringify(bad), env)).toThrow(
        /hook_event_name "Nope"/,
      );
      const shell = Object.entries(row.tools).find(([, s]) => s.kind === 'shell')!;
      expect(() =>
        TRANSLATORS[h].translate(
          JSON.stringify({
            ...base,
            tool_name: shell[0],
            tool_input: { command: ['rm', '-rf', '/'] },
          }),
          env,
        ),
      ).toThrow(/tool_input\.command is not a string/);
      expect(() =>
        TRANSLATORS[h].translate(
          JSON.stringify({ ...base, tool_name: shell[0], tool_input: 'rm -rf /' }),
          env,
        ),
      ).toThrow(/tool_input is not an object/);
      for (const post of row.events.post)
        expect(
          TRANSLATORS[h].translate(
            JSON.stringify({
              ...base,
              hook_event_name: post,
              tool_name: shell[0],
              tool_input: { command: 'ls' },
            }),
            env,
          ).phase,
        ).toBe('post');
    }
  });
  it('two spellings of one field with different values fail closed (the model writes the arguments: guard must judge the file the harness writes)', () => {
    const base2 = {
      session_id: 's',
      cwd: '/w',
      hook_event_name: 'PreToolUse',
      permission_mode: 'default',
    };
    // Continue reads `filepath`, Claude Code `file_path`: a Write carrying both could show guard the harmless one
    for (const h of ['claude', 'continue'] as const) {
      expect(() =>
        TRANSLATORS[h].translate(
          JSON.stringify({
            ...base2,
            tool_name: 'Write',
            tool_input: { file_path: '/w/notes.txt', filepath: '/w/state.py', content: '' },
          }),
          env,
        ),
      ).toThrow(/both file_path and filepath/);
      // the same value twice is no ambiguity
      expect(
        TRANSLATORS[h].translate(
          JSON.stringify({
            ...base2,
            tool_name: 'Write',
            tool_input: { file_path: '/w/a', filepath: '/w/a', content: '' },
          }),
          env,
        ).action,
      ).toMatchObject({ kind: 'write' });
    }
    expect(() =>
      TRANSLATORS.copilot.translate(
        JSON.stringify({
          cwd: '/w',
          toolName: 'create',
          toolArgs: { path: '/w/notes.txt', file_path: '/w/state.py', file_text: '' },
        }),
        env,
      ),
    ).toThrow(/both path and file_path/);
    expect(() =>
      TRANSLATORS.droid.translate(
        JSON.stringify({
          ...base2,
          tool_name: 'Edit',
          tool_input: { file_path: '/w/a', old_str: 'x', old_string: 'y', new_str: 'z' },
        }),
        env,
      ),
    ).toThrow(/both old_str and old_string/);
    // Auggie: unnumbered and numbered edits in one call
    expect(() =>
      TRANSLATORS.auggie.translate(
        JSON.stringify({
          hook_event_name: 'PreToolUse',
          conversation_id: 'c',
          workspace_roots: ['/w'],
          tool_name: 'str-replace-editor',
          tool_input: {
            command: 'str_replace',
            path: 'a',
            old_str: 'x',
            new_str: 'y',
            old_str_1: 'p',
            new_str_1: 'q',
          },
        }),
        env,
      ),
    ).toThrow(/both old_str and old_str_1/);
  });
  it('the matcher guard installs covers every write and shell tool of the row, and nothing is missed by it', () => {
    for (const [name, row] of Object.entries(ROWS)) {
      expect(MATCHERS[name as HarnessName]).toBe(matcherOf(row));
      expect(missedTools(matcherOf(row), Object.keys(row.tools))).toEqual([]);
    }
    // Claude's matchers are regexes over the whole name
    expect(missedTools('Write|Edit|Bash', ['Write', 'Edit', 'MultiEdit', 'Bash'])).toEqual([
      'MultiEdit',
    ]);
    expect(missedTools('', ['Write'])).toEqual([]);
    expect(missedTools('*', ['Write'])).toEqual([]);
    expect(missedTools('Wri', ['Write'])).toEqual(['Write']);
    expect(missedTools('(', ['Write'])).toEqual(['Write']);
    expect(missedTools('save-file|str-replace-editor', ['save-file', 'apply_patch'])).toEqual([
      'apply_patch',
    ]);
  });
});

describe("Claude Code 2.1.330's other tools that run a command (adv2, docs/reliability/adv2.md)", () => {
  // its tool list (read from the binary) has Monitor ("enablesCodeExecution": a shell command whose
  // stdout lines come back as events, checked with Bash's permission rules) and PowerShell (the
  // shell on Windows); neither was in guard's matcher, so Claude Code never asked guard about them
  it.each(['Monitor', 'PowerShell'])('%s is gated by the matcher guard init installs', (tool) => {
    expect(new RegExp(matcherOf(ROWS.claude)).test(tool)).toBe(true);
  });
});
