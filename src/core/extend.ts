/**
 * The `extend` strategy: keep the old file as it is and add what the new one
 * declares that the old one does not. Both sides are parsed with tree-sitter
 * (the grammars ship as .wasm inside @vscode/tree-sitter-wasm, loaded on the
 * first call only, so the rest of guard never pays for them).
 *
 * What is added:
 *  - top-level declarations whose names the old file does not bind:
 *    functions, classes, variables/constants, and in TypeScript also
 *    interfaces, types, enums, namespaces and `export` forms. Each goes after
 *    the old declaration that precedes it in the new file (or, when none
 *    does, after the old imports), so `if __name__ == "__main__":` and the
 *    like stay last;
 *  - imports binding names the old file does not bind, after the old imports
 *    (of an import list, only the missing names);
 *  - members (methods, fields, accessors) of a class that both sides define,
 *    at the end of the old class body, indented like the old members.
 * On a name clash the old side wins. Statements that declare nothing (calls,
 * `if` blocks) are never added. Leading comments and decorators go with their
 * declaration. Inserted lines take the old file's line ending.
 *
 * Pure apart from loading the parser: text in, text out.
 */
import { createRequire } from 'node:module';
import type { Language as TsLanguage, Node, Parser as TsParser } from '@vscode/tree-sitter-wasm';

export type ExtendResult =
  | {
      ok: true;
      content: string;
      /** What was added: "foo", "Cls.method", "import x". */ added: string[];
    }
  | { ok: false; reason: string };

type Grammar = 'python' | 'typescript' | 'tsx' | 'javascript';

const GRAMMAR_BY_EXTENSION: Record<string, Grammar> = {
  '.py': 'python',
  '.pyi': 'python',
  '.ts': 'typescript',
  '.mts': 'typescript',
  '.cts': 'typescript',
  '.tsx': 'tsx',
  '.js': 'javascript',
  '.jsx': 'javascript',
  '.mjs': 'javascript',
  '.cjs': 'javascript',
};

/** File extensions `extend` understands (for help text). */
export const EXTEND_EXTENSIONS: readonly string[] = Object.keys(GRAMMAR_BY_EXTENSION);

function grammarOf(path: string): Grammar | null {
  const m = /\.[^./\\]+$/.exec(path);
  return (m && GRAMMAR_BY_EXTENSION[m[0].toLowerCase()]) || null;
}

// ---------------------------------------------------------------------------
// Loading (once, lazily)

interface TreeSitter {
  Parser: typeof TsParser;
  Language: typeof TsLanguage;
}

let runtime: Promise<TreeSitter> | undefined;
const languages = new Map<Grammar, Promise<TsLanguage>>();

async function loadRuntime(): Promise<TreeSitter> {
  // A UMD bundle: Node exposes it as the default export only.
  const mod = (await import('@vscode/tree-sitter-wasm')) as unknown as {
    default?: TreeSitter;
  } & TreeSitter;
  const ts = mod.default ?? mod;
  await ts.Parser.init();
  return ts;
}

async function parserFor(grammar: Grammar): Promise<TsParser> {
  runtime ??= loadRuntime();
  const ts = await runtime;
  let language = languages.get(grammar);
  if (!language) {
    const wasm = createRequire(import.meta.url).resolve(
      `@vscode/tree-sitter-wasm/wasm/tree-sitter-${grammar}.wasm`,
    );
    language = ts.Language.load(wasm);
    languages.set(grammar, language);
  }
  const parser = new ts.Parser();
  parser.setLanguage(await language);
  return parser;
}

// ---------------------------------------------------------------------------
// The language tables

const TS_IMPORTS = new Set(['import_statement']);
const TS_CLASSES = new Set(['class_declaration', 'abstract_class_declaration', 'class']);
const TS_NAMED = new Set([
  'function_declaration',
  'generator_function_declaration',
  'function_signature',
  'class_declaration',
  'abstract_class_declaration',
  'interface_declaration',
  'type_alias_declaration',
  'enum_declaration',
  'internal_module',
  'module',
]);
const TS_MEMBERS = new Set([
  'method_definition',
  'method_signature',
  'abstract_method_signature',
  'public_field_definition',
  'field_definition',
  'index_signature',
  'class_static_block',
]);

