import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAst } from 'rolldown/parseAst';
import { describe, expect, it } from 'vitest';
import { WRITES } from '../../src/git/run.js';

/**
 * Issue 21, item 1: apply (src/apply/) is the only code that writes. No
 * file in src/flows or src/cli may reach a writer but through apply: not
 * node's file-writing functions, not a git command that writes (the
 * runner's own list, git/run.ts WRITES, and git's packing), and not a
 * function of src/git, src/worktree or src/core that does either, however
 * deep the calls go. The writers are found on the source (parsed with oxc,
 * as test/unit/shape.test.ts does), not listed by hand, so a new one cannot
 * slip past.
 *
 * What still writes from a flow is below, each with the reason; the list
 * may only shrink (an entry no longer needed fails the test).
 */
const ALLOWED: Record<string, { names: string[]; why: string }> = {
  // scratch and output, not the work tree, refs or records
  'src/flows/doctor/hook-probe.ts': {
    names: ['mkdtemp', 'rm', 'writeFile', 'writeFileSync'],
    why: 'doctor: a probe file in a scratch folder',
  },
  'src/cli/ci.ts': {
    names: ['appendFileSync'],
    why: "guard ci: the CI's step summary file (output, not the work tree)",
  },
  // the net's own state (.git/guard/): its manifest and its copy of the hooks; never the work tree (hooks put
  // back go through apply's files target), refs (recover's go through the refs target) or records
  'src/flows/doctor/integrity.ts': {
    names: ['copyFile', 'mkdir', 'rename', 'rm', 'writeFile'],
    why: 'the net: its manifest and hook copy in .git/guard/',
  },
  // guard write prepares the result as a hidden temp file beside the file before judging it (git measures
  // it there; apply's file target renames it over the file, or it is removed)
  'src/flows/gates/write.ts': {
    names: ['cleanStaleTemps', 'discardWrite', 'stageWrite'],
    why: 'guard write: the prepared temp file',
  },
};

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

type Node = { type: string; start: number; end: number; [key: string]: unknown };

const isNode = (v: unknown): v is Node =>
  typeof v === 'object' && v !== null && typeof (v as Node).type === 'string';

function children(node: Node): Node[] {
  const out: Node[] = [];
  for (const value of Object.values(node))
    for (const child of Array.isArray(value) ? value : [value]) if (isNode(child)) out.push(child);
  return out;
}

function walk(
  node: Node,
  visit: (n: Node, parent: Node | null) => void,
  parent: Node | null = null,
): void {
  visit(node, parent);
  for (const c of children(node)) walk(c, visit, node);
}

/** node's functions that change the file system. */
const FS_WRITES = new Set([
  'writeFile',
  'writeFileSync',
  'appendFile',
  'appendFileSync',
  'rm',
  'rmSync',
  'rmdir',
  'rmdirSync',
  'unlink',
  'unlinkSync',
  'rename',
  'renameSync',
  'mkdir',
  'mkdirSync',
  'mkdtemp',
  'mkdtempSync',
  'copyFile',
  'copyFileSync',
  'cp',
  'cpSync',
  'symlink',
  'symlinkSync',
  'link',
  'linkSync',
  'chmod',
  'chmodSync',
  'truncate',
  'truncateSync',
  'createWriteStream',
  'utimes',
  'utimesSync',
]);
/** git commands that write: the runner's list, and packing (gc, pack-refs). */
const GIT_WRITES = new Set([...WRITES, 'gc', 'pack-refs', 'checkout', 'reset']);
const GIT_CALLS = new Set([
  'git',
  'gitSpawnArgs',
  'spawn',
  'spawnSync',
  'execFile',
  'execFileSync',
]);

interface Binding {
  /** Resolved module (src/... path, or node:fs). */
  from: string;
  name: string;
}

interface Module {
  file: string;
  /** Local name -> where it comes from. */
  imports: Map<string, Binding>;
  /** Top-level function (or const holding one, or object of them) -> its node. */
  functions: Map<string, Node>;
  ast: Node;
}

