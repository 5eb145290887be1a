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
  it.fails('rm -r .git/guard then an empty journal put back, with the anchors deleted: a looser config does not pass (open: adv2.md)', () => {
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

describe('a notebook at the commit gate', () => {
  it.fails('a commit that drops a 150-line cell held as one JSON string is refused (open: adv2.md)', () => {
    const repo = claudeRepo({ 'nb.ipynb': NB });
    const without = notebook([
      { id: 'intro', source: 'import os\n' },
      { id: 'plot', source: 'plot(x)\n' },
    ]);
    repo.write('nb.ipynb', without);
    repo.git(['add', 'nb.ipynb']);
    const r = repo.guard(['check']);
    expect(r.code).not.toBe(0);
  });
});