interface Decl {
  /** The names it binds; an import list binds one per spec. */
  names: string[];
  kind: 'import' | 'class' | 'function' | 'other';
  /** The node the text is taken from (export/decorator wrapper included). */
  node: Node;
  /** The class node, when this declares a class (for member merging). */
  classNode?: Node;
  /** For an import list: the spec nodes, all siblings, so a subset can be written. */
  specs?: Array<{ name: string; node: Node }>;
}

function isPython(g: Grammar): boolean {
  return g === 'python';
}

/** Identifiers bound by a pattern (`a`, `[a, {b}]`, `a, b`). */
function boundIdentifiers(pattern: Node): string[] {
  if (/identifier$/.test(pattern.type) && !pattern.type.startsWith('property'))
    return [pattern.text];
  if (pattern.type === 'shorthand_property_identifier_pattern') return [pattern.text];
  const out: string[] = [];
  for (const c of pattern.namedChildren) {
    if (!c || c.type === 'property_identifier') continue;
    // In `{ key: value }` only the value binds.
    if (c.type === 'pair_pattern') {
      const v = c.childForFieldName('value');
      if (v) out.push(...boundIdentifiers(v));
      continue;
    }
    out.push(...boundIdentifiers(c));
  }
  return out;
}

function named(node: Node): Node[] {
  return node.namedChildren.filter((c): c is Node => c !== null);
}

function pyImportSpecs(node: Node): Array<{ name: string; node: Node }> {
  return node.childrenForFieldName('name').flatMap((n) => {
    if (!n) return [];
    if (n.type === 'aliased_import')
      return [{ name: n.childForFieldName('alias')?.text ?? n.text, node: n }];
    // `from m import a.b` cannot happen; `import a.b` binds "a.b" as far as we care.
    return [{ name: n.text, node: n }];
  });
}

function pythonDecl(node: Node): Decl | null {
  switch (node.type) {
    case 'import_statement':
    case 'import_from_statement': {
      const specs = pyImportSpecs(node);
      if (specs.length === 0) return { names: [`import ${node.text}`], kind: 'import', node };
      return { names: specs.map((s) => s.name), kind: 'import', node, specs };
    }
    case 'future_import_statement':
      return { names: [node.text], kind: 'import', node };
    case 'function_definition':
    case 'class_definition':
    case 'decorated_definition': {
      const def =
        node.type === 'decorated_definition' ? node.childForFieldName('definition') : node;
      const name = def?.childForFieldName('name')?.text;
      if (!def || !name) return null;
      const isClass = def.type === 'class_definition';
      return {
        names: [name],
        kind: isClass ? 'class' : 'function',
        node,
        ...(isClass ? { classNode: def } : {}),
      };
    }
    case 'expression_statement': {
      const first = named(node)[0];
      if (first?.type !== 'assignment') return null;
      const names: string[] = [];
      for (let a: Node | null = first; a?.type === 'assignment'; a = a.childForFieldName('right')) {
        const left = a.childForFieldName('left');
        if (left) names.push(...boundIdentifiers(left));
      }
      return names.length > 0 ? { names, kind: 'other', node } : null;
    }
    default:
      return null;
  }
}

function tsImportDecl(node: Node): Decl {
  const clause = named(node).find((c) => c.type === 'import_clause');
  if (!clause) return { names: [`import ${node.text}`], kind: 'import', node }; // side effect only
  const parts = named(clause);
  const names: string[] = [];
  let specs: Decl['specs'];
  for (const p of parts) {
    if (p.type === 'identifier') names.push(p.text);
    else if (p.type === 'namespace_import') names.push(named(p).at(-1)?.text ?? p.text);
    else if (p.type === 'named_imports') {
      const list = named(p)
        .filter((s) => s.type === 'import_specifier')
        .map((s) => ({
          name: (s.childForFieldName('alias') ?? s.childForFieldName('name'))?.text ?? s.text,
          node: s,
        }));
      names.push(...list.map((s) => s.name));
      if (parts.length === 1 && list.length > 0) specs = list;
    }
  }
  return { names, kind: 'import', node, ...(specs ? { specs } : {}) };
}