function resolve(file: string, spec: string): string {
  if (spec.startsWith('node:') || !spec.startsWith('.'))
    return spec === 'fs' || spec === 'fs/promises' ? `node:${spec}` : spec;
  return path.posix
    .normalize(path.posix.join(path.posix.dirname(file), spec))
    .replace(/\.js$/, '.ts');
}

/** `import('x')`, `await import('x')`. */
function importOf(n: unknown): string | null {
  if (!isNode(n)) return null;
  if (n.type === 'AwaitExpression') return importOf(n.argument);
  if (n.type === 'ImportExpression' && isNode(n.source) && n.source.type === 'Literal')
    return String(n.source.value);
  return null;
}

function bindPattern(pattern: unknown, from: string, into: Map<string, Binding>): void {
  if (!isNode(pattern) || pattern.type !== 'ObjectPattern') return;
  for (const p of pattern.properties as Node[]) {
    if (p.type !== 'Property' || !isNode(p.key) || !isNode(p.value)) continue;
    const name = String(p.key.name ?? p.key.value);
    const local =
      p.value.type === 'Identifier'
        ? String(p.value.name)
        : p.value.type === 'AssignmentPattern' && isNode(p.value.left)
          ? String(p.value.left.name)
          : name;
    into.set(local, { from, name });
  }
}

/** Static imports, and the dynamic ones guard uses: `const { a } = await import(x)`, `const [{ a }, { b }] = await Promise.all([import(x), import(y)])`. */
function importsOf(file: string, ast: Node): Map<string, Binding> {
  const out = new Map<string, Binding>();
  walk(ast, (n) => {
    if (n.type === 'ImportDeclaration' && isNode(n.source)) {
      const from = resolve(file, String(n.source.value));
      for (const s of n.specifiers as Node[]) {
        const local = String((s.local as Node).name);
        out.set(local, {
          from,
          name:
            s.type === 'ImportSpecifier'
              ? String((s.imported as Node).name ?? (s.imported as Node).value)
              : s.type === 'ImportDefaultSpecifier'
                ? 'default'
                : '*',
        });
      }
    }
    if (n.type === 'VariableDeclarator') {
      const spec = importOf(n.init);
      if (spec) bindPattern(n.id, resolve(file, spec), out);
      const init = isNode(n.init) && n.init.type === 'AwaitExpression' ? n.init.argument : null;
      if (
        isNode(init) &&
        init.type === 'CallExpression' &&
        isNode(n.id) &&
        n.id.type === 'ArrayPattern'
      ) {
        const list = (init.arguments as Node[])[0];
        if (isNode(list) && list.type === 'ArrayExpression') {
          (list.elements as Node[]).forEach((el, i) => {
            const s = importOf(el);
            if (s)
              bindPattern(
                (n.id as Node).elements && ((n.id as Node).elements as Node[])[i],
                resolve(file, s),
                out,
              );
          });
        }
      }
    }
  });
  return out;
}

/** Top-level declarations that hold code: functions, consts initialised with a function or an object, classes. */
function functionsOf(ast: Node): Map<string, Node> {
  const out = new Map<string, Node>();
  for (let stmt of ast.body as Node[]) {
    if (
      (stmt.type === 'ExportNamedDeclaration' || stmt.type === 'ExportDefaultDeclaration') &&
      isNode(stmt.declaration)
    )
      stmt = stmt.declaration;
    if (
      (stmt.type === 'FunctionDeclaration' || stmt.type === 'ClassDeclaration') &&
      isNode(stmt.id)
    )
      out.set(String(stmt.id.name), stmt);
    if (stmt.type === 'VariableDeclaration')
      for (const d of stmt.declarations as Node[])
        if (isNode(d.id) && d.id.type === 'Identifier' && isNode(d.init))
          out.set(String(d.id.name), d.init);
  }
  return out;
}

