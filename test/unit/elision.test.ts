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
  ])('leaves real code and prose alone: %j', (line) => {
    expect(isElisionLine(line)).toBe(false);
  });

  it('reports only placeholders the old text did not have, with 1-based lines', () => {
    const old = 'a\n// ... existing code ...\nb\n';
    const next = 'a\n// ... existing code ...\n# rest of the code here\n';
    expect(findElisions(next, old)).toEqual([{ line: 3, text: '# rest of the code here' }]);
  });
});
