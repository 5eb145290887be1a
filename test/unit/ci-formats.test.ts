import { describe, expect, it } from 'vitest';
import {
  trailerApprovalKey,
  approvalTrailer,
  parseRangeLog,
  parseTrailerValue,
} from '../../src/git/approvals.js';
import { cUnquote } from '../../src/core/quote.js';
import { firstChangedLine } from '../../src/flows/gates/ci.js';
import {
  bySeverity,
  escapeData,
  escapeProperty,
  MAX_ANNOTATIONS,
  mdCell,
  pathToUri,
  renderAnnotations,
  renderMarkdown,
  renderSarif,
  renderText,
  ruleOf,
  type CiReport,
  type CiReportFile,
} from '../../src/ui/ci-formats.js';
import { makeColors } from '../../src/ui/color.js';

const B = '0123456789abcdef0123456789abcdef01234567';

function file(over: Partial<CiReportFile>): CiReportFile {
  return {
    path: 'a.py',
    status: 'modify',
    existingLines: 10,
    linesAdded: 1,
    linesDeleted: 1,
    changeRatio: 0.1,
    binary: false,
    protected: false,
    symlink: false,
    needsApproval: false,
    reasons: [],
    rules: [],
    decision: 'allowed',
    line: 1,
    ...over,
  };
}

const del = (p: string, n: number) =>
  file({
    path: p,
    status: 'delete',
    existingLines: n,
    linesDeleted: n,
    linesAdded: 0,
    changeRatio: 1,
    needsApproval: true,
    decision: 'blocked',
    reasons: [`deletes a ${n}-line file (100+ lines need approval)`],
    rules: ['delete-large'],
  });
const rep = (p: string, n: number, d: number) =>
  file({
    path: p,
    status: 'replace',
    existingLines: n,
    linesDeleted: d,
    changeRatio: d / n,
    needsApproval: true,
    decision: 'blocked',
    reasons: [
      `replaces ${Math.round((100 * d) / n)}% of a ${n}-line file (50% or more of 100+ lines needs approval)`,
    ],
    rules: ['replace-large'],
  });
const prot = (p: string) =>
  file({
    path: p,
    protected: true,
    needsApproval: true,
    decision: 'blocked',
    reasons: ['protected path (config "protect")'],
    rules: ['protected'],
  });

function report(files: CiReportFile[]): CiReport {
  return {
    base: 'b'.repeat(40),
    head: 'c'.repeat(40),
    mergeBase: 'd'.repeat(40),
    bootstrap: false,
    files,
    blocked: files.filter((f) => f.decision === 'blocked').length,
  };
}

describe('GitHub workflow command escaping', () => {
  it('escapes % CR LF in data, and also : and , in properties', () => {
    expect(escapeData('100% done\r\nnext: a,b')).toBe('100%25 done%0D%0Anext: a,b');
    expect(escapeProperty('dir:x/a,b%.py\n')).toBe('dir%3Ax/a%2Cb%25.py%0A');
  });

  it('puts a file name with a comma and a colon into one escaped property', () => {
    const r = renderAnnotations(report([rep('a,b:c.py', 200, 150)]));
    expect(r.split('\n')[0]).toMatch(
      /^::error file=a%2Cb%3Ac\.py,line=1,title=guard%3A replace of a%2Cb%3Ac\.py needs approval::a,b:c\.py: /,
    );
  });
});