/** Every identifier a piece of code names, and `(await import(x)).name` as x's name. */
function namesIn(
  node: Node,
  file: string,
): {
  local: Set<string>;
  dynamic: Binding[];
  gitWrites: string[];
  members: Array<{ object: string; name: string }>;
} {
  const members: Array<{ object: string; name: string }> = [];
  const local = new Set<string>();
  const dynamic: Binding[] = [];
  const gitWrites: string[] = [];
  walk(node, (n, parent) => {
    if (
      n.type === 'Identifier' &&
      !(parent?.type === 'MemberExpression' && parent.property === n && !parent.computed)
    )
      local.add(String(n.name));
    if (n.type === 'MemberExpression' && isNode(n.property) && !n.computed) {
      const spec = importOf(
        isNode(n.object) && n.object.type === 'ParenthesizedExpression'
          ? n.object.expression
          : n.object,
      );
      if (spec) dynamic.push({ from: resolve(file, spec), name: String(n.property.name) });
      // fs.writeFile(...) through a default or namespace import: named as `fs.writeFile`
      if (isNode(n.object) && n.object.type === 'Identifier')
        members.push({ object: String(n.object.name), name: String(n.property.name) });
    }
    if (
      n.type === 'CallExpression' &&
      isNode(n.callee) &&
      n.callee.type === 'Identifier' &&
      GIT_CALLS.has(String(n.callee.name))
    ) {
      for (const arg of n.arguments as Node[]) {
        if (arg.type !== 'ArrayExpression') continue;
        const words = (arg.elements as Node[])
          .filter((e) => isNode(e) && e.type === 'Literal' && typeof e.value === 'string')
          .map((e) => String(e.value));
        // past `-c name=value` and `-C dir` pairs: the subcommand
        let i = 0;
        while (words[i] === '-c' || words[i] === '-C') i += 2;
        const sub = words[i];
        // `git worktree list` only reads
        if (sub === 'worktree' && words[i + 1] === 'list') continue;
        if (sub !== undefined && GIT_WRITES.has(sub)) gitWrites.push(`git ${sub}`);
      }
    }
  });
  return { local, dynamic, gitWrites, members };
}

function loadModules(): Map<string, Module> {
  const mods = new Map<string, Module>();
  const files = readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => `src/${f.split(path.sep).join('/')}`);
  for (const file of files) {
    const ast = parseAst(
      readFileSync(path.join(ROOT, file), 'utf8'),
      { lang: 'ts' },
      file,
    ) as unknown as Node;
    mods.set(file, { file, imports: importsOf(file, ast), functions: functionsOf(ast), ast });
  }
  return mods;
}

const isFsWrite = (b: Binding) =>
  (b.from === 'node:fs' || b.from === 'node:fs/promises') && FS_WRITES.has(b.name);

/**
 * What writes the work tree: guard's atomic writer (every file guard puts in
 * a work tree goes through it). The rest of what writes is found by the git
 * commands it runs. node's file functions inside src/git and src/worktree
 * are not followed: there they write guard's own scratch files (a temp
 * index, a cat-file spill, the journal), not the work tree, refs or records.
 */
const WORK_TREE_WRITERS = new Set(
  [
    'writeFileAtomic',
    'removeFile',
    'commitWrite',
    'stageWrite',
    'discardWrite',
    'cleanStaleTemps',
  ].map((n) => `src/worktree/atomic.ts ${n}`),
);

/** Every top-level function of src/ (outside flows, cli and apply) that writes, directly or through another: `file name`. */
function writersOf(mods: Map<string, Module>): Set<string> {
  const writers = new Set<string>(WORK_TREE_WRITERS);
  const named = new Map<string, ReturnType<typeof namesIn>>();
  for (const m of mods.values())
    for (const [name, node] of m.functions) named.set(`${m.file} ${name}`, namesIn(node, m.file));
  for (let changed = true; changed;) {
    changed = false;
    for (const m of mods.values()) {
      for (const name of m.functions.keys()) {
        const key = `${m.file} ${name}`;
        if (writers.has(key)) continue;
        const n = named.get(key)!;
        const viaImport = (b: Binding | undefined) =>
          b !== undefined && writers.has(`${b.from} ${b.name}`);
        const writes =
          n.gitWrites.length > 0 ||
          n.dynamic.some(viaImport) ||
          [...n.local].some(
            (id) =>
              (id !== name && m.functions.has(id) && writers.has(`${m.file} ${id}`)) ||
              viaImport(m.imports.get(id)),
          );
        if (writes) {
          writers.add(key);
          changed = true;
        }
      }
    }
  }
  return writers;
}

