import { describe, expect, it } from 'vitest';
import { findElisions, isElisionLine } from '../../src/core/elision.js';

describe('elision placeholders', () => {
  it.each([
    '// ... existing code ...',
    '    // ...existing code...',
    '# ... rest of the code here ...',
    '# rest of code here',
    '# Rest of the file unchanged',
    '/* unchanged */',
    '/* ... */',
    '// ...',
    '# …',
    '    # ... rest of the existing methods unchanged ...',
    '// existing implementation unchanged',
    '// keep existing methods',
    '<!-- ... existing content ... -->',
    '{/* ... existing code ... */}',
    '-- rest of the code remains the same',
    '// remaining code unchanged',
    '// ... (other methods) ...',
    '# previous code omitted',
    // issue 13: phrasings the old patterns missed
    '// the rest of the code',
    '/* (rest of the original implementation) */',
    '# ... 150 lines omitted ...',
    '{/* Rest of the component remains the same */}',
    '// same as before',
    '# snip',
    '// -- snip --',
    '// ... rest\u200b of the code ...',
    '// ...rest\u00a0of the file unchanged',
    '<!-- [12 lines omitted] -->',
    '(* existing code unchanged *)',
    // template languages: Jinja, Handlebars, JSP, ERB, Razor, Lua blocks
    '{# ... rest of the template ... #}',
    '{{!-- existing markup unchanged --}}',
    '<%-- ... existing code ... --%>',
    '<%# rest of the file unchanged %>',
    '@* ... existing content ... *@',
    '--[[ ... rest of the module ... ]]',
  ])('detects %j', (line) => {
    expect(isElisionLine(line)).toBe(true);
  });

  it.each([
    'const rest = args.slice(1); // rest of args',
    '# This module keeps state.',
    '// TODO: handle the rest',
    'print("...")',
    '...',
    'x = [...existing]',
    '// unchanged behaviour: see issue 12 for the long story of why',
    '# return the rest of the list',
    'function rest() {}',
    // issue 13: ordinary comments the old patterns flagged
    '// Keep the existing behaviour: ...',
    '// previous implementation leaked handles',
    '# keep the existing behaviour',
    '// unchanged since v2: callers depend on the order',
  ])('leaves real code and prose alone: %j', (line) => {
    expect(isElisionLine(line)).toBe(false);
  });

  it('a placeholder counts only where lines were removed, in the same hunk', () => {
    const old = [
      'function a() {',
      '  one();',
      '  two();',
      '  three();',
      '}',
      '',
      'function b() {',
      '  four();',
      '}',
      '',
    ].join('\n');
    // in place of removed lines: a truncation
    const truncated = [
      'function a() {',
      '  // ... existing code ...',
      '}',
      '',
      'function b() {',
      '  four();',
      '}',
      '',
    ].join('\n');
    expect(findElisions(truncated, old)).toEqual([{ line: 2, text: '// ... existing code ...' }]);
    // the same words added where nothing was removed: a comment
    const commented = [
      'function a() {',
      '  // ... existing code ...',
      '  one();',
      '  two();',
      '  three();',
      '}',
      '',
      'function b() {',
      '  four();',
      '}',
      '',
    ].join('\n');
    expect(findElisions(commented, old)).toEqual([]);
    // added in one place while lines are removed far away: not in place of them
    const elsewhere = [
      'function a() {',
      '  // ...',
      '  one();',
      '  two();',
      '  three();',
      '}',
      '',
      'function b() {',
      '}',
      '',
    ].join('\n');
    expect(findElisions(elsewhere, old)).toEqual([]);
  });

  it('a `// ...` in a README code example that removes nothing is not a placeholder', () => {
    const old = '# Use\n\n```js\nconst g = guard();\n```\n';
    const next = '# Use\n\n```js\nconst g = guard();\n// ...\n```\n';
    expect(findElisions(next, old)).toEqual([]);
  });

  it('a placeholder the file already had counts only where it now borders removed lines (the two-step truncation)', () => {
    const body = [
      'def f():',
      '    # ... existing code ...',
      '    one()',
      '    two()',
      '    three()',
      '    return 1',
      '',
    ];
    // step 1 added the placeholder and removed nothing; step 2 cuts the code right below it
    const cut = ['def f():', '    # ... existing code ...', '    return 1', ''];
    expect(findElisions(cut.join('\n'), body.join('\n'))).toEqual([
      { line: 2, text: '# ... existing code ...' },
    ]);
    // an old placeholder far from an unrelated removal is not a truncation
    const far = [
      'def f():',
      '    # ... existing code ...',
      '    one()',
      '    two()',
      '    three()',
      '',
    ];
    expect(findElisions(far.join('\n'), body.join('\n'))).toEqual([]);
  });

  it('reads fullwidth and other compatibility forms as what they look like', () => {
    expect(
      isElisionLine('// \uff0e\uff0e\uff0e \uff45\uff58\uff49\uff53\uff54\uff49\uff4e\uff47 code'),
    ).toBe(true);
  });

  // issue 20 / issue 23: a placeholder stands where CODE was removed, alone; docs and prose are not one
  const code = (n: number) => Array.from({ length: n }, (_, i) => `  total += w${i} * v${i};`);

  it("a docs example's `...` in a rewritten JSDoc comment is not a placeholder (no code removed)", () => {
    const old = [
      '/**',
      ' * Parse a header.',
      ' * @example',
      ' *   parse("a")',
      ' */',
      'export function parse() {',
      ...code(4),
      '}',
      '',
    ].join('\n');
    const next = [
      '/**',
      ' * Parse one header value.',
      ' * @example',
      ' *   parse("a")',
      ' *   // ...',
      ' *   ...',
      ' */',
      'export function parse() {',
      ...code(4),
      '}',
      '',
    ].join('\n');
    expect(findElisions(next, old)).toEqual([]);
  });

  it('a `//   ...` inside a `//` example, where code was rewritten beside it, continues prose', () => {
    const old = ['// Example:', '//   app.use(x)', 'function run() {', ...code(6), '}', ''].join(
      '\n',
    );
    const next = [
      '// Example:',
      '//   app.use(x)',
      '//   ...',
      'function run() {',
      '  total = 0;',
      ...code(6).slice(3),
      '}',
      '',
    ].join('\n');
    expect(findElisions(next, old)).toEqual([]);
  });

  it('a sentence that runs on in a block comment ("the rest stays unstaged") is prose, where code changed beside it', () => {
    const old = ['/**', ' * Take some hunks', ' */', 'function take() {', ...code(5), '}', ''].join(
      '\n',
    );
    const next = [
      '/**',
      ' * Take some hunks',
      ' * (the rest stays unstaged, as with `git add -p`).',
      ' */',
      'function take() {',
      '  total = 1;',
      ...code(5).slice(2),
      '}',
      '',
    ].join('\n');
    expect(findElisions(next, old)).toEqual([]);
  });

  it('a list of quoted strings cut behind a placeholder is code removed (a leading quote is no comment there)', () => {
    const old = [
      'const NAMES = [',
      ...Array.from({ length: 12 }, (_, i) => `  'name${i}',`),
      '];',
      '',
    ].join('\n');
    const next = ['const NAMES = [', "  'name0',", '  // ... other entries ...', '];', ''].join(
      '\n',
    );
    expect(findElisions(next, old)).toEqual([{ line: 3, text: '// ... other entries ...' }]);
  });

  it('prose that says "rest" where no code was removed is not a placeholder', () => {
    expect(isElisionLine("// rest converted to strings that can't be safely concatenated")).toBe(
      false,
    );
    const old = [
      'function f(args) {',
      '  const out = [];',
      ...code(4),
      '  return out;',
      '}',
      '',
    ].join('\n');
    const next = [
      'function f(args) {',
      '  const out = [];',
      "  // rest converted to strings that can't be safely concatenated",
      ...code(4),
      '  return out;',
      '}',
      '',
    ].join('\n');
    expect(findElisions(next, old)).toEqual([]);
  });

  it('a truncation is still caught in a block comment of its own, and after a comment line when it stands alone', () => {
    const old = ['class A {', ...code(8), '}', ''].join('\n');
    const block = [
      'class A {',
      '  /**',
      '   * ... rest of the methods unchanged ...',
      '   */',
      '}',
      '',
    ].join('\n');
    expect(findElisions(block, old)).toHaveLength(1);
    const after = ['class A {', '  // setup', '  // ... existing code ...', '}', ''].join('\n');
    expect(findElisions(after, old)).toEqual([{ line: 3, text: '// ... existing code ...' }]);
  });

  it('keeps the combining marks of scripts such as Thai: a word is not cut where a vowel sign stands', () => {
    expect(
      isElisionLine(
        '# ... (\u0e42\u0e04\u0e49\u0e14\u0e2a\u0e48\u0e27\u0e19\u0e2d\u0e37\u0e48\u0e19\u0e40\u0e2b\u0e21\u0e37\u0e2d\u0e19\u0e40\u0e14\u0e34\u0e21)',
      ),
    ).toBe(true);
  });

  it.each([
    '# ... existing fixtures ...',
    '{/* ... other items ... */}',
    '// No changes below this line',
    '# (truncated for brevity)',
    '// Methods below this point are unchanged',
    '# as before: validation',
    '// snip -- unchanged',
  ])('the general rule catches %j (elsewhere, omitted, unchanged, truncated)', (line) => {
    expect(isElisionLine(line)).toBe(true);
  });
});