describe('severity', () => {
  it('orders delete > replace > protected > others, larger loss first', () => {
    const files = [
      prot('.github/workflows/ci.yml'),
      rep('small.py', 120, 70),
      del('d1.py', 150),
      rep('big.py', 900, 800),
      del('d2.py', 600),
      file({
        path: 'z',
        binary: true,
        needsApproval: true,
        decision: 'blocked',
        reasons: ['replaces a binary file'],
        rules: ['binary-replace'],
      }),
    ];
    expect([...files].sort(bySeverity).map((f) => f.path)).toEqual([
      'd2.py',
      'd1.py',
      'big.py',
      'small.py',
      '.github/workflows/ci.yml',
      'z',
    ]);
    expect(files.map(ruleOf)).toEqual([
      'guard/protected',
      'guard/replace',
      'guard/delete',
      'guard/replace',
      'guard/delete',
      'guard/binary',
    ]);
  });

  it("reads the rule ids, never the reasons' wording; the most severe rule wins", () => {
    const reworded = file({
      needsApproval: true,
      decision: 'blocked',
      reasons: ['whatever words'],
      rules: ['delete-large'],
    });
    expect(ruleOf(reworded)).toBe('guard/delete');
    const misleading = file({
      needsApproval: true,
      decision: 'blocked',
      reasons: ['deletes a 900-line file'],
      rules: ['elision'],
    });
    expect(ruleOf(misleading)).toBe('guard/elision');
    const both = file({
      needsApproval: true,
      decision: 'blocked',
      protected: true,
      reasons: ['a', 'b'],
      rules: ['protected', 'replace-large'],
    });
    expect(ruleOf(both)).toBe('guard/replace');
    expect(
      ruleOf(file({ binary: true, status: 'delete', reasons: ['x'], rules: ['binary-delete'] })),
    ).toBe('guard/binary');
    expect(ruleOf(file({ reasons: ['x'], rules: ['not-written'] }))).toBe('guard/needs-approval');
  });

  it('annotates blocked files only, most severe first, at most MAX_ANNOTATIONS', () => {
    const files = [rep('r.py', 200, 150), file({ path: 'ok.py' }), del('d.py', 300)];
    const lines = renderAnnotations(report(files)).split('\n');
    expect(
      lines.filter((l) => l.startsWith('::error')).map((l) => /file=([^,]+)/.exec(l)![1]),
    ).toEqual(['d.py', 'r.py']);
    const many = Array.from({ length: MAX_ANNOTATIONS + 5 }, (_, i) => rep(`f${i}.py`, 200, 150));
    const out = renderAnnotations(report(many)).split('\n');
    expect(out.filter((l) => l.startsWith('::error'))).toHaveLength(MAX_ANNOTATIONS);
    expect(out).toContain(
      '::warning title=guard::5 more blocked files are listed in the job summary',
    );
  });
});

