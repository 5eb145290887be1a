#!/usr/bin/env node
/**
 * The placeholder rule's figures (docs/reliability.md, "Placeholders"), from
 * the built rule (dist/core/elision.js: run `npm run build` first):
 *
 *   node scripts/elision-figures.mjs              tuning sets and real comments (all, then each file), with the misses
 *   node scripts/elision-figures.mjs --heldout    adds the held-out set (HELDOUT below, with its near misses):
 *                                                 its figures only, never which items it misses
 *   node scripts/elision-figures.mjs --heldout-file PATH
 *                                                 the same, on the set in PATH (a file shaped like
 *                                                 heldout-15-real.json) instead of HELDOUT
 *   EXPRESS=/path/to/express/.git node scripts/elision-figures.mjs --history
 *                                                 adds every non-merge commit of a real history: each
 *                                                 changed file's old and new text through findElisions
 *   node scripts/elision-figures.mjs --timing     the rule's cost on a 15 MB file and on a typical edit
 *   EXPRESS=... node scripts/elision-figures.mjs --alone
 *                                                 adds the ALONE case on comments it was not tuned on: every
 *                                                 comment line of the files inTheirFiles reads that the real
 *                                                 comment sets do not hold, each alone where 20 lines went;
 *                                                 and the code lines with a comment after the code read as a
 *                                                 placeholder there; and the code lines holding an ellipsis
 *                                                 (spreads, varargs, strings) or in square brackets, each
 *                                                 alone where 20 lines went
 *
 * Real comments are measured twice: as the developer wrote them (added to
 * their own file where nothing was removed: must never fire), and in the
 * hard case (added in a hunk that rewrites code next to them: elisionFigures).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { timingInputs } from './elision-inputs.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// ELISION_DIST=/other/checkout/dist measures another build (for before/after figures)
const DIST = process.env.ELISION_DIST ?? path.join(ROOT, 'dist');
const { elisionFigures, findElisions, isElisionLine } = await import(
  pathToFileURL(path.join(DIST, 'core', 'elision.js')).href
);
const argv = process.argv.slice(2);
const args = new Set(argv);
// --heldout-file PATH (or --heldout-file=PATH): that file is the held-out set (implies --heldout)
const fileAt = argv.findIndex((a) => a === '--heldout-file' || a.startsWith('--heldout-file='));
const heldoutFile =
  fileAt < 0
    ? null
    : argv[fileAt].includes('=')
      ? argv[fileAt].slice(argv[fileAt].indexOf('=') + 1)
      : argv[fileAt + 1];
if (fileAt >= 0 && !heldoutFile) {
  console.error('--heldout-file needs a path');
  process.exit(2);
}
if (heldoutFile) args.add('--heldout');
const dir = path.join(ROOT, 'test', 'corpus', 'elision');
const corpus = (name) => JSON.parse(readFileSync(path.join(dir, name), 'utf8'));
const texts = (name) => corpus(name).placeholders.map((p) => (typeof p === 'string' ? p : p.text));
const pct = (n, d) => `${n} / ${d} = ${d ? ((100 * n) / d).toFixed(1) : '0.0'}%`;
const pct2 = (n, d) => `${n} / ${d} = ${d ? ((100 * n) / d).toFixed(2) : '0.00'}%`;

/**
 * This round's held-out set: measured once at the end of a round, never tuned on in it. Sets 13
 * to 18 were measured once (docs/reliability.md) and are tuning data since; set 19 (heldout-19*,
 * when it is collected) is frozen for the lead's measurement: measure it with --heldout-file at
 * the merge, not before.
 */
const HELDOUT = 'heldout-13-real.json';
/** Sets measured once in their round and tuned on after (their near misses are listed with the real comments). */
const TUNING = [
  'heldout-18-real.json',
  'heldout-17-real.json',
  'heldout-16-real.json',
  'heldout-14-real.json',
  'heldout-15-real.json',
  'heldout-13-real.json',
  'heldout-12-real.json',
  'heldout-11-real.json',
  'heldout-10.json',
  'heldout-9-real.json',
  'heldout-8-real.json',
  'heldout-7-real.json',
  'heldout-6-real.json',
  'heldout-5-real.json',
  'tuning-15-written.json',
  'tuning-13-written.json',
  'tuning-12-written.json',
  'tuning-5.json',
  'heldout-4-real.json',
  'heldout-3-real.json',
  'heldout-placeholders.json',
  'heldout-2-placeholders.json',
  'placeholders.json',
  'tuning-issue20.json',
  'held-out.json',
];
const REAL = [
  'heldout-18-comments.json',
  'heldout-17-comments.json',
  'heldout-6-comments.json',
  'heldout-5-comments.json',
  'real-comments.json',
  'heldout-comments.json',
  'heldout-2-comments.json',
  'heldout-3-comments.json',
];