/** What a file of src/flows or src/cli reaches that writes, by the name it uses. */
function writesFrom(m: Module, writers: Set<string>): string[] {
  const hits = new Set<string>();
  const n = namesIn(m.ast, m.file);
  const flowOrCli = (from: string) =>
    from.startsWith('src/flows/') || from.startsWith('src/cli/') || from.startsWith('src/apply/');
  const reaches = (b: Binding) =>
    isFsWrite(b) || (!flowOrCli(b.from) && writers.has(`${b.from} ${b.name}`));
  for (const id of n.local) {
    const b = m.imports.get(id);
    if (b && reaches(b)) hits.add(id);
  }
  for (const b of n.dynamic) if (reaches(b)) hits.add(b.name);
  for (const mb of n.members) {
    const b = m.imports.get(mb.object);
    if (b && (b.name === 'default' || b.name === '*') && isFsWrite({ from: b.from, name: mb.name }))
      hits.add(mb.name);
  }
  for (const g of n.gitWrites) hits.add(g);
  return [...hits].sort();
}

describe('apply is the only writer (issue 21)', () => {
  const mods = loadModules();
  const writers = writersOf(mods);

  it('finds the writers it must: the records, the checkpoint, the atomic writer', () => {
    for (const w of [
      'src/git/records.ts writeRecords',
      'src/git/checkpoint.ts checkpoint',
      'src/worktree/atomic.ts writeFileAtomic',
      'src/git/staging.ts stageBlobs',
    ])
      expect(writers, w).toContain(w);
    // and leaves readers alone
    for (const r of [
      'src/git/catfile.ts catFileBatch',
      'src/git/changes.ts collectFacts',
      'src/git/restore.ts planRestore',
      'src/git/rewind.ts planPutBack',
      'src/core/plan.ts plan',
      'src/git/repo.ts openRepo',
    ])
      expect(writers, r).not.toContain(r);
  });

  it('no file in src/flows or src/cli writes but through apply (the listed exceptions aside)', () => {
    const found: Record<string, string[]> = {};
    for (const m of mods.values()) {
      if (!m.file.startsWith('src/flows/') && !m.file.startsWith('src/cli/')) continue;
      const hits = writesFrom(m, writers);
      if (hits.length > 0) found[m.file] = hits;
    }
    const unexpected = Object.entries(found).flatMap(([file, hits]) =>
      hits.filter((h) => !ALLOWED[file]?.names.includes(h)).map((h) => `${file}: ${h}`),
    );
    expect(unexpected, 'write through src/apply (a target), not from the flow').toEqual([]);
    // the list only shrinks: an exception nothing needs any more goes
    const stale = Object.entries(ALLOWED).flatMap(([file, a]) =>
      a.names.filter((n) => !(found[file] ?? []).includes(n)).map((n) => `${file}: ${n}`),
    );
    expect(stale, 'remove these from ALLOWED').toEqual([]);
  });

  it('would catch a flow that writes a file, runs git update-ref, or calls a writer through a dynamic import', () => {
    const file = 'src/flows/sample.ts';
    const text = [
      "import { writeFile } from 'node:fs/promises';",
      "import * as fs from 'node:fs';",
      "import { git } from '../git/run.js';",
      'export async function f() {',
      "  await writeFile('x', 'y');",
      "  await git(['-C', 'd', '-c', 'a=b', 'update-ref', 'refs/x', 'HEAD'], { cwd: '.' });",
      "  await (await import('../git/records.js')).writeRecords('.', []);",
      "  const { checkpoint } = await import('../git/checkpoint.js');",
      '  void checkpoint;',
      "  fs.rmSync('x');",
      '}',
    ].join('\n');
    const ast = parseAst(text, { lang: 'ts' }, file) as unknown as Node;
    const m: Module = { file, imports: importsOf(file, ast), functions: functionsOf(ast), ast };
    expect(writesFrom(m, writers)).toEqual([
      'checkpoint',
      'git update-ref',
      'rmSync',
      'writeFile',
      'writeRecords',
    ]);
  });
});