function tsInnerDecl(inner: Node, wrapper: Node): Decl | null {
  if (TS_NAMED.has(inner.type)) {
    const name = inner.childForFieldName('name')?.text;
    if (!name) return { names: [inner.text], kind: 'other', node: wrapper };
    const isClass = TS_CLASSES.has(inner.type);
    const isFunction = /function/.test(inner.type);
    return {
      names: [name],
      kind: isClass ? 'class' : isFunction ? 'function' : 'other',
      node: wrapper,
      ...(isClass ? { classNode: inner } : {}),
    };
  }
  if (inner.type === 'lexical_declaration' || inner.type === 'variable_declaration') {
    const names = named(inner)
      .filter((d) => d.type === 'variable_declarator')
      .flatMap((d) => {
        const n = d.childForFieldName('name');
        return n ? boundIdentifiers(n) : [];
      });
    return names.length > 0 ? { names, kind: 'other', node: wrapper } : null;
  }
  if (inner.type === 'ambient_declaration') {
    const body = named(inner)[0];
    const d = body ? tsInnerDecl(body, wrapper) : null;
    return d ?? { names: [`declare ${inner.text}`], kind: 'other', node: wrapper };
  }
  return null;
}

function typescriptDecl(node: Node): Decl | null {
  if (TS_IMPORTS.has(node.type)) return tsImportDecl(node);
  if (node.type === 'export_statement') {
    const inner = node.childForFieldName('declaration');
    const isDefault = node.children.some((c) => c?.type === 'default');
    if (isDefault) {
      const d = inner ? tsInnerDecl(inner, node) : null;
      return { ...(d ?? { kind: 'other' as const, node }), names: ['default'] };
    }
    if (inner) return tsInnerDecl(inner, node);
    return { names: [`export ${node.text.replace(/\s+/g, ' ')}`], kind: 'other', node }; // export { a }, export * from
  }
  if (node.type === 'expression_statement') {
    const inner = named(node)[0];
    return inner && TS_NAMED.has(inner.type) ? tsInnerDecl(inner, node) : null;
  }
  return tsInnerDecl(node, node);
}

// Members ------------------------------------------------------------------

interface Member {
  /** Names it binds; TS keys carry "static", "get" or "set" in front. */
  keys: string[];
  node: Node;
  isMethod: boolean;
}

function members(grammar: Grammar, body: Node): Member[] {
  const out: Member[] = [];
  for (const m of named(body)) {
    if (isPython(grammar)) {
      const d = pythonDecl(m);
      if (!d || d.kind === 'import') continue;
      out.push({ keys: d.names, node: m, isMethod: d.kind !== 'other' });
      continue;
    }
    if (!TS_MEMBERS.has(m.type)) continue;
    const name = m.childForFieldName('name') ?? m.childForFieldName('property');
    const modifiers = m.children
      .filter((c): c is Node => c !== null && ['static', 'get', 'set'].includes(c.type))
      .map((c) => c.type);
    const key = name ? [...modifiers, name.text].join(' ') : m.text.replace(/\s+/g, ' ');
    out.push({ keys: [key], node: m, isMethod: /method|block/.test(m.type) });
  }
  return out;
}

// ---------------------------------------------------------------------------
// Text helpers

interface Source {
  text: string;
  /** Offset of the start of each line. */
  lineStarts: number[];
}

function source(text: string): Source {
  const lineStarts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  return { text, lineStarts };
}

function lineStart(src: Source, row: number): number {
  return src.lineStarts[row] ?? src.text.length;
}

/** Offset just after the line `row` (after its "\n"), or the end of the text. */
function afterLine(src: Source, row: number): number {
  return src.lineStarts[row + 1] ?? src.text.length;
}

function indentOfLine(src: Source, row: number): string {
  const start = lineStart(src, row);
  return /^[ \t]*/.exec(src.text.slice(start))?.[0] ?? '';
}

/** Comments directly above a node (no blank line between) start its text. */
function leadingStart(node: Node): Node {
  let first = node;
  for (let p = node.previousNamedSibling; p?.type === 'comment'; p = p.previousNamedSibling) {
    if (p.endPosition.row < first.startPosition.row - 1) break;
    // A comment on the line of the previous statement belongs to that one.
    const before = p.previousNamedSibling;
    if (before && before.endPosition.row === p.startPosition.row) break;
    first = p;
  }
  return first;
}