const realComments = [...new Set(REAL.flatMap((n) => corpus(n).comments.map((c) => c.text)))];

if (!args.has('--timing')) {
  console.log('tuning sets (tuned on; their misses are listed):');
  for (const n of TUNING) {
    const f = elisionFigures(texts(n), []);
    console.log(`  ${n.padEnd(28)} ${pct(f.caught, f.placeholders)}`);
    for (const m of f.missed) console.log(`      missed: ${m}`);
  }
  const all = TUNING.flatMap((n) => texts(n));
  const mixed = besideNewCode(all);
  console.log(
    `all tuning sets, each placeholder with a new line of code in the same hunk (the ALONE rule only where the hunk lost four lines of code for each it added): caught ${pct(all.length - mixed.length, all.length)}`,
  );
  const hard = elisionFigures([], realComments);
  console.log(
    `real comments, added in a hunk that rewrites code beside them: flagged ${pct2(hard.flagged, hard.comments)}`,
  );
  for (const m of hard.wronglyFlagged) console.log(`      flagged: ${m}`);
  const alone = aloneFigures(realComments);
  console.log(
    `real comments, each alone where 20 lines of code were removed (the ALONE rule's case): flagged ${pct2(alone.length, realComments.length)}`,
  );
  for (const m of alone) console.log(`      flagged: ${m}`);
  // each comment file on its own (its texts, repeats within it dropped): the figures of every set
  for (const n of REAL) {
    const own = [...new Set(corpus(n).comments.map((c) => c.text))];
    console.log(
      `  ${n.padEnd(28)} beside rewritten code ${pct2(elisionFigures([], own).flagged, own.length)}; alone where 20 lines went ${pct2(aloneFigures(own).length, own.length)}`,
    );
  }
  for (const n of [
    'tuning-15-written.json',
    'heldout-18-real.json',
    'heldout-17-real.json',
    'heldout-16-real.json',
    'heldout-14-real.json',
    'heldout-15-real.json',
    'heldout-13-real.json',
    'heldout-12-real.json',
    'heldout-11-real.json',
    'heldout-10.json',
    'heldout-9-real.json',
    'heldout-8-real.json',
    'heldout-7-real.json',
  ]) {
    const near = corpus(n).nearMisses.map((x) => x.text);
    const beside = elisionFigures([], near);
    console.log(
      `${n} near misses (tuning data): beside rewritten code ${beside.flagged} / ${near.length}; alone where 20 lines went ${aloneFigures(near).length} / ${near.length}`,
    );
  }
  const own = inTheirFiles(args.has('--alone') ? new Set(realComments.map((c) => c.trim())) : null);
  console.log(
    `real comments in their own files (${own.sources}), each added where nothing was removed: flagged ${pct2(own.flagged.length, own.comments)}`,
  );
  for (const m of own.flagged) console.log(`      flagged: ${m}`);
  if (own.fresh) {
    const f = aloneFigures(own.fresh);
    console.log(
      `comments of those files no real comment set holds, each alone where 20 lines went: flagged ${pct2(f.length, own.fresh.length)}`,
    );
    for (const m of f) console.log(`      flagged: ${m}`);
    console.log(
      `code lines with a comment after the code (${own.trailing.lines}) read as a placeholder there: ${own.trailing.flagged.length}`,
    );
    for (const m of own.trailing.flagged) console.log(`      flagged: ${m}`);
    const e = aloneFigures(own.ellipses);
    console.log(
      `code lines of those files holding an ellipsis or in square brackets (${own.ellipses.length} distinct), each alone where 20 lines went: flagged ${pct2(e.length, own.ellipses.length)}`,
    );
    for (const m of e) console.log(`      flagged: ${m}`);
  }
}

if (args.has('--heldout')) {
  // the figures only: which items they miss is not printed, so nobody tunes on them by accident
  const set = heldoutFile
    ? JSON.parse(readFileSync(path.resolve(heldoutFile), 'utf8'))
    : corpus(HELDOUT);
  const label = heldoutFile ? path.basename(heldoutFile) : HELDOUT;
  const held = elisionFigures(
    set.placeholders.map((p) => p.text),
    [],
  );
  console.log(`HELD-OUT ${label}: caught ${pct(held.caught, held.placeholders)}`);
  const mixed = besideNewCode(set.placeholders.map((p) => p.text));
  console.log(
    `HELD-OUT ${label}, each with a new line of code in the same hunk (the ALONE rule only where the hunk lost four lines of code for each it added): caught ${pct(set.placeholders.length - mixed.length, set.placeholders.length)}`,
  );
  const near = set.nearMisses.map((x) => x.text);
  console.log(
    `HELD-OUT ${label} near misses: flagged beside rewritten code ${elisionFigures([], near).flagged} / ${near.length}, alone where 20 lines went ${aloneFigures(near).length} / ${near.length}`,
  );
}

