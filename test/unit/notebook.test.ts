import { describe, expect, it } from 'vitest';
import { applyNotebookEdit, notebookSources } from '../../src/harness/notebook.js';
import { frontmatterHooks } from '../../src/flows/doctor/claude-settings.js';

const nb = (cells: object[], extra: object = {}) =>
  JSON.stringify({ cells, metadata: {}, nbformat: 4, nbformat_minor: 5, ...extra }, null, 1) + '\n';
const code = (id: string, source: string[]) => ({
  cell_type: 'code',
  execution_count: 3,
  id,
  metadata: {},
  outputs: [{ output_type: 'stream', name: 'stdout', text: ['x\n'] }],
  source,
});

describe('NotebookEdit as Claude Code 2.1.330 applies it', () => {
  const base = nb([code('a', ['x = 1\n', 'y = 2\n']), code('b', ['print(x)\n'])]);

  it('replace: the source as one string, outputs and count cleared, indent 1, final newline kept', () => {
    const r = applyNotebookEdit(base, {
      cellId: 'b',
      source: 'print(y)\n',
      cellType: null,
      mode: 'replace',
    });
    expect(r.ok).toBe(true);
    const out = JSON.parse((r as { text: string }).text);
    expect(out.cells[1]).toMatchObject({
      source: 'print(y)\n',
      outputs: [],
      execution_count: null,
    });
    expect((r as { text: string }).text.endsWith('}\n')).toBe(true);
    expect((r as { text: string }).text).toContain('\n "cells": [');
  });

  it('cell-N finds a cell by index; insert goes after it, at the start without an id; delete removes it', () => {
    const ins = applyNotebookEdit(base, {
      cellId: 'cell-0',
      source: 'z',
      cellType: 'markdown',
      mode: 'insert',
    });
    expect(
      JSON.parse((ins as { text: string }).text).cells.map((c: { id: string }) => c.id),
    ).toEqual(['a', 'guard000', 'b']);
    const first = applyNotebookEdit(base, {
      cellId: null,
      source: 'z',
      cellType: 'code',
      mode: 'insert',
    });
    expect(JSON.parse((first as { text: string }).text).cells[0].source).toBe('z');
    const del = applyNotebookEdit(base, {
      cellId: 'a',
      source: '',
      cellType: null,
      mode: 'delete',
    });
    expect(JSON.parse((del as { text: string }).text).cells).toHaveLength(1);
  });

  it('a missing cell, a replace without an id, or text that is no notebook: not applied (guard refuses)', () => {
    expect(
      applyNotebookEdit(base, { cellId: 'zz', source: '', cellType: null, mode: 'replace' }).ok,
    ).toBe(false);
    expect(
      applyNotebookEdit(base, { cellId: 'cell-9', source: '', cellType: null, mode: 'replace' }).ok,
    ).toBe(false);
    expect(
      applyNotebookEdit(base, { cellId: null, source: '', cellType: null, mode: 'replace' }).ok,
    ).toBe(false);
    expect(
      applyNotebookEdit('{"cells": 5}', {
        cellId: 'a',
        source: '',
        cellType: null,
        mode: 'replace',
      }).ok,
    ).toBe(false);
    expect(
      applyNotebookEdit('not json', { cellId: 'a', source: '', cellType: null, mode: 'replace' })
        .ok,
    ).toBe(false);
  });

  it('CRLF and a byte order mark are kept', () => {
    const crlf = '\uFEFF' + base.replace(/\n/g, '\r\n');
    const r = applyNotebookEdit(crlf, {
      cellId: 'b',
      source: 'q',
      cellType: null,
      mode: 'replace',
    });
    const text = (r as { text: string }).text;
    expect(text.startsWith('\uFEFF{\r\n')).toBe(true);
    expect(text.replace(/\r\n/g, '')).not.toContain('\n');
  });

  it('what guard measures: the sources, list or string alike, not outputs', () => {
    expect(notebookSources(base)).toBe('# %% [code]\nx = 1\ny = 2\n# %% [code]\nprint(x)\n');
    const replaced = applyNotebookEdit(base, {
      cellId: 'a',
      source: 'x = 1\ny = 2',
      cellType: null,
      mode: 'replace',
    });
    expect(notebookSources((replaced as { text: string }).text)).toBe(notebookSources(base));
    expect(notebookSources('[]')).toBeNull();
  });
});

describe("a markdown file's frontmatter hooks", () => {
  it('a PreToolUse or PermissionRequest block is a hook; other events, no frontmatter, or hooks in the body are not', () => {
    expect(
      frontmatterHooks('---\nname: a\nhooks:\n  PreToolUse:\n    - x\nother: 1\n---\nbody'),
    ).toEqual({
      hooks: {
        PreToolUse: [
          { hooks: [{ type: 'frontmatter', command: 'hooks:\n  PreToolUse:\n    - x' }] },
        ],
      },
    });
    expect(frontmatterHooks('---\nhooks:\n  PermissionRequest: []\n---\n')).not.toBeNull();
    expect(frontmatterHooks('---\nhooks:\n  Stop: []\n---\n')).toBeNull();
    expect(frontmatterHooks('no frontmatter\nhooks:\n  PreToolUse: []\n')).toBeNull();
    expect(frontmatterHooks('---\nname: a\n---\nhooks:\n  PreToolUse: []\n')).toBeNull();
  });
});
