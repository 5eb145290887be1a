import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  claudeDecision,
  claudeHook,
  claudeRepo,
  cleanupRepos,
  makeRepo,
  type TestRepo,
} from '../helpers.js';

/**
 * adv5 (docs/reliability/adv5.md): notebooks measured on their cells (core/notebook.ts), attacked
 * where adv4 did not: nbformat 3 (cells in `worksheets`, a code cell's source in `input`), a
 * decoy `cells` beside them, cells merged, sources as one string. 20 code cells of 5 lines with
 * 60 lines of output each: the JSON's lines are mostly outputs.
 */

afterAll(() => cleanupRepos());

const code = (i: number) =>
  Array.from({ length: 5 }, (_, j) => `x${i}_${j} = compute(${i}, ${j})\n`);
const outputs = (i: number) => [
  {
    output_type: 'stream',
    stream: 'stdout',
    text: Array.from({ length: 60 }, (_, k) => `out ${i} ${k}\n`),
  },
];

/** An nbformat 3 notebook (as IPython saved them before 2015). */
function v3(withCode = true): any {
  const cells = Array.from({ length: 20 }, (_, i) => ({
    cell_type: 'code',
    collapsed: false,
    input: withCode ? code(i) : [],
    language: 'python',
    metadata: {},
    outputs: outputs(i),
    prompt_number: i,
  }));
  return {
    metadata: { name: '' },
    nbformat: 3,
    nbformat_minor: 0,
    worksheets: [{ cells, metadata: {} }],
  };
}

/** The same as nbformat 4 (what Jupyter writes when it saves a v3 notebook). */
function v4(withCode = true): any {
  const cells = Array.from({ length: 20 }, (_, i) => ({
    cell_type: 'code',
    execution_count: i,
    metadata: {},
    outputs: outputs(i).map((o) => ({ output_type: 'stream', name: 'stdout', text: o.text })),
    source: withCode ? code(i) : [],
  }));
  return { cells, metadata: {}, nbformat: 4, nbformat_minor: 5 };
}

const text = (nb: unknown) => JSON.stringify(nb, null, 1) + '\n';

function checkOne(repo: TestRepo): { code: number; file: any } {
  repo.git(['add', '-A']);
  const r = repo.guardJson(['check']);
  return { code: r.code, file: r.json.files[0] };
}

describe('adv5: notebooks measured on cells', () => {
  it('an nbformat 3 notebook emptied of its code (outputs kept): a replace, not an 8% JSON edit', () => {
    const repo = makeRepo({ 'nb.ipynb': text(v3()) });
    repo.write('nb.ipynb', text(v3(false)));
    // on 184ae15: allowed (140 of 1,653 JSON lines deleted)
    expect(checkOne(repo).file).toMatchObject({ status: 'replace', needsApproval: true });
  });

  it('a v4 notebook saved as nbformat 3 with empty worksheets and its old cells left in `cells` (a decoy Jupyter never reads): a replace', () => {
    const repo = makeRepo({ 'nb.ipynb': text(v4()) });
    const decoy = { ...v3(false), cells: v4().cells };
    repo.write('nb.ipynb', text(decoy));
    // on 184ae15: allowed, measured on `cells` (unchanged); Jupyter reads nbformat 3 from its
    // worksheets (nbformat's v3 reader and its upgrade to v4), where there is no code
    expect(checkOne(repo).file).toMatchObject({ needsApproval: true });
  });

  it('a Write of the emptied nbformat 3 notebook through the hook: denied', () => {
    const repo = claudeRepo({ 'nb.ipynb': text(v3()) });
    const r = claudeHook(
      repo,
      's1',
      'Write',
      { file_path: path.join(repo.dir, 'nb.ipynb'), content: text(v3(false)) },
      't1',
    );
    expect(claudeDecision(r), r.stdout).toBe('deny');
  });

  it('an nbformat 3 notebook saved by Jupyter as nbformat 4 with every line of code kept: allowed (on 184ae15 a false refusal, the v3 JSON against v4 cells)', () => {
    const repo = makeRepo({ 'nb.ipynb': text(v3()) });
    repo.write('nb.ipynb', text(v4()));
    const { file } = checkOne(repo);
    expect(file).toMatchObject({ needsApproval: false, linesDeleted: 0 });
  });

  it('held: every cell merged into one (all the code kept), and sources saved as one string instead of a list', () => {
    const repo = makeRepo({ 'nb.ipynb': text(v4()) });
    const nb = v4();
    const merged = {
      ...nb,
      cells: [{ ...nb.cells[0], source: nb.cells.map((c: any) => c.source.join('')).join('') }],
    };
    repo.write('nb.ipynb', text(merged));
    expect(checkOne(repo).file).toMatchObject({ needsApproval: false });
    // the other way: the code emptied out while the sources are strings: still a replace
    const repo2 = makeRepo({ 'nb.ipynb': text(v4()) });
    const strings = { ...nb, cells: nb.cells.map((c: any) => ({ ...c, source: '' })) };
    repo2.write('nb.ipynb', text(strings));
    expect(checkOne(repo2).file).toMatchObject({ needsApproval: true });
  });

  it('guard write of a v4 notebook emptied of its code (outputs kept): blocked, not a 9% modify', () => {
    const repo = makeRepo({ 'nb.ipynb': text(v4()) });
    const r = repo.guardJson(['write', 'nb.ipynb'], { input: text(v4(false)) });
    // on 184ae15: written (modify, 140 of 1,607 JSON lines deleted): guard write measured the JSON
    expect(r.code).toBe(1);
    expect(r.json.files[0]).toMatchObject({ status: 'replace', written: false });
    expect(repo.read('nb.ipynb')).toBe(text(v4()));
  });

  it('guard write of a notebook whose one cell changes by a line, its sources saved as strings and its outputs cleared: allowed, measured on the cells', () => {
    const repo = makeRepo({ 'nb.ipynb': text(v4()) });
    const nb = v4();
    const edited = {
      ...nb,
      cells: nb.cells.map((c: any, i: number) => ({
        ...c,
        outputs: [],
        source: (i === 3 ? ['x = 1\n', ...c.source.slice(1)] : c.source).join(''),
      })),
    };
    const r = repo.guardJson(['write', 'nb.ipynb'], { input: text(edited) });
    expect(r.code).toBe(0);
    expect(r.json.files[0]).toMatchObject({ linesDeleted: 1, linesAdded: 1 });
  });
});
