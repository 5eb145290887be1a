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
 * adv4 (docs/reliability/adv4.md): notebooks measured on their cells at the gates (check) and
 * the hook, attacked with notebooks that are not quite notebooks. A notebook of 20 code cells
 * (100 lines of code) with long outputs (1,200 lines): its JSON's lines are mostly outputs.
 */

afterAll(() => cleanupRepos());

function notebook(withSources = true): any {
  const cells = Array.from({ length: 20 }, (_, i) => ({
    cell_type: 'code',
    execution_count: i,
    id: `c${i}`,
    metadata: {},
    source: withSources
      ? Array.from({ length: 10 }, (_, j) =>
          j % 2 === 0 ? `def f${i}_${j}(a):\n` : `    return a * ${j}\n`,
        )
      : [],
    outputs: [
      {
        output_type: 'stream',
        name: 'stdout',
        text: Array.from({ length: 60 }, (_, k) => `out line ${k}\n`),
      },
    ],
  }));
  return { cells, metadata: {}, nbformat: 4, nbformat_minor: 5 };
}
const text = (nb: unknown) => JSON.stringify(nb, null, 1) + '\n';
/** The code emptied out, outputs kept, and the JSON broken by a stray comma at its end. */
const brokenEmptied = () => text(notebook(false)).replace(/\n}\n$/, ',\n}\n');

function checkOne(repo: TestRepo): { code: number; file: any } {
  repo.git(['add', '-A']);
  const r = repo.guardJson(['check']);
  return { code: r.code, file: r.json.files[0] };
}

describe('adv4: notebooks at the gates and the hook', () => {
  it('the code emptied out of every cell (valid JSON): a replace', () => {
    const repo = makeRepo({ 'nb.ipynb': text(notebook()) });
    repo.write('nb.ipynb', text(notebook(false)));
    expect(checkOne(repo).file).toMatchObject({ status: 'replace', needsApproval: true });
  });

  it('the code emptied out and the JSON broken on the new side: still a replace, not a small JSON edit', () => {
    const repo = makeRepo({ 'nb.ipynb': text(notebook()) });
    repo.write('nb.ipynb', brokenEmptied());
    expect(checkOne(repo).file).toMatchObject({ status: 'replace', needsApproval: true });
  });

  it('renamed to another extension with the code emptied out: still a replace', () => {
    const repo = makeRepo({ 'nb.ipynb': text(notebook()) });
    repo.git(['mv', 'nb.ipynb', 'nb.json']);
    repo.write('nb.json', text(notebook(false)));
    const { file } = checkOne(repo);
    expect(file).toMatchObject({ needsApproval: true });
  });

  it('a Write of a broken, emptied notebook through the hook: denied', () => {
    const repo = claudeRepo({ 'nb.ipynb': text(notebook()) });
    const r = claudeHook(
      repo,
      's1',
      'Write',
      { file_path: path.join(repo.dir, 'nb.ipynb'), content: brokenEmptied() },
      't1',
    );
    expect(claudeDecision(r)).toBe('deny');
  });

  it('held: an .ipynb that is not a notebook (plain text) is measured as text', () => {
    const body = Array.from({ length: 100 }, (_, i) => `line ${i}\n`).join('');
    const repo = makeRepo({ 'x.ipynb': body });
    repo.write('x.ipynb', 'line 0\n');
    expect(checkOne(repo).file).toMatchObject({ status: 'replace', needsApproval: true });
  });

  it('held: a notebook whose old side is broken JSON and new side a real notebook is measured as text', () => {
    const repo = makeRepo({ 'nb.ipynb': brokenEmptied() });
    repo.write('nb.ipynb', text(notebook()));
    const { code, file } = checkOne(repo);
    expect(file.needsApproval).toBe(false);
    expect(code).toBe(0);
  });

  it('held: non-string sources (numbers, objects) on the old side do not throw; emptying them is measured', () => {
    const nb = notebook();
    nb.cells[0].source = [1, 2, { a: 'b' }];
    nb.cells[1].source = { code: 'x' };
    const repo = makeRepo({ 'nb.ipynb': text(nb) });
    repo.write('nb.ipynb', text(notebook(false)));
    expect(checkOne(repo).file).toMatchObject({ status: 'replace', needsApproval: true });
  });
});
