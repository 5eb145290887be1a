import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAst } from 'rolldown/parseAst';
import { describe, expect, it } from 'vitest';

/**
 * The shape of src/ that issue 21 asks for, checked on the source itself:
 * no function longer than a reader can hold, none taking more than four
 * parameters (options go in one typed object), and git's file modes written
 * in one module only. TypeScript 7 (native tsc) has no JS API, so the source is
 * parsed with oxc, through rolldown's `parseAst`: rolldown is already the
 * bundler here (scripts/bundle.mjs), so this adds no dependency.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MAX_BODY_LINES = 80;
/** More than this many parameters and the call site reads as a row of unnamed values: pass one typed object. */
const MAX_PARAMS = 4;

/**
 * Functions allowed over the limit: none. A long function is split into named
 * steps; nothing may be added here (the set stays so a check of that can fail).
 */
const LONG_ALLOWED = new Set<string>([]);

/** The module that spells git's modes; no other file is excepted. */
const MODES_MODULE = 'src/core/modes.ts';
const MODE_LITERAL_ALLOWED = new Set<string>([]);
const GIT_MODES = ['100644', '100755', '120000', '160000', '040000'];

type Node = { type: string; start: number; end: number; [key: string]: unknown };

const parsed = new Map<string, Node>();

/** Each file is parsed once for every check (the sample texts are parsed anew). */
function parse(file: string, text: string): Node {
  const cached = parsed.get(file);
  if (cached && file.startsWith('src/')) return cached;
  const ast = parseAst(text, { lang: 'ts' }, file) as unknown as Node;
  parsed.set(file, ast);
  return ast;
}

function isNode(v: unknown): v is Node {
  return typeof v === 'object' && v !== null && typeof (v as Node).type === 'string';
}

function sourceFiles(): string[] {
  return readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => `src/${f.split(path.sep).join('/')}`)
    .sort();
}

