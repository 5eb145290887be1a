import type { EditResult } from './edits.js';
import type { NotebookEdit } from './types.js';
import { parseNotebook, type Cell } from '../core/notebook.js';

/** The index Claude edits (or inserts at), as its own lookup finds it. */
function cellIndex(cells: Cell[], id: string | null, insert: boolean): number | string {
  if (!id) return insert ? 0 : 'a cell id is needed unless a cell is inserted';
  let i = cells.findIndex((c) => c.id === id);
  if (i === -1) {
    const n = /^cell-(\d+)$/.exec(id)?.[1];
    if (n === undefined) return `no cell with id "${id}" in the notebook`;
    i = parseInt(n, 10);
    if (!cells[i]) return `no cell at index ${i} in the notebook`;
  }
  return insert ? i + 1 : i;
}

/**
 * Claude Code's NotebookEdit (2.1.330, read from its binary): the notebook is
 * parsed as JSON, one cell found by its `id` (or `cell-N`, its index), and
 * replaced (its `source` becomes the new text as one string; a code cell's
 * outputs and execution count are cleared; `cell_type` changes it),
 * inserted after it (at the start without a cell id), or deleted; then
 * written as `JSON.stringify(notebook, null, 1)`, keeping a byte order mark,
 * a final newline and CRLF line ends. Reproduced here so guard measures the
 * call as a write of that file.
 */
export function applyNotebookEdit(text: string, edit: NotebookEdit): EditResult {
  const nb = parseNotebook(text);
  if (!nb) return { ok: false, why: 'the notebook is not valid notebook JSON' };
  const mode = edit.mode;
  const at = cellIndex(nb.cells, edit.cellId, mode === 'insert');
  if (typeof at === 'string') return { ok: false, why: at };
  if (mode === 'delete') nb.cells.splice(at, 1);
  else if (mode === 'insert') {
    const v4_5 = Number(nb.nbformat) > 4 || (nb.nbformat === 4 && Number(nb.nbformat_minor) >= 5);
    // Claude draws a random 8-character id: any 8 characters measure the same
    const id = v4_5 ? 'guard000' : undefined;
    nb.cells.splice(
      at,
      0,
      edit.cellType === 'markdown'
        ? { cell_type: 'markdown', id, source: edit.source, metadata: {} }
        : {
            ...{ cell_type: 'code', id, source: edit.source, metadata: {} },
            ...{ execution_count: null, outputs: [] },
          },
    );
  } else {
    const cell = nb.cells[at]!;
    cell.source = edit.source;
    if (cell.cell_type === 'code') {
      cell.execution_count = null;
      cell.outputs = [];
    }
    if (edit.cellType && edit.cellType !== cell.cell_type) cell.cell_type = edit.cellType;
  }
  let out =
    (text.startsWith('\uFEFF') ? '\uFEFF' : '') +
    JSON.stringify(nb, null, 1) +
    (text.endsWith('\n') ? '\n' : '');
  if (text.includes('\r\n')) out = out.replace(/\r?\n/g, '\r\n');
  return { ok: true, text: out };
}

export { notebookSources } from '../core/notebook.js';
