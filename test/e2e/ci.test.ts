import { mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import {
  CLI,
  cleanEnv,
  cleanupRepos,
  fixture,
  lines,
  makeRepo,
  ROOT,
  TestRepo,
} from '../helpers.js';

afterAll(cleanupRepos);

const ZERO = '0000000000000000000000000000000000000000';

/** main with the 270-line fixture and a small file; a branch `pr` checked out on top. */
function prRepo(extra: Record<string, string> = {}): TestRepo {
  const repo = makeRepo({ 'state.py': fixture('state.py'), 'notes.txt': lines(20), ...extra });
  repo.git(['checkout', '-q', '-b', 'pr']);
  return repo;
}

function tmpFile(name: string, content = ''): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'guard-ci-')));
  const file = path.join(dir, name);
  writeFileSync(file, content);
  return file;
}

describe('guard ci', () => {
  it('fails a destructive rewrite without a trailer: annotation first, full job summary appended', () => {
    const repo = prRepo();
    repo.write('state.py', fixture('state_replacement.py'));
    repo.write('notes.txt', lines(21));
    repo.commitAll('agent rewrites state.py');
    const summary = tmpFile('summary.md', '# earlier step\n');

    const r = repo.guard(['ci', '--base', 'main', '--format', 'github'], {
      env: { GITHUB_STEP_SUMMARY: summary },
    });
    expect(r.code).toBe(1);
    const out = r.stdout.split('\n');
    expect(out[0]).toMatch(
      /^::error file=state\.py,line=\d+,title=guard%3A replace of state\.py needs approval::state\.py: 270 lines, \d+ deleted \(\d+%25\), \d+ added\.%0A- replaces \d+%25 of a 270-line file/,
    );
    expect(out.filter((l) => l.startsWith('::error'))).toHaveLength(1);
    expect(r.stdout).toContain('guard ci: 1 of 2 changed files blocked');

    const md = readFileSync(summary, 'utf8');
    expect(md.startsWith('# earlier step\n## guard ci: 1 change blocked\n')).toBe(true);
    expect(md).toMatch(
      /\| state\.py \| replace \| 270 \| \d+ \| \d+ \| \d+% \| ❌ blocked \| replaces \d+% of a 270-line file/,
    );
    expect(md).toContain('| notes.txt | modify | 20 | 0 | 1 | 0% | allowed |  |');
  });

  it('passes a clean pull request', () => {
    const repo = prRepo();
    repo.write('notes.txt', lines(25));
    repo.write('src/new.py', lines(400));
    repo.commitAll('small edits');
    const text = repo.guard(['ci', '--base', 'main']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^guard ci: passed: 2 changed files, 0 approved, 0 blocked \(merge-base [0-9a-f]{10}\.\.[0-9a-f]{10}\)\n/,
    );
    const { code, json } = repo.guardJson(['ci', '--base', 'main']);
    expect(code).toBe(0);
    expect(json).toMatchObject({ ok: true, command: 'ci', blocked: 0 });
    expect(json.mergeBase).toBe(repo.git(['rev-parse', 'main']).trim());
    expect(json.head).toBe(repo.git(['rev-parse', 'HEAD']).trim());
    expect(json.files.map((f: any) => [f.path, f.status, f.decision])).toEqual([
      ['notes.txt', 'modify', 'allowed'],
      ['src/new.py', 'new', 'allowed'],
    ]);
  });

  it('passes when the merge commit carries Guard-Approved for the blob at head, then fails on a later edit', () => {
    const repo = prRepo();
    repo.git(['checkout', '-q', '-b', 'agent']);
    repo.write('state.py', fixture('state_replacement.py'));
    repo.commitAll('agent rewrite');
    repo.git(['checkout', '-q', 'pr']);
    repo.git(['merge', '-q', '--no-ff', '--no-commit', 'agent']);
    const blob = repo.git(['rev-parse', ':state.py']).trim();
    repo.git(['commit', '-q', '-m', 'Merge lane agent', '-m', `Guard-Approved: state.py ${blob}`]);
    const merge = repo.git(['rev-parse', 'HEAD']).trim();
    expect(repo.git(['rev-parse', 'HEAD:state.py']).trim()).toBe(blob);

    const ok = repo.guardJson(['ci', '--base', 'main']);
    expect(ok.code).toBe(0);
    expect(ok.json.files).toHaveLength(1);
    expect(ok.json.files[0]).toMatchObject({
      path: 'state.py',
      status: 'replace',
      needsApproval: true,
      decision: 'approved',
      approvedBy: merge,
      blob,
    });
    expect(repo.guard(['ci', '--base', 'main']).stdout).toContain(
      `approved in ${merge.slice(0, 10)}`,
    );

    // an unreviewed edit after the approval: the blob at head no longer matches
    repo.write('state.py', fixture('state_replacement.py') + 'import os\n');
    repo.commitAll('one more line');
    const again = repo.guardJson(['ci', '--base', 'main']);
    expect(again.code).toBe(1);
    expect(again.json.files[0]).toMatchObject({ path: 'state.py', decision: 'blocked' });
    expect(again.json.files[0].approvedBy).toBeUndefined();
  });

  it('ignores trailers outside merge-base..head and trailers for another path', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py'), 'other.py': lines(10) });
    // the approval sits in main's history, before the merge-base: it does not count
    const blob = repo
      .git(['hash-object', '-w', '--stdin'], { input: fixture('state_replacement.py') })
      .trim();
    repo.git([
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'old',
      '-m',
      `Guard-Approved: state.py ${blob}`,
    ]);
    repo.git(['checkout', '-q', '-b', 'pr']);
    repo.write('state.py', fixture('state_replacement.py'));
    repo.git(['add', '-A']);
    repo.git(['commit', '-q', '-m', 'rewrite', '-m', `Guard-Approved: other.py ${blob}`]);
    const r = repo.guardJson(['ci', '--base', 'main']);
    expect(r.code).toBe(1);
    expect(r.json.files[0]).toMatchObject({ path: 'state.py', decision: 'blocked' });
  });

  it('approves a deletion with the all-zero blob, and nothing else', () => {
    const repo = prRepo({ 'big.py': lines(300) });
    repo.git(['rm', '-q', 'big.py']);
    repo.git(['commit', '-q', '-m', 'drop big.py']);
    const blocked = repo.guardJson(['ci', '--base', 'main']);
    expect(blocked.code).toBe(1);
    expect(blocked.json.files[0]).toMatchObject({
      path: 'big.py',
      status: 'delete',
      existingLines: 300,
      decision: 'blocked',
      blob: null,
    });

    repo.git([
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'approve',
      '-m',
      `Guard-Approved: big.py ${ZERO}`,
    ]);
    const ok = repo.guardJson(['ci', '--base', 'main']);
    expect(ok.code).toBe(0);
    expect(ok.json.files[0]).toMatchObject({ path: 'big.py', decision: 'approved' });
  });

  it('matches paths with spaces as written and paths with a newline C-quoted', () => {
    const repo = prRepo({
      'my state.py': fixture('state.py'),
      'odd\nname.py': fixture('state.py'),
    });
    repo.write('my state.py', fixture('state_replacement.py'));
    repo.write('odd\nname.py', fixture('state_replacement.py'));
    repo.git(['add', '-A']);
    const blob = repo.git(['rev-parse', ':my state.py']).trim();
    repo.git([
      'commit',
      '-q',
      '-m',
      'rewrite both',
      '-m',
      `Guard-Approved: my state.py ${blob}\nGuard-Approved: "odd\\nname.py" ${blob}`,
    ]);
    const r = repo.guardJson(['ci', '--base', 'main']);
    expect(r.json.files.map((f: any) => [f.path, f.decision])).toEqual([
      ['my state.py', 'approved'],
      ['odd\nname.py', 'approved'],
    ]);
    expect(r.code).toBe(0);
  });

  it('judges by the config committed at the merge-base, not the one in the pull request', () => {
    const repo = prRepo({ 'guard.config.json': '{"lineThreshold": 100}\n' });
    repo.write('guard.config.json', '{"lineThreshold": 100000}\n');
    repo.write('state.py', fixture('state_replacement.py'));
    repo.commitAll('loosen the rules and rewrite');
    const r = repo.guardJson(['ci', '--base', 'main']);
    expect(r.code).toBe(1);
    expect(r.json.bootstrap).toBe(false);
    const byPath = Object.fromEntries(r.json.files.map((f: any) => [f.path, f]));
    expect(byPath['guard.config.json']).toMatchObject({ protected: true, decision: 'blocked' });
    expect(byPath['state.py']).toMatchObject({ status: 'replace', decision: 'blocked' });
  });

  it('--json and --format json print the same document; markdown prints the summary', () => {
    const repo = prRepo();
    repo.write('state.py', fixture('state_replacement.py'));
    repo.commitAll('rewrite');
    const a = repo.guard(['ci', '--base', 'main', '--json']);
    const b = repo.guard(['ci', '--base', 'main', '--format', 'json']);
    expect(a.code).toBe(1);
    expect(b.code).toBe(1);
    expect(b.stdout).toBe(a.stdout);
    expect(JSON.parse(a.stdout).files[0].decision).toBe('blocked');
    const md = repo.guard(['ci', '--base', 'main', '--format', 'markdown']);
    expect(md.code).toBe(1);
    expect(md.stdout).toMatch(/^## guard ci: 1 change blocked\n/);
    expect(md.stdout).toContain(
      '| File | Status | Existing lines | Deleted | Added | Change | Decision | Why |',
    );
  });

  it('a bad base ref is a usage error with a hint (exit 2)', () => {
    const repo = prRepo();
    const r = repo.guard(['ci', '--base', 'no-such-branch']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      'guard: --base no-such-branch: no such commit in this repository\n' +
        'hint: fetch the base branch first (git fetch origin main), or pass a commit id; in GitHub Actions use github.event.pull_request.base.sha with fetch-depth: 0\n',
    );
    const j = repo.guard(['ci', '--base', 'no-such-branch', '--format', 'json']);
    expect(j.code).toBe(2);
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: false, error: { code: 'E_USAGE' } });
    expect(repo.guard(['ci', '--base', 'main', '--head', 'HEAD:state.py']).code).toBe(2);
  });

  it('a shallow clone without the merge-base says so and names the fix (exit 2); after unshallow it works', () => {
    const origin = prRepo();
    repo2Commits(origin);
    const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'guard-ci-clone-')));
    const clone = new TestRepo(dir);
    clone.git(['clone', '-q', '--depth', '1', '--branch', 'pr', `file://${origin.dir}`, '.']);
    clone.git(['fetch', '-q', '--depth', '1', 'origin', 'main:refs/remotes/origin/main']);
    expect(clone.git(['rev-parse', '--is-shallow-repository']).trim()).toBe('true');

    const r = clone.guard(['ci', '--base', 'origin/main']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'guard: no merge-base of origin/main and HEAD in this shallow clone: the history that joins them was not fetched\n' +
        'hint: fetch the full history: `fetch-depth: 0` in actions/checkout, or `git fetch --unshallow` (or `git fetch --deepen=N`)\n',
    );
    clone.git(['fetch', '-q', '--unshallow', 'origin']);
    const ok = clone.guardJson(['ci', '--base', 'origin/main']);
    expect(ok.code).toBe(0);
    expect(ok.json.files.map((f: any) => f.path)).toEqual(['notes.txt']);
    clone.cleanup();
  });

  it('writes SARIF 2.1.0: one error result per blocked file, most severe first', () => {
    const repo = prRepo({ 'big.py': lines(300) });
    repo.git(['rm', '-q', 'big.py']);
    repo.write('state.py', fixture('state_replacement.py'));
    repo.write('notes.txt', lines(22));
    repo.commitAll('delete, rewrite, small edit');
    const r = repo.guard(['ci', '--base', 'main', '--format', 'sarif']);
    expect(r.code).toBe(1);
    const sarif = JSON.parse(r.stdout);
    expect(sarif.version).toBe('2.1.0');
    expect(sarif.$schema).toMatch(/sarif-2\.1\.0/);
    expect(sarif.runs).toHaveLength(1);
    const run = sarif.runs[0];
    expect(run.tool.driver.name).toBe('guard');
    const ruleIds = run.tool.driver.rules.map((x: any) => x.id);
    expect(run.results).toHaveLength(2);
    expect(run.results.map((x: any) => x.ruleId)).toEqual(['guard/delete', 'guard/replace']);
    for (const res of run.results) {
      expect(ruleIds).toContain(res.ruleId);
      expect(run.tool.driver.rules[res.ruleIndex].id).toBe(res.ruleId);
      expect(res.level).toBe('error');
      expect(typeof res.message.text).toBe('string');
      expect(res.message.text.length).toBeGreaterThan(0);
      const loc = res.locations[0].physicalLocation;
      expect(typeof loc.artifactLocation.uri).toBe('string');
      expect(Number.isInteger(loc.region.startLine) && loc.region.startLine >= 1).toBe(true);
    }
    expect(
      run.results.map((x: any) => x.locations[0].physicalLocation.artifactLocation.uri),
    ).toEqual(['big.py', 'state.py']);
  });

  it('checks 1,000 changed files with the same number of git processes as 10', () => {
    const count = (n: number) => {
      const files: Record<string, string> = {};
      for (let i = 0; i < n; i++) files[`pkg/m${i}.py`] = lines(120, `v${i}`);
      const repo = makeRepo(files);
      repo.git(['checkout', '-q', '-b', 'pr']);
      for (let i = 0; i < n; i++)
        repo.write(`pkg/m${i}.py`, i % 2 ? lines(10, `w${i}`) : lines(121, `v${i}`));
      repo.commitAll('many');
      const trace = tmpFile('trace.txt');
      const r = repo.guardJson(['ci', '--base', 'main'], { env: { GUARD_TRACE_GIT: trace } });
      expect(r.code).toBe(1);
      expect(r.json.files).toHaveLength(n);
      expect(r.json.blocked).toBe(n / 2);
      return readFileSync(trace, 'utf8').split('\n').filter(Boolean);
    };
    const small = count(10);
    const large = count(1000);
    expect(large.length).toBe(small.length);
    expect(large.length).toBeLessThanOrEqual(8);
  });

  it('measures 100 changed notebooks on their cells with the same number of git processes as 2 (holes4)', () => {
    const nb = (src: string) =>
      JSON.stringify(
        {
          cells: [{ cell_type: 'code', id: 'c', metadata: {}, outputs: [], source: src }],
          metadata: {},
          nbformat: 4,
          nbformat_minor: 5,
        },
        null,
        1,
      ) + '\n';
    const count = (n: number, ext: string) => {
      const files: Record<string, string> = {};
      for (let i = 0; i < n; i++) files[`nb/m${i}.${ext}`] = nb(lines(120, `v${i}`));
      const repo = makeRepo(files);
      repo.git(['checkout', '-q', '-b', 'pr']);
      // half lose their 120-line cell's work (one JSON line to git), half change one line of it
      for (let i = 0; i < n; i++)
        repo.write(`nb/m${i}.${ext}`, nb(i % 2 ? lines(2, `w${i}`) : lines(120, `v${i}`) + 'x\n'));
      repo.commitAll('many');
      const trace = tmpFile('trace.txt');
      const r = repo.guardJson(['ci', '--base', 'main'], { env: { GUARD_TRACE_GIT: trace } });
      expect(r.json.files).toHaveLength(n);
      return { r, git: readFileSync(trace, 'utf8').split('\n').filter(Boolean) };
    };
    const small = count(2, 'ipynb');
    const large = count(100, 'ipynb');
    expect(large.r.json.blocked).toBe(50);
    expect(large.git.length).toBe(small.git.length);
    // only notebooks pay: the cells' diff (and its -w pass for would-be replacements)
    expect(large.git.length).toBeLessThanOrEqual(count(2, 'json').git.length + 2);
  });
});

