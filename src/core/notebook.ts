/**
 * A Jupyter notebook as guard measures it: its cells' sources, not its JSON.
 * Pure (no I/O): the hook (harness/notebook.ts, flows/hook/hook-write.ts) and
 * the gates that measure git's blobs (git/changes.ts: check, ci, the branch
 * gate, review, the shell report) read a notebook the same way.
 */
export type Cell = { cell_type?: unknown; id?: unknown; source?: unknown; [k: string]: unknown };
export type Notebook = { cells: Cell[]; nbformat?: unknown; nbformat_minor?: unknown };

/** The paths measured as notebooks (when both sides parse as one). */
export const NOTEBOOK_PATH = /\.ipynb$/i;

export function parseNotebook(text: string): Notebook | null {
  let nb: unknown;
  try {
    nb = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    return null;
  }
  if (typeof nb !== 'object' || nb === null || Array.isArray(nb)) return null;
  const cells = (nb as { cells?: unknown }).cells;
  if (!Array.isArray(cells) || !cells.every((c) => typeof c === 'object' && c !== null))
    return null;
  return nb as Notebook;
}

/**
 * The cells Jupyter reads: nbformat 3 (notebooks saved before 2015, which Jupyter still opens and
 * upgrades) keeps them in `worksheets`, a code cell's source in `input`. Read by the `nbformat`
 * number, as Jupyter reads it: a v3 notebook emptied of its code measured as JSON lines was a small
 * edit among its outputs, and `cells` beside v3 worksheets is a decoy Jupyter never shows (adv5).
 */
function cellsRead(nb: { cells?: unknown; worksheets?: unknown; nbformat?: unknown }): Cell[] {
  if (nb.nbformat !== 3) return nb.cells as Cell[];
  const ws = Array.isArray(nb.worksheets) ? nb.worksheets : [];
  return ws.flatMap((w: unknown) => {
    const cells = (w as { cells?: unknown } | null)?.cells;
    return (Array.isArray(cells) ? cells : []).map((c: unknown) => {
      const cell = (typeof c === 'object' && c !== null ? c : {}) as Cell;
      return cell.cell_type === 'code' ? { ...cell, source: cell.input ?? '' } : cell;
    });
  });
}

/** An nbformat 3 notebook with no `cells` beside its worksheets (parseNotebook wants `cells`). */
function worksheetsOnly(text: string): Notebook | null {
  let nb: unknown;
  try {
    nb = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    return null;
  }
  const v3 = nb as { nbformat?: unknown; worksheets?: unknown } | null;
  return typeof nb === 'object' && v3?.nbformat === 3 && Array.isArray(v3.worksheets)
    ? (nb as Notebook)
    : null;
}

const sourceText = (s: unknown): string =>
  Array.isArray(s) ? s.map((x) => (typeof x === 'string' ? x : '')).join('') : String(s ?? '');

/**
 * What guard measures of a notebook: its cells' sources, each after a
 * marker line, not the JSON (a replaced cell's source becomes one JSON
 * string, and its outputs are cleared: neither is work lost). null when the
 * text is not a notebook.
 */
export function notebookSources(text: string): string | null {
  const nb = parseNotebook(text) ?? worksheetsOnly(text);
  if (!nb) return null;
  return cellsRead(nb)
    .map((c) => {
      const s = sourceText(c.source);
      return `# %% [${String(c.cell_type ?? 'code')}]\n${s}${s === '' || s.endsWith('\n') ? '' : '\n'}`;
    })
    .join('');
}

/**
 * The two sides of a change at a notebook's path as guard measures them (null: as text). Both
 * notebooks: their cells' sources. The old side a notebook and the new one not (JSON cut short
 * or broken, its cells gone): the old cells against the new text, since a file Jupyter cannot
 * open holds none of that work; its JSON's lines would hide a notebook emptied of its code among
 * the outputs that stay (docs/reliability/adv4.md).
 */
export function notebookSides(oldText: string, newText: string): [string, string] | null {
  const base = notebookSources(oldText);
  if (base === null) return null;
  return [base, notebookSources(newText) ?? newText];
}
