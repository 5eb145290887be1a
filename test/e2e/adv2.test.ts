/**
 * Issue 20, tried as an adversary in the doors built in de3edbb..fec4a43
 * (docs/reliability/adv2.md): the wiped-journal check and the notebook and
 * MCP handling. Each test performs the attack through `guard hook claude`
 * with Claude Code's payload shapes or plain git.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLI,
  claudeDecision as decision,
  claudeHook,
  claudeRepo,
  cleanupRepos,
  lines,
  makeRepo,
  type TestRepo,
} from '../helpers.js';

/** A notebook as Claude Code's NotebookEdit leaves it (and nbformat allows): each cell's source one JSON string. */
function notebook(cells: { id: string; source: string }[]): string {
  const nb = {
    cells: cells.map((c) => ({
      cell_type: 'code',
      execution_count: null,
      id: c.id,
      metadata: {},
      outputs: [],
      source: c.source,
    })),
    metadata: { language_info: { name: 'python' } },
    nbformat: 4,
    nbformat_minor: 5,
  };
  return JSON.stringify(nb, null, 1) + '\n';
}
const MODEL = lines(150, 'weights = weights + 1  # step');
const NB = notebook([
  { id: 'intro', source: 'import os\n' },
  { id: 'model', source: MODEL },
  { id: 'plot', source: 'plot(x)\n' },
]);

afterAll(cleanupRepos);

describe('the wiped journal, silenced', () => {
  it('rm -r .git/guard then an empty journal put back, with the anchors deleted: a looser config does not pass (holes4)', () => {
    const repo = claudeRepo({ 'state.py': lines(270) });
    claudeHook(repo, 's', 'Bash', { command: 'ls' }, 'l1');
    claudeHook(repo, 's', 'Bash', { command: 'ls' }, 'l1', true);
    repo.write('guard.config.json', JSON.stringify({ lineThreshold: 100000, changeRatio: 1 }));
    repo.git(['add', '-A']);
    repo.git(['-c', 'core.hooksPath=/dev/null', 'commit', '-qm', 'loosen', '--no-verify']);
    const session = repo.refs('refs/guard/sessions/');
    repo.git(['update-ref', '--stdin'], { input: session.map((r) => `delete ${r}\n`).join('') });
    rmSync(path.join(repo.dir, '.git', 'guard'), { recursive: true });
    rmSync(path.join(repo.dir, '.git', 'guard-sessions'), { recursive: true, force: true });
    mkdirSync(path.join(repo.dir, '.git', 'guard'));
    writeFileSync(path.join(repo.dir, '.git', 'guard', 'journal'), '');
    const w = claudeHook(
      repo,
      's',
      'Write',
      { file_path: path.join(repo.dir, 'state.py'), content: 'x\n' },
      'w1',
    );
    expect(decision(w)).toBe('deny');
    expect(repo.read('state.py')).toBe(lines(270));
  });
});

describe('the wiped journal, put back as something else', () => {
  for (const [what, put] of [
    ['a folder', (j: string) => mkdirSync(j)],
    ['a symlink to /dev/null', (j: string) => symlinkSync('/dev/null', j)],
  ] as const) {
    it(`rm -r .git/guard, then the journal as ${what}: still refused`, () => {
      const repo = claudeRepo();
      claudeHook(repo, 's', 'Bash', { command: 'ls' }, 'b1');
      claudeHook(repo, 's', 'Bash', { command: 'ls' }, 'b1', true);
      rmSync(path.join(repo.dir, '.git', 'guard'), { recursive: true });
      mkdirSync(path.join(repo.dir, '.git', 'guard'));
      put(path.join(repo.dir, '.git', 'guard', 'journal'));
      expect(decision(claudeHook(repo, 's', 'Bash', { command: 'ls' }, 'b2'))).toBe('deny');
    });
  }
});

describe('the wiped journal, false alarms', () => {
  it("a repository that fetched another's refs/guard/* then ran guard init: no alarm", () => {
    const a = claudeRepo();
    claudeHook(a, 's', 'Bash', { command: 'ls' }, 'b1');
    claudeHook(a, 's', 'Bash', { command: 'ls' }, 'b1', true);
    const b = makeRepo({ 'app.py': lines(10) });
    b.git(['config', '--unset', 'core.hooksPath']);
    b.git(['fetch', '-q', a.dir, '+refs/guard/*:refs/guard/*']);
    expect(b.refs('refs/guard/').length).toBeGreaterThan(0);
    expect(b.guard(['init', '--global', '--agent', 'claude']).code).toBe(0);
    const r = claudeHook(b, 's', 'Bash', { command: 'ls' }, 'c1');
    expect(decision(r)).toBe(null);
  });
});