/**
 * The `run: |` scripts of action.yml's steps, by step name. A small reader for
 * the one YAML shape used there (a literal block under `run:`), so the test
 * needs no YAML dependency.
 */
function actionScripts(): Map<string, string> {
  const text = readFileSync(path.join(ROOT, 'action.yml'), 'utf8').split('\n');
  const scripts = new Map<string, string>();
  let name = '';
  for (let i = 0; i < text.length; i++) {
    const named = /^\s+- name: (.+)$/.exec(text[i]!);
    if (named) name = named[1]!;
    const run = /^(\s+)run: \|$/.exec(text[i]!);
    if (!run) continue;
    const body: string[] = [];
    let indent = -1;
    for (i++; i < text.length; i++) {
      const l = text[i]!;
      if (l.trim() === '') {
        body.push('');
        continue;
      }
      const lead = l.length - l.trimStart().length;
      if (lead <= run[1]!.length) {
        i--;
        break;
      }
      if (indent < 0) indent = lead;
      body.push(l.slice(indent));
    }
    scripts.set(name, body.join('\n'));
  }
  return scripts;
}

function runStep(
  script: string,
  cwd: string,
  env: Record<string, string>,
): { code: number; stdout: string } {
  const r = spawnSync('bash', ['-c', script], { cwd, env: cleanEnv({ CI: 'true', ...env }) });
  return { code: r.status ?? 128, stdout: r.stdout.toString('utf8') + r.stderr.toString('utf8') };
}

