import { describe, it, expect } from 'vitest';
import { extend, EXTEND_EXTENSIONS } from '../../src/core/extend.js';
import { applyStrategy } from '../../src/core/strategies.js';

const lines = (...ls: string[]) => ls.map((l) => l + '\n').join('');

async function extended(path: string, oldText: string, newText: string): Promise<string> {
  const r = await extend(path, oldText, newText);
  if (!r.ok) throw new Error(`extend failed: ${r.reason}`);
  return r.content;
}

describe('extend: Python', () => {
  const OLD = lines(
    'import os',
    '',
    '',
    'class Shop:',
    '    """A shop."""',
    '',
    '    def price(self, item):',
    '        return 1',
    '',
    '',
    'def main():',
    '    print(Shop().price("x"))',
    '',
    '',
    'if __name__ == "__main__":',
    '    main()',
  );

  it('adds new methods at the end of the class, indented like the old ones, old ones untouched', async () => {
    const NEW = lines(
      'class Shop:',
      '  def price(self, item):',
      '    return 2  # the agent changed this',
      '',
      '  # Sums prices.',
      '  def total(self, items):',
      '    return sum(self.price(i) for i in items)',
      '',
      '  @property',
      '  def name(self):',
      '    return "shop"',
    );
    const r = await extend('shop.py', OLD, NEW);
    expect(r).toEqual({
      ok: true,
      added: ['Shop.total', 'Shop.name'],
      content: lines(
        'import os',
        '',
        '',
        'class Shop:',
        '    """A shop."""',
        '',
        '    def price(self, item):',
        '        return 1',
        '',
        '    # Sums prices.',
        '    def total(self, items):',
        '      return sum(self.price(i) for i in items)',
        '',
        '    @property',
        '    def name(self):',
        '      return "shop"',
        '',
        '',
        'def main():',
        '    print(Shop().price("x"))',
        '',
        '',
        'if __name__ == "__main__":',
        '    main()',
      ),
    });
  });

  it('adds a new top-level function after its neighbour, before the __main__ block, and new imports', async () => {
    const NEW = lines(
      'import os',
      'import sys',
      'from pathlib import Path',
      '',
      '',
      'def main():',
      '    print("changed")',
      '',
      '',
      'def helper(x: int) -> int:',
      '    return x * 2',
      '',
      '',
      'LIMIT = 10',
    );
    expect(await extended('tool.py', OLD, NEW)).toBe(
      lines(
        'import os',
        'import sys',
        'from pathlib import Path',
        '',
        '',
        'class Shop:',
        '    """A shop."""',
        '',
        '    def price(self, item):',
        '        return 1',
        '',
        '',
        'def main():',
        '    print(Shop().price("x"))',
        '',
        '',
        'def helper(x: int) -> int:',
        '    return x * 2',
        '',
        'LIMIT = 10',
        '',
        '',
        'if __name__ == "__main__":',
        '    main()',
      ),
    );
  });

  it('adds only the missing names of an import list', async () => {
    const out = await extended(
      'm.py',
      lines('from a import x', '', 'y = x'),
      lines('from a import x, z as w', '', 'y = x'),
    );
    expect(out).toBe(lines('from a import x', 'from a import z as w', '', 'y = x'));
  });

  it('keeps CRLF line endings and a missing final newline of the old file', async () => {
    const out = await extended('w.py', 'def a():\r\n    return 1', 'def b():\n    return 2\n');
    expect(out).toBe('def a():\r\n    return 1\r\n\r\n\r\ndef b():\r\n    return 2\r\n');
  });

  it('puts a declaration that comes first in the new file before the old one that follows it', async () => {
    const out = await extended(
      'o.py',
      lines('"""Docs."""', '', 'def b():', '    pass'),
      lines('def a():', '    pass', '', '', 'def b():', '    pass'),
    );
    expect(out).toBe(
      lines('"""Docs."""', '', 'def a():', '    pass', '', '', 'def b():', '    pass'),
    );
  });

  it('returns the old text unchanged when the new side adds nothing', async () => {
    const r = await extend('shop.py', OLD, lines('def main():', '    pass'));
    expect(r).toEqual({ ok: true, content: OLD, added: [] });
  });
});