if (args.has('--history')) history(process.env.EXPRESS);
if (args.has('--timing')) timing();

/**
 * The placeholders missed when each replaces 20 lines of code together with one new line of code
 * (a call the agent rewrote beside it): the ALONE rule cannot apply, only the phrasing rules.
 */
function besideNewCode(placeholders) {
  const body = Array.from({ length: 30 }, (_, i) => `    total = total + weight_${i} * value_${i}`);
  const old = ['def run(values):', ...body, '    return total', ''].join('\n');
  return placeholders.filter(
    (p) =>
      findElisions(
        [
          'def run(values):',
          ...body.slice(0, 5),
          `    ${p}`,
          '    total = rescale(total)',
          ...body.slice(25),
          '    return total',
          '',
        ].join('\n'),
        old,
        1,
      ).length === 0,
  );
}

/** The comments flagged when each is all an edit adds in place of 20 lines of code (findElisions' ALONE rule). */
function aloneFigures(comments) {
  const body = Array.from({ length: 30 }, (_, i) => `    total = total + weight_${i} * value_${i}`);
  const old = ['def run(values):', ...body, '    return total', ''].join('\n');
  return comments.filter(
    (c) =>
      findElisions(
        [
          'def run(values):',
          ...body.slice(0, 5),
          `    ${c}`,
          ...body.slice(25),
          '    return total',
          '',
        ].join('\n'),
        old,
        1,
      ).length > 0,
  );
}

/**
 * Every comment line of express's tree (EXPRESS), guard's own src and a few
 * node_modules packages' sources, each in its file as an edit that adds it
 * and removes nothing: the file without the line becomes the file with it.
 */