function lineOf(text: string): (offset: number) => number {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

function keyName(key: unknown): string | null {
  if (!isNode(key)) return null;
  if (key.type === 'Identifier' || key.type === 'PrivateIdentifier') return String(key.name);
  if (key.type === 'Literal') return String(key.value);
  return null;
}

/** The name a reader would search for: `f`, `Class.method`, `const f = () =>`, `{ key: () => }`. */
function nameFor(parent: Node | null, node: Node, className: string | null): string | null {
  const own = isNode(node.id) ? String(node.id.name) : null;
  if (own) return own;
  if (!parent) return null;
  if (parent.type === 'VariableDeclarator')
    return isNode(parent.id) ? String(parent.id.name) : null;
  if (parent.type === 'MethodDefinition' || parent.type === 'PropertyDefinition') {
    const key = keyName(parent.key);
    return key && className ? `${className}.${key}` : key;
  }
  if (parent.type === 'Property') return keyName(parent.key);
  return null;
}

interface Found {
  file: string;
  line: number;
  name: string;
  lines: number;
  /** Parameters it declares (a rest parameter is one; TypeScript's `this` is none). */
  params: number;
}

/** Every function, method and arrow function in one file, with the lines its body spans. */
function functionsIn(file: string, text: string): Found[] {
  const line = lineOf(text);
  const found: Found[] = [];
  const visit = (node: Node, parent: Node | null, className: string | null): void => {
    const isFunction =
      node.type === 'FunctionDeclaration' ||
      node.type === 'FunctionExpression' ||
      node.type === 'ArrowFunctionExpression';
    if (isFunction && isNode(node.body)) {
      const name = nameFor(parent, node, className) ?? `<anonymous at line ${line(node.start)}>`;
      const params = (Array.isArray(node.params) ? node.params : []).filter(
        (p) => !(isNode(p) && p.type === 'Identifier' && p.name === 'this'),
      );
      found.push({
        file,
        line: line(node.start),
        name,
        lines: line(node.body.end) - line(node.body.start) + 1,
        params: params.length,
      });
    }
    const inClass = node.type === 'ClassDeclaration' || node.type === 'ClassExpression';
    const nextClass = inClass && isNode(node.id) ? String(node.id.name) : className;
    for (const value of Object.values(node)) {
      for (const child of Array.isArray(value) ? value : [value])
        if (isNode(child)) visit(child, node, nextClass);
    }
  };
  visit(parse(file, text), null, null);
  return found;
}

/** String, template and regex literals that spell a git mode. */
function modeLiteralsIn(file: string, text: string): string[] {
  const line = lineOf(text);
  const spelled = new RegExp(`\\b(${GIT_MODES.join('|')})\\b`);
  const hits: string[] = [];
  const visit = (node: Node): void => {
    // numbers are left alone: a mode is a string in git's output and in guard
    const raw =
      node.type === 'Literal' && (typeof node.value === 'string' || node.regex)
        ? String(node.raw)
        : node.type === 'TemplateElement'
          ? (node.value as { raw: string }).raw
          : null;
    if (raw !== null && spelled.test(raw)) hits.push(`${file}:${line(node.start)} ${raw}`);
    for (const value of Object.values(node)) {
      for (const child of Array.isArray(value) ? value : [value]) if (isNode(child)) visit(child);
    }
  };
  visit(parse(file, text));
  return hits;
}

/** Names a module exports itself (functions, constants, classes, types), not those it re-exports. */
function exportedNames(file: string, text: string): string[] {
  const names: string[] = [];
  for (const node of (parse(file, text).body as Node[]) ?? []) {
    if (node.type !== 'ExportNamedDeclaration' || !isNode(node.declaration)) continue;
    const d = node.declaration;
    const ids =
      d.type === 'VariableDeclaration' ? (d.declarations as Node[]).map((x) => x.id) : [d.id];
    for (const id of ids) if (isNode(id) && id.type === 'Identifier') names.push(String(id.name));
  }
  return names;
}

/** Every command module exports its `run`: one role, one name, by design. */
const SAME_ROLE = (file: string, name: string) => name === 'run' && file.startsWith('src/cli/');

const files = sourceFiles().map((file) => ({
  file,
  text: readFileSync(path.join(ROOT, file), 'utf8'),
}));

describe('the shape of src/', () => {
  it('finds the functions it measures (the parser sees every kind)', () => {
    const sample = [
      'function a() {\n}',
      'const b = () => {\n};',
      'class C { m() {\n} }',
      'export default { k: function () {\n} };',
    ].join('\n');
    expect(functionsIn('sample.ts', sample).map((f) => `${f.name} ${f.lines}`)).toEqual([
      'a 2',
      'b 2',
      'C.m 2',
      'k 2',
    ]);
    const params =
      'function p(this: X, a: number, b = 1, { c }: O, ...rest: string[]) {}\nconst q = (a, b, c, d, e) => a;';
    expect(functionsIn('sample.ts', params).map((f) => `${f.name} ${f.params}`)).toEqual([
      'p 4',
      'q 5',
    ]);
    expect(
      exportedNames(
        'sample.ts',
        'export function f() {}\nexport const g = 1, h = 2;\nexport interface T {}\nexport { x } from "./y.js";\nfunction local() {}',
      ),
    ).toEqual(['f', 'g', 'h', 'T']);
    expect(
      modeLiteralsIn(
        'sample.ts',
        "const m = '100644'; const r = /^040000 tree/; const t = `${x} 120000`; // 160000",
      ),
    ).toEqual(["sample.ts:1 '100644'", 'sample.ts:1 /^040000 tree/', 'sample.ts:1  120000']);
  });

  it(`has no function whose body spans more than ${MAX_BODY_LINES} lines`, () => {
    expect([...LONG_ALLOWED]).toEqual([]);
    const long = files
      .flatMap(({ file, text }) => functionsIn(file, text))
      .filter((f) => f.lines > MAX_BODY_LINES && !LONG_ALLOWED.has(`${f.file} ${f.name}`))
      .map((f) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`);
    expect(long).toEqual([]);
  });

  it(`has no function with more than ${MAX_PARAMS} parameters (options go in one typed object)`, () => {
    const many = files
      .flatMap(({ file, text }) => functionsIn(file, text))
      .filter((f) => f.params > MAX_PARAMS)
      .map((f) => `${f.file}:${f.line} ${f.name} (${f.params} parameters)`);
    expect(many).toEqual([]);
  });

  it('exports each name from one module only (two things of one name read as one)', () => {
    const where = new Map<string, string[]>();
    for (const { file, text } of files) {
      for (const name of exportedNames(file, text))
        if (!SAME_ROLE(file, name)) where.set(name, [...(where.get(name) ?? []), file]);
    }
    const clashes = [...where]
      .filter(([, at]) => at.length > 1)
      .map(([name, at]) => `${name}: ${at.join(', ')}`);
    expect(clashes).toEqual([]);
  });

  it(`spells git's file modes only in ${MODES_MODULE}`, () => {
    const spelled = files
      .filter(({ file }) => file !== MODES_MODULE && !MODE_LITERAL_ALLOWED.has(file))
      .flatMap(({ file, text }) => modeLiteralsIn(file, text));
    expect(spelled).toEqual([]);
  });
});