/**
 * A node's text as whole lines, with its indentation removed: from the start
 * of its first line (or of its leading comments) to its end, plus the rest
 * of the last line when only a comment or ";" follows.
 */
function snippet(src: Source, node: Node, from: Node = leadingStart(node)): string[] {
  const row = from.startPosition.row;
  const ls = lineStart(src, row);
  const startsLine = src.text.slice(ls, from.startIndex).trim() === '';
  const start = startsLine ? ls : from.startIndex;
  let end = node.endIndex;
  const lineEnd = Math.max(afterLine(src, lastRow(node)), end);
  // A class field's ";" is the class body's token, not the field's.
  const semi = /^[ \t]*;/.exec(src.text.slice(end, lineEnd));
  if (semi) end += semi[0].length;
  const rest = src.text.slice(end, lineEnd).trim();
  if (rest === '' || rest.startsWith('//') || rest.startsWith('#')) end = lineEnd;
  const indent = startsLine ? indentOfLine(src, row) : '';
  const lines = src.text
    .slice(start, end)
    .replace(/\r?\n$/, '')
    .split('\n');
  return lines
    .map((l) => l.replace(/\r$/, ''))
    .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l));
}

// ---------------------------------------------------------------------------
// The merge

interface Insertion {
  at: number;
  /** Members of a class go before a top-level declaration at the same offset. */
  rank: number;
  seq: number;
  text: string;
}

export async function extend(
  path: string,
  oldText: string,
  newText: string,
): Promise<ExtendResult> {
  const grammar = grammarOf(path);
  if (!grammar) return { ok: false, reason: `extend does not know the language of ${path}` };
  let parser: TsParser;
  try {
    parser = await parserFor(grammar);
  } catch (err) {
    runtime = undefined;
    languages.delete(grammar);
    return {
      ok: false,
      reason: `the ${grammar} parser could not be loaded (${(err as Error).message})`,
    };
  }
  const trees = [parser.parse(oldText), parser.parse(newText)];
  try {
    const [oldTree, newTree] = trees;
    for (const [tree, side] of [
      [oldTree, 'old'],
      [newTree, 'new'],
    ] as const) {
      if (!tree) return { ok: false, reason: `the ${side} side could not be parsed` };
      if (tree.rootNode.hasError)
        return { ok: false, reason: `the ${side} side does not parse${errorWhere(tree.rootNode)}` };
    }
    const merged = merge(grammar, {
      oldSrc: source(oldText),
      oldRoot: oldTree!.rootNode,
      newSrc: source(newText),
      newRoot: newTree!.rootNode,
    });
    if (merged.added.length === 0) return { ok: true, content: oldText, added: [] };
    const check = parser.parse(merged.content);
    trees.push(check);
    if (!check || check.rootNode.hasError)
      return { ok: false, reason: 'the extended file would not parse' };
    return { ok: true, ...merged };
  } finally {
    for (const t of trees) t?.delete();
    parser.delete();
  }
}

function errorWhere(root: Node): string {
  const bad = root.descendantsOfType('ERROR')[0] ?? findMissing(root);
  return bad ? ` (line ${bad.startPosition.row + 1})` : '';
}

function findMissing(node: Node): Node | null {
  if (node.isMissing) return node;
  for (const c of node.children) {
    const m = c && c.hasError ? findMissing(c) : null;
    if (m) return m;
  }
  return null;
}

interface MergeSides {
  oldSrc: Source;
  oldRoot: Node;
  newSrc: Source;
  newRoot: Node;
}