describe('extend: TypeScript and JavaScript', () => {
  const OLD = lines(
    "import { readFile } from 'node:fs/promises';",
    '',
    'export class Cart {',
    '  private items: string[] = [];',
    '',
    '  add(item: string): void {',
    '    this.items.push(item);',
    '  }',
    '}',
    '',
    'export function total(c: Cart): number {',
    '  return 0;',
    '}',
  );

  it('adds new members at the end of the class body', async () => {
    const NEW = lines(
      'export class Cart {',
      '    private items: string[] = [];',
      '    readonly id = "ünï";',
      '',
      '    add(item: string): void {',
      '        throw new Error("replaced");',
      '    }',
      '',
      '    static empty(): Cart {',
      '        return new Cart();',
      '    }',
      '    get size(): number { return this.items.length; }',
      '}',
    );
    const r = await extend('cart.ts', OLD, NEW);
    expect(r).toEqual({
      ok: true,
      added: ['Cart.id', 'Cart.empty', 'Cart.size'],
      content: lines(
        "import { readFile } from 'node:fs/promises';",
        '',
        'export class Cart {',
        '  private items: string[] = [];',
        '',
        '  add(item: string): void {',
        '    this.items.push(item);',
        '  }',
        '  readonly id = "ünï";',
        '',
        '  static empty(): Cart {',
        '      return new Cart();',
        '  }',
        '',
        '  get size(): number { return this.items.length; }',
        '}',
        '',
        'export function total(c: Cart): number {',
        '  return 0;',
        '}',
      ),
    });
  });

  it('adds a new exported function with its doc comment, and new imports after the old ones', async () => {
    const NEW = lines(
      "import { readFile, writeFile } from 'node:fs/promises';",
      "import path from 'node:path';",
      '',
      'export function total(c: Cart): number {',
      '  return 42;',
      '}',
      '',
      '/** Saves the cart. */',
      'export async function save(c: Cart, file: string): Promise<void> {',
      '  await writeFile(path.resolve(file), JSON.stringify(c));',
      '}',
    );
    expect(await extended('cart.ts', OLD, NEW)).toBe(
      lines(
        "import { readFile } from 'node:fs/promises';",
        "import { writeFile } from 'node:fs/promises';",
        "import path from 'node:path';",
        '',
        'export class Cart {',
        '  private items: string[] = [];',
        '',
        '  add(item: string): void {',
        '    this.items.push(item);',
        '  }',
        '}',
        '',
        'export function total(c: Cart): number {',
        '  return 0;',
        '}',
        '',
        '/** Saves the cart. */',
        'export async function save(c: Cart, file: string): Promise<void> {',
        '  await writeFile(path.resolve(file), JSON.stringify(c));',
        '}',
      ),
    );
  });

  it('handles a one-line class and a JavaScript file', async () => {
    expect(
      await extended(
        'a.js',
        'class A {}\n',
        'class A { x = 1; m() { return 2; } }\nconst B = 3;\n',
      ),
    ).toBe('class A {\n  x = 1;\n\n  m() { return 2; }\n}\n\nconst B = 3;\n');
  });

  it('keeps the old definition on a name clash of different kinds', async () => {
    const out = await extended(
      'x.tsx',
      'export const A = 1;\n',
      'export function A() { return <div />; }\nexport const B = <b />;\n',
    );
    expect(out).toBe('export const A = 1;\n\nexport const B = <b />;\n');
  });
});

describe('extend: fallbacks', () => {
  it('refuses a new side that does not parse, saying where', async () => {
    const r = await extend('a.py', 'def f():\n    pass\n', 'def g(:\n    pass\n');
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/new side does not parse \(line 1\)/);
  });

  it('refuses an old side that does not parse', async () => {
    const r = await extend('a.ts', 'class {{{\n', 'export const x = 1;\n');
    expect(!r.ok && r.reason).toMatch(/old side does not parse/);
  });

  it('refuses an unknown language', async () => {
    expect(await extend('notes.txt', 'a\n', 'b\n')).toEqual({
      ok: false,
      reason: expect.stringMatching(/notes\.txt/),
    });
    expect(EXTEND_EXTENSIONS).toEqual(
      expect.arrayContaining(['.py', '.ts', '.tsx', '.js', '.jsx', '.mjs', '.cjs']),
    );
  });

  it('through applyStrategy: a syntax error falls back to append with a warning', async () => {
    const r = await applyStrategy('extend', 'def f():\n    pass\n', 'def g(:\n', {
      path: 'src/a.py',
    });
    expect(r).toEqual({
      content: 'def f():\n    pass\ndef g(:\n',
      strategy: 'append',
      warning: expect.stringMatching(/^extend fell back to append: the new side does not parse/),
    });
  });

  it('through applyStrategy: an unsupported extension falls back to append', async () => {
    const r = await applyStrategy('extend', 'a', 'b\n', { path: 'README.md' });
    expect(r.content).toBe('a\nb\n');
    expect(r.strategy).toBe('append');
    expect(r.warning).toMatch(/README\.md/);
  });

  it('through applyStrategy: a good extend says what it added', async () => {
    const r = await applyStrategy('extend', 'def f():\n    pass\n', 'def g():\n    pass\n', {
      path: 'a.py',
    });
    expect(r).toEqual({
      content: 'def f():\n    pass\n\n\ndef g():\n    pass\n',
      strategy: 'extend',
      added: ['g'],
    });
  });
});