function inTheirFiles(known) {
  const files = [];
  const walk = (base, rel, keep) => {
    for (const name of readdirSync(path.join(base, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      if (name === 'node_modules' || name.startsWith('.')) continue;
      const st = statSync(path.join(base, r));
      if (st.isDirectory()) walk(base, r, keep);
      else if (keep.test(r) && st.size < 2_000_000)
        files.push({ label: r, text: readFileSync(path.join(base, r), 'utf8') });
    }
  };
  walk(path.join(ROOT, 'src'), '', /\.ts$/);
  for (const pkg of [
    'vitest',
    'vite',
    'typescript/lib',
    'fast-check/lib',
    'postcss/lib',
    'diff/libesm',
  ]) {
    try {
      walk(path.join(ROOT, 'node_modules', pkg), '', /\.(js|mjs|ts)$/);
    } catch {
      // a package this checkout does not have
    }
  }
  let sources = 'guard src, node_modules: vitest vite typescript fast-check postcss diff';
  if (process.env.EXPRESS) {
    const g = (...a) =>
      execFileSync('git', ['--git-dir', process.env.EXPRESS, ...a], {
        maxBuffer: 1 << 28,
      }).toString('utf8');
    for (const f of g('ls-tree', '-r', '--name-only', 'HEAD')
      .split('\n')
      .filter((p) => /\.(js|md|json|yml)$/.test(p))) {
      files.push({ label: f, text: g('show', `HEAD:${f}`) });
    }
    sources = `${path.basename(path.dirname(process.env.EXPRESS))} (EXPRESS), ${sources}`;
  }
  let comments = 0;
  const flagged = [];
  const fresh = new Set();
  const trailing = { lines: 0, flagged: [] };
  // code lines that hold an ellipsis or stand in square brackets (spreads, varargs, strings): the
  // lines the rule for code that stands for code (an ellipsis where code would be) looks at
  const ellipses = new Set();
  for (const { label, text } of files) {
    const lines = text.split('\n');
    if (known)
      for (const line of lines) {
        const t = line.trim();
        if (/^(\/\/|\/\*|\*|#|<!--|--)/.test(t) && /[A-Za-z]{2}/.test(t) && !known.has(t))
          fresh.add(t);
        else if (/\S\s*(?:\/\/|\/\*|#|<!--|--)\s/.test(t) && t.length <= 400) {
          trailing.lines++;
          const alone = ['x = 1', '  ' + t, 'y = 2'].join('\n');
          if (findElisions(alone, ['x = 1', 'a = 1', 'b = 2', 'y = 2'].join('\n'), 1).length > 0)
            trailing.flagged.push(`${label}: ${t}`);
        }
        if (
          !/^(\/\/|\/\*|\*|#|<!--|--)/.test(t) &&
          (/\.\.\.|…/.test(t) || /^\[.*\]$/.test(t)) &&
          t.length <= 400
        )
          ellipses.add(t);
      }
    // only the comment lines the rule looks at as candidates cost a diff: the others cannot fire
    lines.forEach((line, i) => {
      const t = line.trim();
      if (!/^(\/\/|\/\*|\*|#|<!--|--)/.test(t) || !/[A-Za-z]{2}/.test(t)) return;
      comments++;
      if (!isElisionLine(line)) return;
      const old = [...lines.slice(0, i), ...lines.slice(i + 1)].join('\n');
      if (findElisions(text, old, 1).length > 0) flagged.push(`${label}:${i + 1}: ${t}`);
    });
  }
  return {
    comments,
    flagged,
    sources,
    fresh: known ? [...fresh] : null,
    trailing,
    ellipses: [...ellipses],
  };
}

/** Every non-merge commit of a history: each modified text file's old and new text through the rule. */
function history(gitDir) {
  if (!gitDir) {
    console.log('--history needs EXPRESS=/path/to/a/git/dir');
    return;
  }
  const git = (a, input) =>
    execFileSync('git', ['--git-dir', gitDir, ...a], { maxBuffer: 1 << 30, input });
  const raw = git(['log', '--no-merges', '--raw', '--no-abbrev', '--format=C %H']).toString('utf8');
  const pairs = [];
  let commit = '';
  for (const line of raw.split('\n')) {
    if (line.startsWith('C ')) commit = line.slice(2, 14);
    const m = /^:\d+ \d+ ([0-9a-f]{40}) ([0-9a-f]{40}) M\t(.+)$/.exec(line);
    if (
      m &&
      /\.(js|mjs|cjs|ts|tsx|jsx|md|rst|json|ya?ml|toml|cfg|ini|html|css|sh|py|rb|go|rs|java|kt|c|h|cc|cpp|lua|sql)$/.test(
        m[3],
      )
    )
      pairs.push({ commit, old: m[1], neu: m[2], file: m[3] });
  }
  const ids = [...new Set(pairs.flatMap((p) => [p.old, p.neu]))];
  const out = git(['cat-file', '--batch'], ids.join('\n') + '\n');
  const blobs = new Map();
  for (let at = 0; at < out.length;) {
    const nl = out.indexOf(10, at);
    const [id, , size] = out.subarray(at, nl).toString().split(' ');
    blobs.set(id, out.subarray(nl + 1, nl + 1 + Number(size)).toString('utf8'));
    at = nl + 1 + Number(size) + 1;
  }
  let commentsTouched = 0;
  const flagged = [];
  const commits = new Set();
  for (const p of pairs) {
    const old = blobs.get(p.old);
    const neu = blobs.get(p.neu);
    commits.add(p.commit);
    const before = new Set(old.split('\n'));
    for (const l of neu.split('\n'))
      if (!before.has(l) && /^\s*(\/\/|\/\*|\*|#|<!--)/.test(l) && /[A-Za-z]{2}/.test(l))
        commentsTouched++;
    for (const e of findElisions(neu, old, 3, p.file))
      flagged.push(`${p.commit} ${p.file}:${e.line}: ${e.text}`);
  }
  console.log(
    `history ${gitDir}: ${commits.size} commits, ${pairs.length} file changes, ${commentsTouched} comment lines added or changed; flagged ${flagged.length}`,
  );
  for (const f of flagged) console.log(`      flagged: ${f}`);
}

/** The rule's cost: findElisions on a 15 MB file with 1% of its lines changed, and on a typical edit. */
function timing() {
  const { big, bigNew, small, smallNew, trunc: truncated } = timingInputs();
  const time = (label, neu, old, runs) => {
    findElisions(neu, old);
    const t0 = performance.now();
    for (let i = 0; i < runs; i++) findElisions(neu, old);
    console.log(
      `  ${label}: ${((performance.now() - t0) / runs).toFixed(2)} ms per call (${runs} runs)`,
    );
  };
  console.log('findElisions cost (noisy on a shared machine):');
  time(
    `15 MB file (${big.length} lines, 1% changed, one placeholder)`,
    bigNew.join('\n'),
    big.join('\n'),
    3,
  );
  time(
    'typical edit (300-line file, 3 lines rewritten)',
    smallNew.join('\n'),
    small.join('\n'),
    500,
  );
  time(
    'typical truncation (300-line file, 20 lines replaced by a placeholder)',
    truncated.join('\n'),
    small.join('\n'),
    200,
  );
}