function merge(grammar: Grammar, { oldSrc, oldRoot, newSrc, newRoot }: MergeSides) {
  const declOf = isPython(grammar) ? pythonDecl : typescriptDecl;
  const eol = /\r\n/.test(oldSrc.text) ? '\r\n' : '\n';
  const py = isPython(grammar);

  const oldItems = named(oldRoot).map((node) => ({ node, decl: declOf(node) }));
  const oldByName = new Map<string, Decl>();
  for (const { decl } of oldItems)
    for (const n of decl?.names ?? []) if (!oldByName.has(n)) oldByName.set(n, decl!);

  const { importAt, importsGoFirst, fallbackAt } = placesIn(oldSrc, oldItems);

  const insertions: Insertion[] = [];
  const added: string[] = [];
  const add = (at: number, rank: number, text: string) =>
    insertions.push({ at, rank, seq: insertions.length, text });
  const lines = (ls: string[], indent = '') =>
    ls.map((l) => (l.trim() === '' ? '' : indent + l) + eol).join('');
  const blank = (n: number) => eol.repeat(n);

  // A new declaration goes after the old one that precedes it in the new
  // file; failing that, before the old one that follows it; failing that
  // (nothing in common), after the old file's last declaration.
  const newItems = named(newRoot).flatMap((node) => {
    const decl = declOf(node);
    return decl ? [{ node, decl, known: decl.names.filter((n) => oldByName.has(n)) }] : [];
  });

  let anchor: number | null = null; // offset after the old declaration last seen in the new file
  for (const [idx, { node, decl, known }] of newItems.entries()) {
    if (decl.kind === 'import') {
      const text = importText(newSrc, node, decl, known.length === 0 ? null : oldByName);
      if (text) {
        if (importsGoFirst && !added.some((a) => a.startsWith('import ')))
          add(importAt, 1.5, blank(1));
        add(importAt, 1, lines(text));
        added.push(`import ${decl.names.filter((n) => !oldByName.has(n)).join(', ')}`);
      }
      continue;
    }

    if (known.length > 0) {
      const old = oldByName.get(known[0]!)!;
      anchor = afterLine(oldSrc, lastRow(old.node));
      if (decl.classNode && old.classNode && decl.names.length === 1) {
        added.push(
          ...mergeClass(grammar, {
            oldSrc,
            oldCls: old.classNode,
            newSrc,
            newCls: decl.classNode,
            className: decl.names[0]!,
            eol,
            add,
          }),
        );
      }
      continue;
    }

    const gap = py && decl.kind !== 'other' ? 2 : 1;
    const body = lines(snippet(newSrc, node));
    const next =
      anchor === null
        ? newItems.slice(idx + 1).find((i) => i.decl.kind !== 'import' && i.known.length > 0)
        : undefined;
    const before = next && oldByName.get(next.known[0]!);
    if (anchor !== null) add(anchor, 2, blank(gap) + body);
    else if (before)
      add(lineStart(oldSrc, leadingStart(before.node).startPosition.row), 2, body + blank(gap));
    else add(fallbackAt, 2, (oldSrc.text.trim() === '' ? '' : blank(gap)) + body);
    added.push(decl.names.join(', '));
  }

  return { content: apply(oldSrc.text, insertions, eol), added };
}

/** Where imports go (after the old file's last import, or before its first code), and declarations with no anchor (after its last declaration). */
function placesIn(oldSrc: Source, oldItems: ReadonlyArray<{ node: Node; decl: Decl | null }>) {
  const lastImport = oldItems.filter((i) => i.decl?.kind === 'import').at(-1);
  const firstCode = oldItems.find(
    (i, idx) => i.node.type !== 'comment' && !(idx === 0 && isDirective(i.node)),
  );
  const importAt = lastImport
    ? afterLine(oldSrc, lastRow(lastImport.node))
    : firstCode
      ? lineStart(oldSrc, leadingStart(firstCode.node).startPosition.row)
      : oldSrc.text.length;
  const lastOldDecl = oldItems.filter((i) => i.decl && i.decl.kind !== 'import').at(-1);
  const fallbackAt = lastOldDecl
    ? afterLine(oldSrc, lastRow(lastOldDecl.node))
    : lastImport
      ? importAt
      : oldSrc.text.length;
  return { importAt, importsGoFirst: !lastImport && firstCode !== undefined, fallbackAt };
}

/**
 * The text of a new import to add: all of it when the old file imports none of its names
 * (`oldByName` null), only the names the old file lacks when it imports some, nothing when all.
 */