describe('a notebook written as JSON (Write, Edit), not through NotebookEdit', () => {
  it('a Write that drops a 150-line cell held as one JSON string is refused', () => {
    const repo = claudeRepo({ 'nb.ipynb': NB });
    const abs = path.join(repo.dir, 'nb.ipynb');
    const without = notebook([
      { id: 'intro', source: 'import os\n' },
      { id: 'plot', source: 'plot(x)\n' },
    ]);
    const w = claudeHook(repo, 's', 'Write', { file_path: abs, content: without }, 'w1');
    expect(decision(w)).toBe('deny');
    const oneLine = JSON.stringify(MODEL);
    const e = claudeHook(
      repo,
      's2',
      'Edit',
      { file_path: abs, old_string: oneLine, new_string: '"# see the paper\\n"' },
      'e1',
    );
    expect(decision(e)).toBe('deny');
    expect(repo.read('nb.ipynb')).toBe(NB);
    // one line of the cell changed, written whole as JSON: allowed, as a NotebookEdit of it is
    const tuned = notebook([
      { id: 'intro', source: 'import os\n' },
      { id: 'model', source: MODEL.replace('step 7\n', 'step 7 (tuned)\n') },
      { id: 'plot', source: 'plot(x)\n' },
    ]);
    expect(
      decision(claudeHook(repo, 's3', 'Write', { file_path: abs, content: tuned }, 'w2')),
    ).toBe(null);
  });
});

describe('a notebook at the commit gate, ci and the branch gate (holes4: measured on its cells)', () => {
  const without = notebook([
    { id: 'intro', source: 'import os\n' },
    { id: 'plot', source: 'plot(x)\n' },
  ]);

  it('a commit that drops a 150-line cell held as one JSON string is refused by check', () => {
    const repo = claudeRepo({ 'nb.ipynb': NB });
    repo.write('nb.ipynb', without);
    repo.git(['add', 'nb.ipynb']);
    // on main (the JSON's lines): ~8 lines lost, allowed
    const r = repo.guardJson(['check']);
    expect(r.code).not.toBe(0);
    // the cell's 150 lines and its marker line (core/notebook.ts)
    expect(r.json.files[0]).toMatchObject({
      path: 'nb.ipynb',
      decision: 'blocked',
      linesDeleted: 151,
    });
  });

  it('guard ci refuses the same drop between two commits', () => {
    const repo = claudeRepo({ 'nb.ipynb': NB });
    repo.git(['checkout', '-q', '-b', 'work']);
    repo.write('nb.ipynb', without);
    repo.git(['-c', 'core.hooksPath=/dev/null', 'commit', '-qam', 'drop', '--no-verify']);
    const head = repo.git(['rev-parse', 'HEAD']).trim();
    const ci = repo.guardJson(['ci', '--base', 'main', '--head', head]);
    expect(ci.code).toBe(1);
    expect(ci.json.files[0]).toMatchObject({
      path: 'nb.ipynb',
      decision: 'blocked',
      linesDeleted: 151,
    });
  });

  it('the branch gate refuses the drop committed with --no-verify', () => {
    const repo = claudeRepo({ 'nb.ipynb': NB });
    mkdirSync(path.join(repo.dir, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(CLI, path.join(repo.dir, 'node_modules', '.bin', 'guard'));
    const head = repo.git(['rev-parse', 'HEAD']).trim();
    repo.write('nb.ipynb', without);
    repo.git(['add', 'nb.ipynb']);
    const r = repo.gitRun(['commit', '-q', '--no-verify', '-m', 'drop'], { CI: 'true' });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('nb.ipynb');
    expect(repo.git(['rev-parse', 'HEAD']).trim()).toBe(head);
  });

  it('a one-line change to a 120-line cell of a notebook Jupyter saved (a list of lines, outputs) passes check', () => {
    const cell = (src: string) => ({
      cell_type: 'code',
      execution_count: 4,
      id: 'train',
      metadata: {},
      outputs: Array.from({ length: 40 }, (_, i) => ({
        name: 'stdout',
        output_type: 'stream',
        text: [`epoch ${i}\n`],
      })),
      source: src.split(/(?<=\n)/),
    });
    const jupyter = (src: string) =>
      JSON.stringify(
        { cells: [cell(src)], metadata: {}, nbformat: 4, nbformat_minor: 5 },
        null,
        1,
      ) + '\n';
    const body = lines(120, 'loss = loss * 0.9  # epoch');
    const repo = claudeRepo({ 'train.ipynb': jupyter(body) });
    // as NotebookEdit leaves it: the source one string, the outputs cleared (the JSON's lines read as 160 lost)
    const edited = JSON.parse(jupyter(body));
    edited.cells[0].source = body.replace('epoch 7\n', 'epoch 7 (tuned)\n');
    edited.cells[0].outputs = [];
    edited.cells[0].execution_count = null;
    repo.write('train.ipynb', JSON.stringify(edited, null, 1) + '\n');
    repo.git(['add', 'train.ipynb']);
    const r = repo.guardJson(['check']);
    expect(r.code).toBe(0);
    expect(r.json.files[0]).toMatchObject({ linesDeleted: 1, linesAdded: 1 });
  });
});