describe('Markdown summary', () => {
  it('escapes table cells so a file name cannot break the table', () => {
    expect(mdCell('a|b\nc<d>`e`*_[x]')).toBe('a\\|b\\nc&lt;d&gt;\\`e\\`\\*\\_\\[x\\]');
  });

  it('lists every file, blocked first, with status, metrics and decision', () => {
    const md = renderMarkdown(
      report([
        file({ path: 'ok.py' }),
        rep('r.py', 200, 150),
        file({
          path: 'ap.py',
          status: 'replace',
          needsApproval: true,
          decision: 'approved',
          approvedBy: 'e'.repeat(40),
          existingLines: 200,
          linesDeleted: 200,
          changeRatio: 1,
        }),
      ]),
    );
    expect(md).toBe(
      [
        '## guard ci: 1 change blocked',
        '',
        '3 files changed between the merge-base `dddddddddd` and `cccccccccc`: 1 allowed, 1 approved, 1 blocked. Policy: `guard.config.json` as committed at the merge-base.',
        '',
        '| File | Status | Existing lines | Deleted | Added | Change | Decision | Why |',
        '| --- | --- | ---: | ---: | ---: | ---: | --- | --- |',
        '| r.py | replace | 200 | 150 | 1 | 75% | ❌ blocked | replaces 75% of a 200-line file (50% or more of 100+ lines needs approval) |',
        '| ap.py | replace | 200 | 200 | 1 | 100% | ✅ approved in eeeeeeeeee |  |',
        '| ok.py | modify | 10 | 1 | 1 | 10% | allowed |  |',
        '',
        'A person reviews the change with `guard review` and commits it with `guard review --commit`, which records a `Guard-Approved: <path> <blob>` trailer for the exact content approved. Any later edit of that file needs a new approval.',
        '',
      ].join('\n'),
    );
  });

  it('says passed when nothing is blocked', () => {
    expect(renderMarkdown(report([file({})]))).toMatch(/^## guard ci: passed\n/);
    expect(renderText(report([]), makeColors(false))).toMatch(
      /^guard ci: passed: 0 changed files, 0 approved, 0 blocked/,
    );
  });
});

describe('SARIF', () => {
  it('has the 2.1.0 structure and one result per blocked file', () => {
    const s = renderSarif(
      report([file({ path: 'ok.py' }), rep('dir/my file#1.py', 200, 150), del('d.py', 300)]),
      '1.2.3',
    ) as any;
    expect(s.version).toBe('2.1.0');
    expect(s.$schema).toContain('sarif-2.1.0');
    expect(s.runs[0].tool.driver).toMatchObject({ name: 'guard', version: '1.2.3' });
    const results = s.runs[0].results;
    expect(results).toHaveLength(2);
    expect(results.map((r: any) => r.locations[0].physicalLocation.artifactLocation.uri)).toEqual([
      'd.py',
      'dir/my%20file%231.py',
    ]);
    for (const r of results) {
      expect(s.runs[0].tool.driver.rules[r.ruleIndex].id).toBe(r.ruleId);
      expect(r.level).toBe('error');
      expect(r.locations[0].physicalLocation.region.startLine).toBeGreaterThanOrEqual(1);
    }
  });

  it('percent-encodes each path segment, keeping the slashes', () => {
    expect(pathToUri('a b/c%d/e?.py')).toBe('a%20b/c%25d/e%3F.py');
  });
});

describe('Guard-Approved trailers', () => {
  it('takes the blob as the last token, so paths with spaces need no quoting', () => {
    expect(parseTrailerValue(`my state.py ${B}`)).toEqual({ paths: ['my state.py'], blob: B });
    expect(parseTrailerValue(`state.py ${B.toUpperCase()}`)).toEqual({
      paths: ['state.py'],
      blob: B,
    });
    expect(parseTrailerValue('state.py')).toBeNull();
    expect(parseTrailerValue('state.py deadbeef')).toBeNull();
    expect(parseTrailerValue(` ${B}`)).toBeNull();
  });

  it('names the mode of a symlink or a gitlink after the blob; a trailer without one approves a regular file only', () => {
    expect(approvalTrailer('a.py', B, '100755')).toBe(`Guard-Approved: a.py ${B}`);
    expect(approvalTrailer('link', B, '120000')).toBe(`Guard-Approved: link ${B} 120000`);
    expect(parseTrailerValue(`my link ${B} 120000`)).toEqual({
      paths: ['my link'],
      blob: B,
      mode: '120000',
    });
    expect(parseTrailerValue(`sub ${B} 160000`)).toEqual({
      paths: ['sub'],
      blob: B,
      mode: '160000',
    });
    // a path that ends in a mode-like word, approved as a regular file
    expect(parseTrailerValue(`odd 120000 ${B}`)).toEqual({ paths: ['odd 120000'], blob: B });
    expect(trailerApprovalKey('f', B)).toBe(trailerApprovalKey('f', B, '100755'));
    expect(trailerApprovalKey('f', B)).not.toBe(trailerApprovalKey('f', B, '120000'));
  });

  it('unquotes C-quoted paths as git writes them, and keeps the literal too', () => {
    expect(cUnquote('"a\\nb"')).toBe('a\nb');
    expect(cUnquote('"tab\\there \\"q\\" \\\\"')).toBe('tab\there "q" \\');
    expect(cUnquote('"\\303\\251t\\303\\251.py"')).toBe('été.py');
    expect(cUnquote('"bad\\q"')).toBeNull();
    expect(cUnquote('plain')).toBeNull();
    expect(parseTrailerValue(`"a\\nb.py" ${B}`)).toEqual({
      paths: ['"a\\nb.py"', 'a\nb.py'],
      blob: B,
    });
  });

  it('reads git log -z --raw output: oid, approvals, agents, then a path after each raw line (a path that looks like an oid stays a path)', () => {
    const c1 = '1'.repeat(40);
    const c2 = '2'.repeat(40);
    const raw = (s: string) => `\n:100644 100644 ${'a'.repeat(40)} ${'b'.repeat(40)} ${s}`;
    const fields = [
      c1,
      '',
      '',
      raw('M'),
      c2,
      c2,
      `a.py ${B}\nnot a trailer\nb c.py ${B}\n`,
      'claude s1\n',
      raw('A'),
      'x.py',
      ':odd',
      'more',
    ];
    expect(parseRangeLog(fields)).toEqual([
      { commit: c1, approved: '', agents: '', paths: [c2] },
      {
        commit: c2,
        approved: `a.py ${B}\nnot a trailer\nb c.py ${B}\n`,
        agents: 'claude s1\n',
        paths: ['x.py', 'more'],
      },
    ]);
  });

  it('points annotations at the first changed line', () => {
    expect(
      firstChangedLine({ oldText: 'a\nb\nc\n', newText: 'a\nB\nc\n', newMode: '100644' }),
    ).toBe(2);
    expect(firstChangedLine({ oldText: 'a\nb\n', newText: 'a\nb\nc\n', newMode: '100644' })).toBe(
      3,
    );
    expect(firstChangedLine({ oldText: 'a\nb\nc\n', newText: 'a\n', newMode: '100644' })).toBe(1);
    expect(firstChangedLine({ oldText: '', newText: '', newMode: '100644' })).toBe(1);
    expect(firstChangedLine({ oldText: 'a\n', newMode: null })).toBe(1);
  });
});