describe('action.yml', () => {
  it('writes SARIF without failing on a block, then fails the job in the check step', () => {
    const steps = actionScripts();
    expect([...steps.keys()]).toEqual(['Install guard', 'guard ci (SARIF)', 'guard ci']);
    const repo = prRepo();
    repo.write('state.py', fixture('state_replacement.py'));
    repo.commitAll('rewrite');
    const workspace = repo.dir;
    const summary = tmpFile('summary.md');
    const env = {
      GUARD_BIN: CLI,
      GUARD_BASE: repo.git(['rev-parse', 'main']).trim(),
      GUARD_HEAD: repo.git(['rev-parse', 'HEAD']).trim(),
      GUARD_SARIF: 'reports/guard.sarif',
      GUARD_FORMAT: 'github',
      GITHUB_WORKSPACE: workspace,
      GITHUB_STEP_SUMMARY: summary,
    };
    const sarifStep = runStep(steps.get('guard ci (SARIF)')!, workspace, env);
    expect(sarifStep.code).toBe(0);
    const sarif = JSON.parse(readFileSync(path.join(workspace, 'reports/guard.sarif'), 'utf8'));
    expect(sarif.runs[0].results).toHaveLength(1);

    const check = runStep(steps.get('guard ci')!, workspace, env);
    expect(check.code).toBe(1);
    expect(check.stdout).toMatch(/^::error file=state\.py,/);
    expect(readFileSync(summary, 'utf8')).toContain('❌ blocked');

    const noBase = runStep(steps.get('guard ci')!, workspace, { ...env, GUARD_BASE: '' });
    expect(noBase.code).toBe(2);
    expect(noBase.stdout).toContain('::error title=guard::no base commit');

    const clean = runStep(steps.get('guard ci')!, workspace, {
      ...env,
      GUARD_HEAD: env.GUARD_BASE,
    });
    expect(clean.code).toBe(0);
  });
});

/** main moves on after pr branched, so a depth-1 fetch of each has no common commit. */
function repo2Commits(repo: TestRepo): void {
  repo.write('notes.txt', lines(22));
  repo.commitAll('pr: edit notes');
  repo.git(['checkout', '-q', 'main']);
  repo.write('main.txt', 'later on main\n');
  repo.commitAll('main moves on');
  repo.git(['checkout', '-q', 'pr']);
}