function importText(
  newSrc: Source,
  node: Node,
  decl: Decl,
  oldByName: ReadonlyMap<string, Decl> | null,
): string[] | null {
  if (!oldByName) return snippet(newSrc, node);
  if (!decl.specs || !decl.names.some((n) => !oldByName.has(n))) return null;
  const missing = decl.specs.filter((s) => !oldByName.has(s.name));
  const first = decl.specs[0]!.node;
  const last = decl.specs.at(-1)!.node;
  const head = newSrc.text.slice(node.startIndex, first.startIndex);
  const tail = newSrc.text.slice(last.endIndex, node.endIndex);
  return [(head + missing.map((s) => s.node.text).join(', ') + tail).replace(/\s*\n\s*/g, ' ')];
}

/** A module docstring, a "use strict" or a shebang-like first expression. */
function isDirective(node: Node): boolean {
  const first = named(node)[0];
  return node.type === 'expression_statement' && first?.type === 'string';
}

interface ClassSides {
  oldSrc: Source;
  oldCls: Node;
  newSrc: Source;
  newCls: Node;
  className: string;
  eol: string;
  add: (at: number, rank: number, text: string) => void;
}

function mergeClass(
  grammar: Grammar,
  { oldSrc, oldCls, newSrc, newCls, className, eol, add }: ClassSides,
): string[] {
  const oldBody = oldCls.childForFieldName('body');
  const newBody = newCls.childForFieldName('body');
  if (!oldBody || !newBody) return [];
  const oldMembers = members(grammar, oldBody);
  const have = new Set(oldMembers.flatMap((m) => m.keys));
  const fresh = members(grammar, newBody).filter((m) => !m.keys.some((k) => have.has(k)));
  if (fresh.length === 0) return [];

  const py = isPython(grammar);
  const classIndent = indentOfLine(oldSrc, oldCls.startPosition.row);
  const newClassIndent = indentOfLine(newSrc, newCls.startPosition.row);
  const firstNew = fresh[0]!.node;
  const unit =
    indentOfLine(newSrc, firstNew.startPosition.row).slice(newClassIndent.length) ||
    (py ? '    ' : '  ');
  // Indent like the first old member that starts its own line.
  const ownLine = named(oldBody).find(
    (m) =>
      m.startPosition.row > oldCls.startPosition.row &&
      oldSrc.text.slice(lineStart(oldSrc, m.startPosition.row), m.startIndex).trim() === '',
  );
  const indent = ownLine ? indentOfLine(oldSrc, ownLine.startPosition.row) : classIndent + unit;

  let text = '';
  for (const m of fresh) {
    const sep = oldMembers.length > 0 || text !== '' ? (m.isMethod ? eol : '') : '';
    text +=
      sep +
      snippet(newSrc, m.node)
        .map((l) => (l.trim() === '' ? '' : indent + l) + eol)
        .join('');
  }

  if (py) {
    // The block ends with its last statement; add after that line.
    add(afterLine(oldSrc, lastRow(oldBody)), 0, text);
  } else {
    const close = oldBody.lastChild; // "}"
    if (!close) return [];
    const closeRow = close.startPosition.row;
    const closeLine = lineStart(oldSrc, closeRow);
    if (
      oldSrc.text.slice(closeLine, close.startIndex).trim() === '' &&
      closeRow > oldBody.startPosition.row
    ) {
      add(closeLine, 0, text);
    } else {
      add(close.startIndex, 0, eol + text + classIndent);
    }
  }
  return fresh.map((m) => m.keys.map((k) => `${className}.${k.split(' ').at(-1)}`).join(', '));
}

/** The last line a node has text on (a node may end at column 0 of the next). */
function lastRow(node: Node): number {
  const { row, column } = node.endPosition;
  return column === 0 && row > node.startPosition.row ? row - 1 : row;
}

function apply(text: string, insertions: Insertion[], eol: string): string {
  const sorted = [...insertions].sort((a, b) => a.at - b.at || a.rank - b.rank || a.seq - b.seq);
  let out = '';
  let pos = 0;
  for (const ins of sorted) {
    out += text.slice(pos, ins.at);
    if (ins.at === text.length && out.length > 0 && !out.endsWith('\n')) out += eol;
    out += ins.text;
    pos = ins.at;
  }
  return out + text.slice(pos);
}
