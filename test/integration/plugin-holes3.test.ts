/**
 * holes3, the adversary on guardToolCall's input (guard-cli/plugin, the
 * normalised call any plugin host can hand guard): fields of the wrong kind
 * are refused with the payload's words, never taken as something else
 * (docs/reliability/holes3.md). Fails on de3edbb: a tool-call id that is an
 * object was recorded as "[object Object]" (so two such calls share one
 * before-step, and one's after-event is compared with the other's), a
 * string replaceAll was read as false, a cwd that is not a string was
 * answered as a bug in guard.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { guardToolCall, type ToolCall } from '../../src/plugin/index.js';
import { cleanupRepos, lines, makeRepo } from '../helpers.js';

afterAll(cleanupRepos);

describe('guardToolCall: each field of the wrong kind is refused as a payload error', () => {
  it('toolCallId, tool, replaceAll, cwd', async () => {
    const repo = makeRepo({ 'app.py': lines(20) });
    const base = { harness: 'opencode', phase: 'before', sessionId: 's', cwd: repo.dir } as const;
    const cases: [string, unknown][] = [
      ['toolCallId', { ...base, toolCallId: { a: 1 }, tool: 'bash', kind: 'shell', command: 'ls' }],
      ['tool', { ...base, tool: 5, kind: 'shell', command: 'ls' }],
      [
        'replaceAll',
        {
          ...base,
          tool: 'e',
          kind: 'edit',
          path: 'app.py',
          oldText: 'line 1\n',
          newText: '',
          replaceAll: 'true',
        },
      ],
      ['cwd', { ...base, cwd: 5, tool: 'bash', kind: 'shell', command: 'ls' }],
    ];
    for (const [field, call] of cases) {
      const v = await guardToolCall(call as ToolCall);
      expect(v.action, field).toBe('deny');
      expect((v as { reason: string }).reason, field).toMatch(/payload is not what guard expects/);
      expect((v as { reason: string }).reason, field).toContain(field);
    }
    expect(repo.refs('refs/guard/sessions/')).toEqual([]);
    // the same calls with the right kinds are judged as before
    expect(
      await guardToolCall({
        ...base,
        toolCallId: 'c1',
        tool: 'bash',
        kind: 'shell',
        command: 'ls',
      }),
    ).toEqual({ action: 'allow' });
  });
});
