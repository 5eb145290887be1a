/**
 * Elision placeholders: the comment an agent writes where it meant "the rest
 * stays as it was" and so truncates a file. The phrases are data
 * (elision-phrases.json); this module normalises a comment line and matches
 * it against them, and finds the placeholders that stand where code was
 * removed. Measured against test/corpus/elision/ (elisionFigures below,
 * test/unit/elision-corpus.test.ts, npm run bench). Rule id: `elision`.
 */
import data from './elision-phrases.json' with { type: 'json' };
import { checkBudget } from '../runtime/deadline.js';
import { diffHunks, type Hunk } from './hunks.js';

export interface PhraseData {
  comment: { open: string[]; close: string[] };
  dots: string[];
  slots: Record<string, string[]>;
  phrases: string[];
  general?: GeneralData;
}

export interface GeneralData {
  maxWords: number;
  maxFree: number;
  pairs: string[];
  strong: string[];
  weak: string[];
  mark: string[];
  position: string[];
  filler: string[];
  veto: string[];
  pointer: string[];
  listMarks: string[];
  verbs: string[];
  dotsMaxWords: number;
  foreign: {
    mark: string[];
    strong: string[];
    pairs: string[];
    substrings: string[];
    /** Other languages' words and phrases by their English kin: a comment holding one is read in English. */
    kin: Record<string, string[]>;
    /** Their small words (of, the, in, as, ...) by their English kin: read so only beside a word of `kin`. */
    small: Record<string, string[]>;
  };
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** One word of a phrase: its alternatives (each one word or more), and whether it may be left out. */
interface PhraseToken {
  alts: string[][];
  optional: boolean;
}

/**
 * Compile one phrase of the little language in elision-phrases.json into
 * words to match. (Not a regex: V8 spent 80-90 ms compiling the 33 phrases'
 * large alternations on the first comment line of every `guard check`.)
 */
function compilePhrase(phrase: string, slots: Record<string, string[]>): PhraseToken[] {
  return phrase.split(' ').map((token) => {
    const optional = token.endsWith('?');
    const alts = (optional ? token.slice(0, -1) : token).split('|').flatMap((alt) => {
      const slot = /^\{([A-Z]+)\}$/.exec(alt)?.[1];
      if (slot === undefined) return [alt === 'N' ? 'n' : alt];
      const values = slots[slot];
      if (!values) throw new Error(`elision-phrases.json: unknown slot {${slot}} in "${phrase}"`);
      return values;
    });
    return { alts: alts.map((a) => a.split(' ')), optional };
  });
}

/** Do the words match the phrase from token `t` and word `w` on, to the end of both? */
function matches(tokens: readonly PhraseToken[], words: readonly string[], t = 0, w = 0): boolean {
  if (t === tokens.length) return w === words.length;
  const token = tokens[t]!;
  for (const alt of token.alts) {
    if (
      alt.every((word, k) => words[w + k] === word) &&
      matches(tokens, words, t + 1, w + alt.length)
    )
      return true;
  }
  return token.optional && matches(tokens, words, t + 1, w);
}

/**
 * The words a phrase can start with (a comment starting with none of them
 * cannot match it, so it is not tried), or null when every token is optional.
 */
function firstWords(tokens: readonly PhraseToken[]): Set<string> | null {
  const out = new Set<string>();
  for (const token of tokens) {
    for (const alt of token.alts) out.add(alt[0]!);
    if (!token.optional) return out;
  }
  return null;
}

export interface Matcher {
  isPlaceholder(line: string): boolean;
  /** Is the line a comment line (after white space, a comment opener)? */
  isComment(line: string): boolean;
  /**
   * A comment line (or a bare `...` line) no phrase takes that still says "the rest", "other",
   * "same", "unchanged" or the like: a placeholder only where it stands alone in place of a
   * run of removed code (findElisions' ALONE rule).
   */
  isLoose(line: string): boolean;
  /**
   * The comment after code on the same line when it is a placeholder (`pass  # rest unchanged`),
   * or (`loose`) when it is all a bracket pair holds and says weaker words (`<td>{/* existing
   * cells * /}</td>`): a placeholder by the ALONE rule; else null.
   */
  trailing(line: string): { text: string; loose: boolean; own?: boolean } | null;
  /**
   * A statement that stands for code by its message, such as a raise, a throw or a print whose
   * string says the code is left out: the line, and whether it counts by the ALONE rule only
   * (`loose`: weaker words, or a print or log call), or null.
   */
  stub(line: string): { text: string; loose: boolean; own?: boolean } | null;
  /**
   * Does a comment describe the new code beside it: that its behaviour stays (`same result as
   * before`, `keep the existing behaviour`, `unchanged API`) or that it was rewritten (`vectorised`,
   * `new implementation`)? Then, beside new code, it is no placeholder.
   */
  aboutNewCode(text: string): boolean;
  /**
   * A line of code that stands for code by an ellipsis where code would be (`getUser() { ... }`,
   * `a = 1; ... b();`, `mutationFn: ...`, `SELECT ... FROM t WHERE ...`), or a whole line in square
   * brackets that says the code is left out (`[Rest of original README...]`): the line, by the
   * ALONE rule only; else null.
   */
  standsIn(line: string): { text: string; loose: true; own?: boolean } | null;
}

const ASCII = /^[\x00-\x7f]*$/;

/** Dots before and after a comment's words (`... imports ...`), on one side, or none. */
type Framed = 'both' | 'one' | 'none';

/** A step's answer: a placeholder (true), not one (false), or not this step's to say (undefined). */
type Verdict = boolean | undefined;

/** The phrase data compiled once: what every line is matched against. */
interface Compiled {
  d: PhraseData;
  phrases: Array<{ tokens: PhraseToken[]; first: Set<string> | null }>;
  /** Comment openers and closers, longest first. */
  opens: string[];
  closes: string[];
  general: ((words: string[], framed: Framed, shape: Shape) => boolean) | null;
  dotsRe: RegExp;
  maxOpen: number;
  /** The first characters any opener can start with, either case: most code lines start with none. */
  firstChars: Set<number>;
  /** Other languages' words by their English kin (compiled on the first comment line), or null. */
  readonly kin: Kin | null;
}

export function makeMatcher(d: PhraseData): Matcher {
  const m = compileMatcher(d);
  const isComment = (line: string): boolean => {
    // most lines are code: answered on their first character, as in screen()
    let i = 0;
    let c = line.charCodeAt(0);
    for (; c === 32 || c === 9; c = line.charCodeAt(++i));
    if (c < 128 && !m.firstChars.has(c)) return false;
    const t = line.trim().toLowerCase();
    return t.length > 0 && m.opens.some((o) => t.startsWith(o));
  };
  let loose: Set<string> | undefined;
  return {
    isPlaceholder: (line) => isPlaceholder(m, line),
    isComment,
    isLoose: (line) =>
      BARE_DOTS.test(line) || (isComment(line) && saysLeftOut(m, line, (loose ??= looseWords(d)))),
    trailing(line) {
      const found = trailingComment(line);
      if (found === null) return null;
      if (isPlaceholder(m, found.comment)) return { text: found.comment.trim(), loose: false };
      // (after only brackets, dots or markup the comment is the line's own: `}, // 此处省略 ...`;
      // a comment that opens a body at the line's end is its first line: `) { /* omitted for
      // brevity but safe to add back if needed * /`)
      if (
        (found.enclosed || found.plain || (found.opens && BODY_CUT.test(found.comment))) &&
        saysLeftOut(m, found.comment, (loose ??= looseWords(d)))
      )
        // (not after markup: `<td>{/* existing amount expression */}</td>` labels a cell)
        return { text: found.comment.trim(), loose: true, own: found.plain && !line.includes('<') };
      // a literal whose whole value is a comment naming what it holds: `= [ /* URLs misturadas * / ]`
      return found.literal && namesContent(found.comment)
        ? { text: found.comment.trim(), loose: true }
        : null;
    },
    standsIn(line) {
      if (elidedCode(line)) return { text: line.trim(), loose: true, own: true };
      const inner = BRACKET_LINE.exec(line)?.[1];
      if (inner !== undefined)
        return isPlaceholder(m, `// [${inner}]`) ||
          saysLeftOut(m, `// [${inner}]`, (loose ??= looseWords(d)))
          ? { text: line.trim(), loose: true, own: true }
          : null;
      // in brackets only by the whole-line rules: `(rest xs)` is Lisp
      const paren = PAREN_LINE.exec(line)?.[1];
      if (paren !== undefined)
        return !/\w-\w/.test(paren) && isPlaceholder(m, `// (${paren})`)
          ? { text: line.trim(), loose: true, own: true }
          : null;
      // dots then words and nothing else (`...rest of the component`), a list item of dots (`- ...`):
      // as a bare `...`, alone only
      const words = DOTS_WORDS.exec(line)?.[1];
      if (words !== undefined && saysLeftOut(m, `// ... ${words}`, (loose ??= looseWords(d))))
        return { text: line.trim(), loose: true };
      return LIST_DOTS.test(line) ? { text: line.trim(), loose: true } : null;
    },
    stub(line) {
      const found = stubMessage(line);
      if (found === null) return null;
      const said = `// ${found.message}`;
      if (isPlaceholder(m, said)) return { text: line.trim(), loose: !found.ends };
      // a body's end that says it was left out, as a predicate (`raise NotImplementedError("Omitted
      // from this public skeleton - see README.")`; not `throw new Error('omitted fields')`)
      if (found.ends && CUT_SCREEN.test(found.message) && CUT_PREDICATE.test(found.message))
        return { text: line.trim(), loose: true };
      // weaker words only after dots, the stand-in's own form: an error's message says "other"
      // and "existing" of what it refuses (`raise ValueError("other modes are not supported")`)
      return /^(?:\.{2,}|…)/.test(found.message) && saysLeftOut(m, said, (loose ??= looseWords(d)))
        ? { text: line.trim(), loose: true }
        : null;
    },
    aboutNewCode,
  };
}

/**
 * A word that says the code is left out, in English and the other languages' marks: a comment that
 * opens a body at the line's end says so of the body (not "same as before" or "keep the rest",
 * which a comment on the body that follows says too: `addEventListeners() { // Без изменений`).
 */
const BODY_CUT =
  /omitted|elided|truncated|snipped|not shown|left out|brevity|omitid|omis|omess|weggelassen|ausgelassen|опущ|пропущ|скры|省略|略去|생략|pominię|vynechán|atlan|dihilangkan|lược bỏ/i;

/** An ellipsis: three dots or the one character. */
const ELL = String.raw`(?:\.{3}|…)`;
/**
 * Where an ellipsis stands for code in a line of code:
 * - a body that holds only it, after a parameter list, an arrow, a type, a key or a word
 *   (`getUser() { ... }`, `-> Result<Ast> { ... }`, `key: { ... },`, `else { … }`); not after
 *   `=`, `(`, `,` or `return` (Lua's `{...}` of varargs, Python's `{...}`);
 * - a statement between statements (`a = 1; ... b();`, `log(x); ... };`), not at the end of a line
 *   (MATLAB's continuation: `A = [1 2; ...`);
 * - a value before the statement or literal ends (`Before=...;`, `key: ...,`, `x: ... }`, `return
 *   ...;`), or a key's whole value on its line (`mutationFn: ...`; not Python's `else: ...`);
 * - an element's whole content (`<td>...</td>`), a list literal's last items (`[1, 2, ...]`), a
 *   template's expression (`{{ ... }}`, `<%= ... %>`, `${...}`);
 * - a key of a map or a table that is only an ellipsis, mapped to the same (`"...": "..."`);
 * - an SQL clause trailing off at the end of the line or its string (`SELECT ... FROM t WHERE ...`,
 *   `"SELECT ... FROM ..."`; not `"SELECT ... FROM failed: %s"`).
 * Code's own ellipses are none of these: a spread or rest (`...args`, `[...xs]`), varargs
 * (`f(int, ...)`, `String... a`, `xs...`), ranges (`0...9`), Python's `Ellipsis`
 * (`Tuple[int, ...]`, a stub's body).
 */
const ELIDED_CODE = [
  new RegExp(
    String.raw`(?:\)|=>|->|>|:|(?<![\w$.])(?!(?:return|local|in|yield|await)\s*\{)[A-Za-z_][\w$]*)\s*\{\s*${ELL}\s*\}`,
  ),
  new RegExp(String.raw`;\s+${ELL}\s*(?:\}|[A-Za-z_$])`),
  new RegExp(String.raw`(?:[=:]\s*${ELL}\s*[;}]|:\s*${ELL}\s*,|\breturn\s+${ELL}\s*;)`),
  // a list literal that trails off after its items (`[1, 2, ...]`; not `Tuple[int, ...]`, `x[...,
  // 0]`, nor `[...]` alone: a quotation's or a string's cut, `' [...]'`)
  new RegExp(String.raw`(?:^|[=(,:\s])\[[^[\]]*,\s*${ELL}\s*\]`),
  // a template's expression or tag that holds only it: `{{ ... }}`, `{% ... %}`, `<%= ... %>`, `${...}`
  new RegExp(
    String.raw`\{\{-?\s*${ELL}\s*-?\}\}|\{%-?\s*${ELL}\s*-?%\}|<%=?\s*${ELL}\s*%>|[$#]\{\s*${ELL}\s*\}`,
  ),
  // an element whose whole content is the ellipsis: `<td>...</td>`, `<template>…</template>`
  new RegExp(String.raw`^\s*<([A-Za-z][\w-]*)\b[^<>]*>\s*${ELL}\s*</\1>\s*$`),
  new RegExp(
    String.raw`^\s*(?!(?:else|try|finally|except|lambda)\s*:)(?:[\w$-]+|"[^"]*"|'[^']*')\s*:\s*${ELL}\s*,?\s*$`,
  ),
  // a key that is only an ellipsis and maps to the same ellipsis (JSON, YAML, TOML, a dict): `{
  // "...": "..." }`, `'…' = '…'` (not a typographer's `'...': '…'`)
  /(?:^|[{,[\s])(["'])(\.{3}|…)\1\s*[:=]\s*(["'])\2\3/,
  new RegExp(
    String.raw`\b(?:SELECT|INSERT|UPDATE|DELETE|WITH|select|insert|update|delete)\b.*\b(?:SELECT|FROM|WHERE|SET|VALUES|AND|OR|BY|JOIN|ON|INTO|HAVING|from|where|set|values|join|into)\s+(?:\(\s*${ELL}\s*\)|${ELL})\s*(?:["'\x60;)]|$)`,
  ),
];

/** An ellipsis with no name or bracket right after it: every ELIDED_CODE holds one. */
const ELL_LOOSE = /(?:\.{3}|…)(?![\w$[({.])/;

/** Does a line of code hold an ellipsis where code would be (ELIDED_CODE)? */
function elidedCode(line: string): boolean {
  // (a spread or rest has a name or a bracket at once after its dots: `...args`, `[...xs]`; a line
  // of only those is answered with one look)
  return line.length <= 400 && ELL_LOOSE.test(line) && ELIDED_CODE.some((r) => r.test(line));
}

/**
 * A whole line in square brackets, words and not code (no quotes, `=` or inner brackets), and
 * what it holds: `[Rest of section with success/failure examples...]`. (Not an INI or TOML
 * section, `[server]`, `[tool.poetry]`: those hold one word.)
 */
const BRACKET_LINE = /^\s*\[([^[\]"'`=]*\S\s+\S[^[\]"'`=]*)\]\s*,?\s*$/;
/** The same in round brackets, three words or more: `(rest of file unchanged)` (not Lisp's `(rest xs)`). */
const PAREN_LINE = /^\s*\(([^()"'`=]*\S\s+\S[^()"'`=]*\S\s+\S[^()"'`=]*)\)\s*$/;
/**
 * Dots, then two or more words and nothing else (no code's punctuation): `...rest of the component`.
 * Not a doctest's continuation line: code after more space, or a keyword first (`...     return
 * r`, `... return r`).
 */
const DOTS_WORDS =
  /^\s*(?:\.{3}|…) ?(?!(?:return|print|pass|if|for|while|else|elif|def|class|yield|import|from|raise|try|except|with|assert|del|not|and|or|in|is|lambda|await|async)\b)(\p{L}+(?:\s+\p{L}+)+)\s*(?:\.{2,}|…)?\s*$/u;
/** A list item of dots: `- ...` (YAML, a Markdown list in a code fence). */
const LIST_DOTS = /^\s*[-+]\s+(?:\.{3}|…)\s*$/;

/**
 * Statements that end a body with a message (raise, throw, a panic or todo macro), and calls that
 * print one: where such a line is what replaced code, its message speaks as a comment would.
 */
const STUB =
  /^\s*(?:(raise|throw)\s+(?:new\s+)?(?:[\w$.]+\s*)?|(panic|todo|unimplemented|unreachable)!\s*|(?:print|println|printf|console\.\w+|puts|echo|die|fmt\.\w+|System\.(?:out|err)\.\w+|(?:log|logger|logging)\.\w+|alert)\s*)\(?\s*[fFrRuU]?(["'`])((?:(?!\3).)*)\3\s*\)?\s*;?\s*$/;

/** The words STUB's statements start with, by their first letter (most code lines start with none). */
const STUB_FIRST = new Map<number, string[]>();
for (const w of [
  'raise',
  'throw',
  'panic!',
  'todo!',
  'unimplemented!',
  'unreachable!',
  'print',
  'console.',
  'puts',
  'echo',
  'die',
  'fmt.',
  'System.',
  'log',
  'alert',
])
  STUB_FIRST.set(w.charCodeAt(0), [...(STUB_FIRST.get(w.charCodeAt(0)) ?? []), w]);

/** Does the line start, after white space, with one of STUB_FIRST's words and hold a quote? */
function stubFirst(line: string): boolean {
  let i = 0;
  let c = line.charCodeAt(0);
  for (; c === 32 || c === 9; c = line.charCodeAt(++i));
  const words = STUB_FIRST.get(c);
  if (words === undefined || !words.some((w) => line.startsWith(w, i))) return false;
  return line.includes('"') || line.includes("'") || line.includes('`');
}

/** A stub statement's message, and whether the statement ends the body (raise, throw, a macro). */
function stubMessage(line: string): { message: string; ends: boolean } | null {
  if (line.length > 300 || !stubFirst(line)) return null;
  const hit = STUB.exec(line);
  if (hit === null) return null;
  const message = hit[4]!.trim();
  // words, not a format or a path: `print("%s")`, `echo "$HOME/bin"`
  if (!/\p{L}{2}/u.test(message) && !/^(?:\.{3}|…)$/.test(message)) return null;
  return { message, ends: hit[1] !== undefined || hit[2] !== undefined };
}

/**
 * Does a comment speak of the new code beside it: that a rewrite keeps its behaviour (a word of
 * behaviour and a word of sameness: `same result as before`, `keep the existing behaviour`,
 * `unchanged API`), or that it is one (`vectorised`, `new implementation`)? Not after dots, the
 * stand-in's own form (`// ... state for sidebar, API key manager ...`).
 */
function aboutNewCode(text: string): boolean {
  const t = text.replace(/^\W+/, (lead) => (/\.\.|…/.test(lead) ? '...' : ''));
  if (t.startsWith('...')) return false;
  return REWRITE.test(t) || (BEHAVIOUR.test(t) && SAMENESS.test(t));
}

const REWRITE =
  /\b(?:vectori[sz]ed?|vectori[sz]ation|rewritten|reimplement(?:ed|ation)?|simplified|optimi[sz]ed|faster|idiomatic|one-liner|new (?:implementation|version|approach|algorithm))\b/i;
const BEHAVIOUR =
  /\b(?:results?|outputs?|outcome|behaviou?rs?|semantics|api|apis|interface|contract|signatures?|return values?)\b/i;
const SAMENESS =
  /\b(?:same|unchanged|identical|equivalent|keeps?|kept|preserved?|preserves|existing|as before|intact)\b/i;

/**
 * A block comment that names what a literal holds, in words of any language (`/* URLs misturadas
 * * /`, `/* failed / pending * /`, `/* country codes * /`): at most eight words, no code's punctuation;
 * not that it is empty or left so on purpose (`/* none * /`, `/* no deps * /`, `/* TODO * /`), a
 * directive (`/* eslint-disable * /`, `/* @__PURE__ * /`), a type or a number, a path, why code went.
 */
function namesContent(comment: string): boolean {
  const inner = comment
    .replace(/^\{?\/\*+|\*\/\}?$/g, '')
    .replace(/^\W{1,5}|\W{1,5}$/gu, (x) => (/[.…]/.test(x) ? x : ''))
    .trim();
  if (inner === '' || inner.length > 80 || !/\p{L}{2}/u.test(inner)) return false;
  if (/[=:;{}()<>@"'`#$\d]|\[\]/.test(inner) || /^\p{Ll}+-\p{Ll}/u.test(inner)) return false;
  // (nor a path, nor why code went: `[ /* moved to utils.ts * / ]`)
  if (/\w\.\w/.test(inner)) return false;
  const words = wordsOfText(inner);
  if (words.length > 8 || words.some((w) => EMPTY_ON_PURPOSE.has(w) || explains(w))) return false;
  // (a type: `/* string * /`, `/* any * /`)
  return !(words.length === 1 && TYPE_WORD.test(words[0]!));
}

/** Words that say a literal is empty, or left so on purpose. */
const EMPTY_ON_PURPOSE = new Set([
  'empty',
  'none',
  'nothing',
  'no',
  'not',
  'todo',
  'fixme',
  'xxx',
  'noop',
  'unused',
  'intentionally',
  'deliberately',
  'ignore',
  'ignored',
  'default',
  'defaults',
  'reserved',
  'optional',
  'placeholder',
  'later',
  'filled',
]);
/** A type's name. */
const TYPE_WORD =
  /^(?:string|strings|int|integer|number|numbers|float|double|bool|boolean|any|object|unknown|void|null|undefined|char|byte|bytes|long|short|str|list|dict|map|array)$/;

/** A line of dots and nothing else: `...`, `…`, `⋮`. */
const BARE_DOTS = /^\s*(?:\.{3,}|…+|⋮|⋯)\s*$/;

/** Could the line be only dots? Its first character after spaces and tabs is `.` or past ASCII. */
function mayBeDots(line: string): boolean {
  let i = 0;
  let c = line.charCodeAt(0);
  for (; c === 32 || c === 9; c = line.charCodeAt(++i));
  return c === 46 || c > 127;
}

/**
 * Words that say, in a comment that stands alone where code went, that the code is elsewhere or
 * left out: the marks that name what is left ("rest", "other", "existing"; not "all", "more",
 * "additional", "prior": a licence's "prior written permission"), the strong words, the weak words
 * that say it stays, and words of likeness ("similar", "ditto").
 */
function looseWords(d: PhraseData): Set<string> {
  const g = d.general;
  const marks = ['rest', 'remainder', 'remaining', 'existing', 'previous', 'original', 'old'];
  const weak = ['same', 'kept', 'remains', 'remain', 'stays', 'stay', 'preserved', 'intact'];
  return new Set([
    ...marks,
    ...['other', 'others', ...weak, 'similar', 'similarly', 'likewise', 'ditto', 'idem', 'repeat'],
    // what the reader knows without seeing it: "the usual getters and setters", "boilerplate omitted"
    ...['usual', 'boilerplate', 'analogous', 'analogously'],
    ...['unchanged', 'omitted', 'truncated', 'elided', 'snipped', 'skipped'],
    ...(g ? [...g.foreign.mark, ...g.foreign.strong, ...g.strong] : []).filter(
      (w) => !w.includes('_'),
    ),
  ]);
}

/**
 * Words that say why code went rather than that it is left out, or explain rather than stand for
 * code: a developer who deletes a block and leaves `// moved to utils.ts` or `// removed: no
 * longer needed` truncated nothing; with the general rule's vetoes ("if", "because", "we", ...).
 */
const WHY_GONE = new Set([
  'moved',
  'move',
  'removed',
  'remove',
  'deleted',
  'delete',
  'deprecated',
  'replaced',
  'refactored',
  'extracted',
  'obsolete',
  'unused',
  'dead',
  'disabled',
  'longer',
  'instead',
  'now',
  'migrated',
  'inlined',
  'copyright',
  'license',
  'param',
  'returns',
]);

/** A sentence that runs on to the next line: it ends on a word that needs one after it. */
const CONTINUES = /\b(?:the|a|an|and|or|of|to|that|in|with|from|as|by|at|its|their)$/i;

/** At most this many words in a comment the ALONE rule reads. */
const LOOSE_MAX_WORDS = 12;

/**
 * Does a comment line that no phrase takes say that code is left out: dots before or after its
 * words, or one of the loose words, in at most LOOSE_MAX_WORDS words, none a veto? (Not an inner
 * line of a block comment: ` * Same as hook() however ...` is prose of a doc comment.)
 */
function saysLeftOut(m: Compiled, line: string, loose: Set<string>): boolean {
  // doc comments (` * ...`, `/** ... */`, `/// ...`) are prose about code, not a stand-in for it
  // (and Lua's `---`: `---@field is_same ...`, `---Same as run but runs multiple futures`)
  // (not a banner between rulers of slashes: `/// 中略 ///`)
  if (/^\s*(?:\*|\/\*\*|\/\/\/|---(?!-))/.test(line) && !/^\s*\/\/\/.*\S.*\/\/\/\s*$/.test(line))
    return false;
  // a table's row (words apart by wide gaps: `--   flags    field width  precision ...  rest`), an
  // interpolation (`#{code}`, Ruby's and Elixir's): no comment of words
  if (/\S {3,}\S.*\S {3,}\S/.test(line.trim()) || /^\s*#\{/.test(line)) return false;
  const read: Read = { kin: 'none' };
  const yes = leftOut(m, commentBody(m, line, read), loose, read.own);
  // read in English with more than KIN_UNKNOWN words unknown, a comment says more than its words
  // of placeholders (`// Reszta kodu jest poprawna...`): it counts where its own words count too
  if (!yes || (read.unknown ?? 0) <= KIN_UNKNOWN) return yes;
  return leftOut(m, commentBody(m, line, undefined, false), loose);
}

/**
 * At most this many words of a comment read in English may be unknown (neither a phrase of
 * another language nor a word of the rules) for the ALONE rule to take its English reading alone:
 * most of set 18's placeholders in other languages leave two or fewer (`Sisa kode initGame()
 * seperti sebelumnya`: `initgame`), most of its near misses more.
 */
const KIN_UNKNOWN = 3;

/** saysLeftOut's steps on a comment's text (commentBody's), `own` its words where it was read in English. */
function leftOut(m: Compiled, body: string | null, loose: Set<string>, own?: string): boolean {
  if (body === null || describesOrContinues(body.trim())) return false;
  // a hedge is no condition: `// Keep your existing paths if any`, `// ... as needed`
  // (its clause ends there: `... not logged in, if any` does not run on to the next line)
  const bare = (HEDGE_SCREEN.test(body) ? body.replace(HEDGE, '.') : body).trim();
  if (bare === '') return false;
  // its words, split once and only when a step gets past its look at the text
  let split: string[] | undefined;
  const words = () => (split ??= wordsOf(m, bare));
  return (
    restOfCode(bare, words) ||
    laterSentenceCut(bare, words) ||
    fullElsewhere(bare, words) ||
    shortLeftOut(m, bare, words, loose) ||
    leadLeftOut(m, bare, words) ||
    toldCut(bare, words, own?.trim()) ||
    keptOrElsewhere(bare, words) ||
    pointsAtKept(m, bare, words) ||
    likeLeftOut(m, bare, words) ||
    sentenceLeftOut(bare, words)
  );
}

/** A verb a statement does not open with: the line goes on with the sentence of the one before. */
const CONTINUED_VERB = /^(?:is|are|was|were|be|been)\s+\p{Ll}/u;

/**
 * A comment line that is prose about the code, not a stand-in for it, by its shape (set 17's
 * fresh comments, each alone where 20 lines went): a line that goes on with a sentence begun on the
 * line before (it opens on a comma, or on a word no sentence opens with: `// is returned
 * unchanged.`, `# to look the same as ordinary variables.`, `# cases, and look like a memory leak
 * in others.`; it closes a bracket it never opened: `// entirely for preview and other child
 * commands).`; or it ends a sentence it did not open: `// lane holds bit 6 of that same lane.`);
 * a verb in the present tense that opens a one-sentence description of what the code does
 * (`# Deletes all old elements.`); a parameter's or a field's description (`-- strFilePath - The
 * existing result file.`, `# Prevented attack::   DNS rebinding and other ...`).
 */
function describesOrContinues(bare: string): boolean {
  return (
    /^[,;]/.test(bare) ||
    CONTINUED_VERB.test(bare) ||
    /^(?:to|than|nor)\s/.test(bare) ||
    // (a sentence's last words, begun on the line before: `# and other environments.`)
    (/^(?:and|or)\s/.test(bare) && /[\p{L}\p{N})]\.$/u.test(bare)) ||
    // a question asks about the code, it stands for none: `# TODO: keep the previous scopes?`
    /\?$/.test(bare) ||
    // an imperative that makes something new: `-- Create a new id with the same span as an
    // existing one`, `-- Apply a single replacement using its indices into the original string.`
    (/^\p{Lu}\p{Ll}+\s+(?:a|an)\s+(?:new\s+|single\s+)?\p{Ll}/u.test(bare) &&
      !/(?:\.{2,}|…)$/.test(bare)) ||
    /^\p{Ll}+,\s+(?:and|or|but)\s/u.test(bare) ||
    bare.split(')').length > bare.split('(').length ||
    // (one sentence: a later one may say the body is left out, `# Loads the model. Details elided.`)
    (/^\p{Lu}\p{Ll}+[^su\W]s\s+(?:the|a|an|all|any|each|every|its|this|that|these|those)\s/u.test(
      bare,
    ) &&
      !/[.!?]\s+\p{Lu}/u.test(bare)) ||
    /^[A-Za-z_]\w*\s+-\s+\p{Lu}/u.test(bare) ||
    /^\w[\w ]*::/.test(bare) ||
    // the end of a sentence that did not begin here: lower case, five words or more, a full stop
    (/^\p{Ll}/u.test(bare) && /[\p{L}\p{N})]\.$/u.test(bare) && bare.split(/\s+/).length >= 5) ||
    doneToData(bare)
  );
}

/**
 * What the program does to the rest, said in the passive (`// the rest of the list is sorted by
 * date`, `# Remaining items are processed in the next batch`, `; rest of line is ignored by the
 * assembler`): a participle of an act on data, not of staying, leaving out, showing or writing code
 * (`// Other handlers are implemented similarly`, `// the rest is omitted`).
 */
function doneToData(bare: string): boolean {
  // (in the first clause only, not after dots, the stand-in's own form, nor said of likeness: `-- The
  // other three tables are created in exactly the same way as the users table above`)
  if (/^(?:\.{2,}|…)/.test(bare) || LIKENESS.test(bare)) return false;
  const hit = PASSIVE.exec(bare.split(FIRST_CLAUSE_END, 1)[0]!);
  return hit !== null && !CODE_PARTICIPLE.test(hit[1]!);
}

const LIKENESS =
  /\b(?:same|similar|similarly|like|likewise|identical|analogous|analogously|as before|as above|as with|as in)\b/i;
/** Where a sentence's first clause ends: punctuation of a break, or a word that opens a clause. */
const FIRST_CLAUSE_END =
  /[,;:(\u2013\u2014]|\s-\s|\b(?:that|which|who|when|once|after|before|until|if|but|so|because|while|where|unless)\b/i;

const PASSIVE =
  /\b(?:is|are|was|were|gets?|being)\s+(?:\w+ly\s+)?(\p{Ll}{3,}(?:ed|en)|made|built|sent|set|run|read|found|held|bound|caught|brought|bought|taught|sought|paid|sold|told|spun|struck|stuck|shut|split|spread|led|fed|lost|meant|met|won|hit|put|thrown|drawn|known|shown|grown|done)\b/u;
/** Participles a placeholder says of code: left out, kept, shown, written, like the others. */
const CODE_PARTICIPLE =
  /^(?:omitted|elided|truncated|snipped|skipped|unchanged|untouched|unmodified|kept|preserved|retained|left|shown|listed|included|implemented|defined|written|handled|done|added|filled|copied|repeated|collapsed|hidden|abbreviated|shortened|trimmed|excluded|removed|cut|provided|given|declared|structured|organi[sz]ed|formatted|treated|needed|required|changed|modified|updated|touched|edited|duplicated|reproduced|stripped|dropped|moved|replaced|deleted|expected|supposed|based|mirrored|patterned|modeled|modelled|derived|inherited|generated|covered|maintained|unaltered|unedited)$/;

/** A word every comment HEDGE takes holds. */
const HEDGE_SCREEN =
  /\b(?:any|needed|necessary|applicable|present|required|relevant|appropriate|desired|available)\b/i;
/** A hedge at the end of a clause: `if any`, `as needed`, `where applicable` (not a condition on the code). */
const HEDGE =
  /[\s,]*\(?\b(?:if|where|when|as) (?:any|needed|necessary|applicable|present|required|relevant|appropriate|desired|available)\b\)?/gi;

/** Words that say a claim is why or when, or a person explaining (for the steps below). */
const explains = (w: string) =>
  isWhyGone(w) || CAUSE.has(w) || w === 'we' || w === 'our' || w === 'us';

/**
 * "The rest of the code", in any language the marks know, opens the comment, and what follows says
 * whose or what for (a preposition, a bracket, a name: not a verb, which makes it a sentence about
 * the code there, `# The rest of the code depends only on ...`, `// the rest of the code will go in
 * here`), however long and however it names it (a file, a list in brackets): `// Resto del código
 * de "insertar.php" (conexión a la base de datos, etc.)`, `// Resto do código HTML para exibir o
 * formulário ...`, `// le reste du code pour ...`. Up to LEAD_MAX_WORDS words, not why or when, not
 * a person explaining.
 */
function restOfCode(bare: string, all: () => readonly string[]): boolean {
  // a relative clause says what the code left out does (`// Rest of the logic that uses envVar`, `#
  // rest of the function which formats the report`); a verb after it makes the whole a sentence
  // about code that is there (`# the rest of the logic that uses envVar is in utils.py`)
  const relative = REST_RELATIVE.exec(bare);
  if (relative !== null) {
    if (RELATIVE_THEN_VERB.test(bare.slice(relative[0].length))) return false;
  } else if (!REST_OF_CODE.test(bare)) return false;
  if (/[,(]$/.test(bare) || CONTINUES.test(bare) || /^["“‘]/.test(bare)) return false;
  const words = all();
  return words.length <= LEAD_MAX_WORDS && !words.some(explains);
}

/** The rest (remainder) of the (some language's) code, in English, Spanish, Portuguese, French, Italian, German. */
const REST_OF_CODE =
  /^\W*(?:the\s+|and\s+)?(?:rest|remainder|resto|reste|restliche[nr]?)\s+(?:of|del|de|do|da|du|des|della|dello|di|vom|des)?\s*(?:the\s+|la\s+|el\s+|o\s+|a\s+|le\s+|l'|il\s+|lo\s+|der\s+|den\s+|your\s+|this\s+)?(?:[\w-]+\s+)?(?:code|c[oó]digo|codice|kod|implementation|implementa[cç][iã]on|logic|l[oó]gica|logique|logik|programa?|programme)(?:\s+[A-Z]{2,}\w*)?(?:\s*$|\s*[(["“:\u2013\u2014-]|\s+(?:of|for|from|in|inside|within|de|del|da|do|dos|das|des|du|para|pour|per|für|zum|zur|con)\b)/i;
/** The rest of a unit of code, then "that" or "which" and a verb in -s or -ed: what it does. */
const REST_RELATIVE =
  /^\W*(?:the\s+|and\s+)?(?:rest|remainder)\s+of\s+(?:the\s+|this\s+|your\s+)?(?:[\w-]+\s+)?(?:code|logic|implementation|function|method|class|handler|component|module|script|file|program|query|procedure|routine|body|loop|test|view|controller|template|page|config|setup)\s+(?:that|which)\s+(?!(?:is|was|has|needs|depends|goes|lives)\b)\p{L}+(?:s|ed)\b/iu;
/**
 * After a relative clause of what the left-out code does, a verb of a sentence about it: `is in
 * utils.py`, `must be updated`, `stays below`.
 */
const RELATIVE_THEN_VERB =
  /\s(?:is|are|was|were|will|would|must|should|can|could|may|might|has|have|needs?|lives?|stays?|remains?|goes|moved|depends?)\b/i;

/**
 * A later sentence of the comment, or all of it, says that the code is left out, as a predicate of
 * what it names (`Implementation omitted - see README.`, `Body elided for brevity.`, `Omitted from
 * this public skeleton.`): the first sentence described the code (`Returns (redacted_text, flags).`).
 * Not "omitted" before a noun (`omitted fields`, `Omitted InceptionV3 arch - ...`), nor why or when.
 */
function laterSentenceCut(bare: string, all: () => readonly string[]): boolean {
  if (!CUT_SCREEN.test(bare) || !/[.!?]\s+\p{Lu}/u.test(bare)) return false;
  const sentences = bare.split(/(?<=[.!?])\s+(?=\p{Lu})/u);
  if (all().length > TOLD_MAX_WORDS) return false;
  return sentences
    .slice(1)
    .some(
      (x) => CUT_PREDICATE.test(x) && x.split(/\s+/).length <= 8 && !wordsOfText(x).some(explains),
    );
}

/** A word every comment laterSentenceCut and a stub's CUT_PREDICATE take holds. */
const CUT_SCREEN = /omitted|elided|truncated|snipped|not shown|left out/i;
/**
 * "Left out", said of what it names: after it (`Implementation omitted`, `body elided -`), or
 * opening on where from (`Omitted from this public skeleton`, `left out here`, `for brevity`); not
 * before a noun (`omitted fields`).
 */
const CUT_PREDICATE =
  /(?:^|[\p{L}\p{N}_)]\s+)(?:omitted|elided|truncated|snipped|not shown|left out)(?=\s*(?:$|[-\u2013\u2014.;:,)!]|(?:here|for (?:brevity|clarity|space|length|simplicity)|from (?:this|the) (?:[\w-]+\s+){0,2}?(?:skeleton|snippet|excerpt|listing|example|sample|version|file|copy|answer|post|release|demo|source|code|template|stub)s?)\b))/iu;

/** A text's lower-case words (for a sentence that is no comment of its own). */
const wordsOfText = (x: string): string[] =>
  x
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\s]/gu, ' ')
    .split(/\s+/)
    .filter((w) => w !== '');

/**
 * The whole of the code is elsewhere, named however (a path too): `# (see
 * examples/langchain_example.py for full agent example)`, `// see the repo for the complete
 * implementation`, `// full source at github.com/x/y`. Up to KEPT_MAX_WORDS words, not why or when.
 */
function fullElsewhere(bare: string, all: () => readonly string[]): boolean {
  if (!FULL_SCREEN.test(bare) || !FULL_ELSEWHERE.test(bare)) return false;
  if (/[,(]$/.test(bare) || CONTINUES.test(bare) || /^["“‘]/.test(bare)) return false;
  const words = all();
  return words.length <= KEPT_MAX_WORDS && !words.some(explains);
}

const FULL_SCREEN = /\b(?:full|complete|entire|whole)\b/i;
const FULL_ELSEWHERE =
  /^\W*(?:(?:see|check|refer to|look at|find)\s+(?:\S+\s+){1,4}?for\s+(?:the\s+|a\s+)?(?:full|complete|entire|whole)\s+(?:[\w-]+\s+)?(?:code|implementation|example|listing|source|version|program|script|file|class|module|function|component)s?\b|(?:the\s+)?(?:full|complete|entire|whole)\s+(?:[\w-]+\s+)?(?:code|implementation|example|listing|source|version|program|script|file|class|module|function|component)s?\s+(?:is\s+|lives\s+|can be found\s+)?(?:in|at|under)\s+\S+\W*$)/i;

/**
 * A whole sentence that says the code around it stays as it was, however long and with no clause
 * break (`// All of the other methods in this class stay exactly as they were in the original
 * version of the file`, `-- The other three tables are created in exactly the same way as the
 * users table above`): a word of no change and a word that points at code kept (before, original,
 * your, other, rest, ...), longer than the short form reads; not a condition, a reason or a person
 * explaining, nor code named by a call or in backticks.
 */
function sentenceLeftOut(bare: string, all: () => readonly string[]): boolean {
  if (!SENTENCE_SCREEN.test(bare)) return false;
  // (a quotation inside talks about placeholders: `the remark "(same file system)" explains`)
  if (/[,(]$|\w\(|[`"“]/.test(bare) || CONTINUES.test(bare) || /^‘/.test(bare)) return false;
  // (a bracket left open: the sentence goes on on the next line)
  if (bare.split('(').length > bare.split(')').length) return false;
  const words = all();
  if (words.length <= LOOSE_MAX_WORDS || words.length > LEAD_MAX_WORDS) return false;
  if (words.some((w) => CAUSE.has(w) || LIKE_VETO.has(w) || isWhyGone(w))) return false;
  const text = ` ${words.join(' ')} `;
  return NO_CHANGE_SAID.test(text) && KEPT_POINTED.test(text.replace(/ each other /g, ' '));
}

/** A word every comment sentenceLeftOut takes holds. */
const SENTENCE_SCREEN =
  /unchanged|untouched|unmodified|identical|same|intact|as (?:before|they|it)|not (?:been )?(?:modified|changed|touched)|stays?|remains?/i;
/**
 * That it did not change, said of the code (`stay exactly as they were`, `are the same as in`,
 * `is identical to`, `have not been modified`), not of a thing it names (`trim any unmodified
 * context lines`).
 */
const NO_CHANGE_SAID =
  / (?:(?:is|are|was|were|be|been|stays?|remains?|kept|left|looks?) (?:exactly |all |just |still |completely )?(?:unchanged|untouched|unmodified|identical|intact|the same)|same (?:as|way)|as (?:before|they (?:are|were)|it (?:is|was))|not (?:been )?(?:modified|changed|touched)|(?:stays?|remains?) (?:exactly )?as) /;
/** What it points at: the code kept elsewhere or around it. */
const KEPT_POINTED =
  / (?:(?:as|from) before|original|previous|existing|your|yours|above|earlier|other|others|remaining|rest|everything|current) /;

/**
 * Code like other code, said in the comment's first words: a word of likeness and, within its
 * next three words, what it is like or where it goes again (`// same logic for the PUT handler`,
 * `# ditto for delete_user and update_user`, `// mirror of the block above for the left wall`,
 * `// copy of the x-axis code with y in place of x`); one per each of the others (`// one of these
 * per endpoint`); the members every class has (`// getters/setters`, `// standard CRUD views`);
 * code to be put back (`// TODO: paste your validation back in`). Whatever follows, as the lead
 * rule; not a condition or a person explaining (`// mirror the x axis when the screen is
 * flipped`, `// Similar to the old parser, we skip blank lines`), nor a call it is like (`// same
 * as validateUser(input) but throws`).
 */
function likeLeftOut(m: Compiled, bare: string, all: () => readonly string[]): boolean {
  if (!LIKE_SCREEN.test(bare)) return false;
  // (`back in` ends on a word that needs one after it only elsewhere)
  const ends = CONTINUES.test(bare) && !/\bback in$/i.test(bare);
  // (code named by a call, a member or in backticks explains: `// same as validateUser(input) but
  // throws`, `// same assignment as VitestPlugin.configResolved`; a file is elsewhere: `as util.ts`)
  if (/[,(]$|\w\(|`/.test(bare) || ends || /^["“‘]/.test(bare)) return false;
  if (/\w\.\w/.test(bare.replace(FILE_NAME, ' '))) return false;
  if (bare.split('(').length > bare.split(')').length) return false;
  const words = all();
  if (words.length === 0 || words.length > LEAD_MAX_WORDS) return false;
  if (words.some((w) => CAUSE.has(w) || LIKE_VETO.has(w))) return false;
  const start = words[0] === 'and' || words[0] === 'the' ? 1 : 0;
  const first = words[start];
  if (first === undefined) return false;
  if (LIKE.has(first)) {
    // (a verb of likeness names what it is of: `copy of the block above`, not `copy reference to target`)
    const to = VERB_OF_LIKENESS.has(first) ? OF : LIKE_TO;
    return words.slice(start + 1, start + 4).some((w) => to.has(w)) && !words.some(isWhyGone);
  }
  if (/^(?:one|a|an)$/.test(first))
    return (
      /\b(?:of these|of those|like this|like that|like these|such)\b.*\bper\b|\bper (?:remaining|other)\b/.test(
        words.join(' '),
      ) && !words.some(isWhyGone)
    );
  // accessors as a list: `getters/setters`, `equals/hashCode/toString`
  if (/^[a-z]+(?:\/[a-z]+)+$/i.test(bare) && words.length <= 4)
    return words.some((w) => ACCESSORS.has(w));
  if (USUAL.has(first))
    return words.length <= 5 && LIKE_NOUNS.test(words.slice(start + 1).join(' '));
  const lower = bare.toLowerCase();
  return (
    /^(?:todo\s*:?\s*)?(?:paste|put|copy|re ?add|restore|reinsert|bring)\b.*\bback\b/.test(lower) ||
    // a claim on what comes after: `keep everything from here to the end of the file`
    /^keep (?:everything|all of it|it all|the rest)\b/.test(lower) ||
    // a count of the lines left out: `[200 lines of generated bindings]`, `<about 80 lines of plotting code>`,
    // or of the things: `// 40 more entries like the above`
    /^[[(<{]?\s*(?:about |around |roughly |some |another |~)?\d+ (?:(?:more |other )?lines\b|more \w+ (?:like|as) )/.test(
      lower,
    ) ||
    // a template's slot for the reader's code: `# <your model definition>`, `// {{ your routes }}`
    /^(?:<|\[|\{\{?)\s*your\b[^<>[\]{}]*(?:>|\]|\}\}?)$/.test(lower) ||
    // scissors: `---- cut ----`, `8<----`, `✂`
    /^(?:cut|8<|✂)$/.test(lower.replace(/-+/g, '').trim()) ||
    // scissors with words: `---8<--- cut here ---8<---`, `✂ snip ✂`
    (/8<|>8|✂/.test(lower) &&
      /^(?:(?:8<|>8|✂)\s*)*(?:cut|snip)(?: here)?(?:\s*(?:8<|>8|✂))*$/.test(
        lower
          .replace(/[-=~_]+/g, ' ')
          .replace(/\s+/g, ' ')
          .trim(),
      )) ||
    // what was done to the text shown, as all the comment says: `// trimmed`, `// (excerpt)`,
    // `// shortened for the answer`, `// cut for length` (not `// the trimmed index`)
    /^[[(]?(?:trimmed|shortened|abridged|excerpt|et cetera|cut|clipped|cropped|condensed|collapsed|folded|hidden|summari[sz]ed|redacted for (?:length|brevity|space))(?: for (?:the )?(?:\w+))?[)\]]?\.?$/.test(
      lower,
    ) ||
    // part of the text shown: `// partial listing`, `// excerpt from the full file`
    /^[[(]?(?:partial (?:listing|code|snippet|version|file|example|source|view)|(?:an )?excerpt (?:from|of) (?:the )?[\w .-]+)[)\]]?\.?$/.test(
      lower,
    )
  );
}

/** A word every comment likeLeftOut takes holds (one look at most comments). */
const LIKE_SCREEN =
  /\b(?:same|similar|similarly|likewise|ditto|idem|analogous|analogously|mirror|mirrored|copy|repeat|identical|per|standard|typical|usual|back|keep|lines|more|your|cut|trimmed|shortened|abridged|excerpt|cetera|partial|clipped|cropped|condensed|collapsed|folded|hidden|summari[sz]ed|redacted)\b|\w\/[a-z]|8<|✂/i;
/** Words of likeness that open a claim. */
const LIKE = new Set([
  'same',
  'similar',
  'similarly',
  'likewise',
  'ditto',
  'idem',
  'analogous',
  'analogously',
  'mirror',
  'mirrored',
  'copy',
  'repeat',
  'identical',
]);
/** What follows a word of likeness in a claim: what it is like, or where it goes again. */
const LIKE_TO = new Set(['as', 'for', 'of', 'to', 'with', 'again']);
const OF = new Set(['of']);
/** A file's name: `related-plans.ts`, `water.ts`, `main.py`. */
const FILE_NAME = /[\w-]+\.[a-z]{1,4}\b/g;
/** Words of likeness that are verbs too: a claim only with what they are of. */
const VERB_OF_LIKENESS = new Set(['copy', 'mirror', 'mirrored']);
/** A person explaining or instructing (the general rule's vetoes that open no aside). */
const LIKE_VETO = new Set([
  'we',
  'us',
  'our',
  'should',
  'must',
  'need',
  'needs',
  'why',
  'how',
  'don',
  'doesn',
]);
/** The words of WHY_GONE that name a thing as well as an act: `ditto for the delete button`. */
const isWhyGone = (w: string) => WHY_GONE.has(w) && !/^(?:delete|remove|move|instead)$/.test(w);
/** Members every class has. */
const ACCESSORS = new Set(['getters', 'setters', 'equals', 'hashcode', 'tostring', 'constructors']);
/** What everyone writes the same way. */
const USUAL = new Set(['standard', 'typical', 'usual']);
/** What the usual code is: a plural of code (`standard CRUD views`, `typical Express boilerplate`). */
const LIKE_NOUNS =
  /\b(?:methods|views|handlers|routes|getters|setters|accessors|boilerplate|imports|helpers|endpoints|hooks|fields|props|tests|checks|steps|operations|functions|stuff)$/;

/**
 * Code the reader already has (`# the loaders you already wrote`, `// keep your current model
 * definition`, `[keep the constructor you have]`) or code that goes here from elsewhere (`// code
 * from step 2 goes here`, `(the useEffect hooks from before)`): words that point at code not shown.
 */
const POINTS_AT_KEPT =
  /\b(?:you(?:'ve| have| had| already| wrote| got| sent| provided| posted| shared| pasted| gave)|your (?:current|own|code|snippet|version|file|example)|from your|yours|from before|as before|goes here|go here|here goes|(?:as in|from) the (?:question|tutorial|original|answer|previous answer|post|docs|example|guide|book))\b/i;

/**
 * That the rest needs no change: a negation, a verb of changing and what is left around it
 * (`// nothing else in this file needs to change`, `// Don't change anything below this line`).
 */
const NO_CHANGE =
  /\b(?:nothing|no|not|don'?t|doesn'?t|never|needn'?t)\b.*\b(?:change|changes|changed|touch|touched|modify|modified|edit|edited)\b/i;
const KEPT_AROUND = /\b(?:below|above|else|anything|everything|rest|other|others|remaining)\b/i;

/**
 * The agent telling what it did to the file: "I" and a verb of leaving out, keeping or showing only
 * part (`// I kept everything else the same`, `// (I omitted the CSS since it didn't change)`,
 * `# I'm only showing the changed function; ...`, `// I didn't change anything in this section`).
 */
const I_LEFT_OUT =
  /^\W*(?:note:?\s*)?i(?:'ve|'m|'ll| have| am| will)?\s+(?:\w+\s+)?(?:left|omitted|omit|kept|keep|skipped|skip|trimmed|cut|shortened|abbreviated|only|didn'?t|did not|haven'?t|have not|showing|show|included only)\b/i;

/** That only the changed part is shown: `// Only showing the relevant changes`, `// only the changed part is shown`. */
const ONLY_CHANGED = [
  /\bonly\b/i,
  /\b(?:changed|changes|modified|relevant|updated)\b/i,
  /\b(?:show|shows|shown|showing|part|parts|section|sections|bits?|lines)\b/i,
];

/** A word every comment pointsAtKept takes holds (one look at most comments, not four). */
const KEPT_SCREEN =
  /\b(?:i|you|yours?|before|here|goes|only|nothing|no|not|don|doesn|never|needn|as in|from the)\b/i;

/** A short comment that points at code kept elsewhere, and says nothing of why or when. */
function pointsAtKept(m: Compiled, bare: string, all: () => readonly string[]): boolean {
  if (!KEPT_SCREEN.test(bare)) return false;
  const told = I_LEFT_OUT.test(bare) || ONLY_CHANGED.every((r) => r.test(bare));
  const noChange = !told && NO_CHANGE.test(bare) && KEPT_AROUND.test(bare);
  if (!told && !noChange && !POINTS_AT_KEPT.test(bare)) return false;
  if (/[,(?]$/.test(bare) || CONTINUES.test(bare) || /^["“‘]/.test(bare)) return false;
  const words = all();
  if (words.length > LEAD_MAX_WORDS || words.some((w) => WHY_GONE.has(w))) return false;
  // (the agent's own words: the reason it gives is about the edit, "since it didn't change")
  if (told) return true;
  if (words.length > LOOSE_MAX_WORDS || words[0] === 'or') return false;
  if (words.some((w) => CAUSE.has(w))) return false;
  // (the general rule's vetoes but the ones a sentence of no change is made of: "don't", "needs")
  const veto = m.d.general?.veto ?? [];
  return !words.some(
    (w, k) =>
      veto.includes(w) &&
      !LEAD_ASIDE.has(w) &&
      !(noChange && NO_CHANGE_WORDS.has(w)) &&
      // "identical to what you had before"
      !(w === 'what' && words[k + 1] === 'you'),
  );
}

const NO_CHANGE_WORDS = new Set(['don', 'doesn', 'need', 'needs']);

/** The comment as lower-case words, dots and punctuation dropped. */
const wordsOf = (m: Compiled, bare: string): string[] =>
  bare
    .toLowerCase()
    .replace(m.dotsRe, ' ')
    .replace(/[^\p{L}\p{M}\p{N}\s]/gu, ' ')
    .split(/\s+/)
    .filter((w) => w !== '');

/** Does one of the pairs (`còn lại`, `tetap sama`) stand among the words? */
function hasPair(words: readonly string[], pairs: readonly string[]): boolean {
  let first = PAIR_FIRST.get(pairs);
  if (first === undefined)
    PAIR_FIRST.set(pairs, (first = new Set(pairs.map((p) => p.split(' ')[0]!))));
  // (most comments hold no pair's first word: answered without joining them)
  if (!words.some((w) => first.has(w))) return false;
  const text = ` ${words.join(' ')} `;
  return pairs.some((p) => text.includes(` ${p} `));
}

/** The first words of each list of pairs hasPair is asked about. */
const PAIR_FIRST = new WeakMap<readonly string[], Set<string>>();

/** A list of words, then dots: `constructor, getters, setters...` (not code: `unwrap (0, ...)`). */
const LIST_THEN_DOTS = /^[\p{L}\s/&-]+(?:,[\p{L}\s/&-]+)+,?\s*(?:\.{2,}|…)$/u;

/**
 * The short form: dots before or after its words, or one of the loose words, in at most
 * LOOSE_MAX_WORDS words, none a veto, none naming code by a call or a path.
 */
function shortLeftOut(
  m: Compiled,
  bare: string,
  all: () => readonly string[],
  loose: Set<string>,
): boolean {
  // a line of a longer sentence (`// within a view, and it remains specific to that request,`), or
  // one that names code by its calls and paths (`// same as app.listen(0, done)`), explains
  if (/[,(]$|\w\(|\w\.\w|`/.test(bare) || CONTINUES.test(bare)) return false;
  if (bare.split('(').length > bare.split(')').length) return false;
  const frame = frameOf(m, bare);
  const words = all();
  // dots before its words, or after a list of what is left out (`// constructor, getters, setters...`)
  // (a list's items are names of a few words: not `Tests for percent encoding across path, query, and fragment...`)
  const framed =
    frame.starts ||
    BARE_DOTS.test(bare) ||
    (frame.framed === 'one' &&
      LIST_THEN_DOTS.test(bare) &&
      bare.split(',')[0]!.trim().split(/\s+/).length <= 3);
  const veto = m.d.general?.veto ?? [];
  if (words.length > LOOSE_MAX_WORDS) return false;
  // dots, then a word of cause or time: the sentence of the line before goes on (`# ... while a cycle is still detected`)
  if (frame.starts && (CAUSE.has(words[0]!) || THOUGH.has(words[0]!))) return false;
  // (in a comment with another language's mark, `do` and `e` are its words: `resto do código igual`)
  // (the marks looked up only for a comment with such a word)
  const other = () => (m.d.general?.foreign.mark ?? []).some((x) => words.includes(x));
  const vetoes = (w: string) =>
    veto.includes(w) && w !== 'see' && !(FOREIGN_SMALL.has(w) && other());
  if (words.some((w) => WHY_GONE.has(w) || vetoes(w))) return false;
  // a person explaining (`# issued by the same CA as our Server certificate`), or, with no dots,
  // a phrase quoted inside a sentence (`// the same silent "no results" footgun.`)
  if (words.some((w) => w === 'we' || w === 'our' || w === 'us')) return false;
  // (or code named by a snake_case name: `# After is_stream filtering, remaining data is raw`)
  if (!framed && (/\p{L} ["“][^"”]+["”]/u.test(bare) || /\b[a-z]+_[a-z]\w*/.test(bare)))
    return false;
  return (
    framed ||
    words.some((w) => loose.has(w)) ||
    // other languages' words of two: `// các hàm còn lại giữ nguyên`
    (words.length > 1 && hasPair(words, m.d.general?.foreign.pairs ?? [])) ||
    // scripts written without spaces: `// 其余代码不变`, `// 기존 코드 유지`
    (!ASCII.test(bare) && (m.d.general?.foreign.substrings ?? []).some((x) => bare.includes(x)))
  );
}

/** Words of concession that, as CAUSE's, go on with a sentence: `... whereas the old parser ...`. */
const THOUGH = new Set(['whereas', 'although', 'though']);

/** English veto words that are other languages' small words (Portuguese `do`, `e`). */
const FOREIGN_SMALL = new Set(['do', 'e']);

/** At most this many words in a comment the lead of which says code is left out. */
const LEAD_MAX_WORDS = 24;
/** Words of WHY_GONE that, past a dotted comment's first words, describe what the code did. */
const DESCRIBES = new Set(['returns', 'param']);

/** Veto words that open an aside, not an explanation. */
const LEAD_ASIDE = new Set(['but', 'see', 'e', 'g', 'i', 'ie', 'eg']);
/** Where the claim of a comment ends and what it goes on to say begins. */
const CLAUSE_BREAK = /[,;:(\u2013\u2014]|\s-\s|\b(?:but|except|with|using|ensure|and then)\b/i;

/**
 * The long form: the comment's first words make the claim, whatever it goes on to say. Dots before
 * its words (`// ... code that might skip initialization`, `// ... helpers \`run\` omitted`), or a
 * lead of two to six words up to the first clause break that is a placeholder by itself (`Same as
 * above but for port 5173`, `Code continues, using myX ...`, `[UNCHANGED functions from the
 * provided snippet, ensure ...]`). Not when it says why code went or under what condition
 * (WHY_GONE, CAUSE anywhere), nor past LEAD_MAX_WORDS words.
 */
function leadLeftOut(m: Compiled, bare: string, all: () => readonly string[]): boolean {
  // dots, then words (not a path: `../lib/x.js`, `.../tests/a.spec.ts`), or a clause break
  // (a path later names where the rest is: `# ... see scripts/build.sh for the rest`)
  // (a mark of a cut in brackets or rulers reads as the dots: `// [snip] create a Text_Wiki object`)
  const dotted =
    (/^(?:\.{2,}|…)\s*[^\s./\\]/u.test(bare) && !/^(?:\.{2,}|…)\s*\S*\//.test(bare)) ||
    CUT_MARK.test(bare);
  if (!dotted && !CLAUSE_BREAK.test(bare)) return false;
  // a line of a longer sentence, or a quotation, is not one
  if (/[,(]$/.test(bare) || CONTINUES.test(bare) || /^["“‘]/.test(bare)) return false;
  const words = all();
  if (words.length === 0 || words.length > TOLD_MAX_WORDS) return false;
  if (!dotted && strongLead(m, bare, words)) return true;
  if (!dotted && words.length > LEAD_MAX_WORDS) return false;
  // dots: what the code left out did, in its own words (`# ... code that might skip initialization`),
  // its conditions and results too (`// ... code that runs when the button is clicked`, `// ...
  // helper that returns the rows`); not a condition or a reason first (`// ... only if the cache
  // is cold` goes on from the line above), nor why the code went (`// ... moved to utils.ts`)
  if (dotted)
    return !words.some(
      (w, k) =>
        (WHY_GONE.has(w) && !DESCRIBES.has(w)) ||
        ((CAUSE.has(w) || THOUGH.has(w)) && k < 2) ||
        (DESCRIBES.has(w) && k < 2),
    );
  if (words.some((w) => WHY_GONE.has(w) || CAUSE.has(w))) return false;
  // (the general rule's vetoes: a person explaining, a condition, an instruction; not the words
  // that open what it goes on to say: "but for port 5173", "see", "e.g.")
  const veto = m.d.general?.veto ?? [];
  if (words.some((w) => veto.includes(w) && !LEAD_ASIDE.has(w))) return false;
  const inner = /^[[(](.*)[\])]$/.exec(bare)?.[1] ?? bare;
  const cut = CLAUSE_BREAK.exec(inner);
  if (cut === null || cut.index === 0) return false;
  const lead = inner.slice(0, cut.index).trim();
  const n = wordsOf(m, lead).length;
  // a longer claim before the names of what it is about: `// The following handlers stay exactly
  // as they were in the previous version: onOpen, onClose`
  // as a short comment of its own reads (the loose words: `these three functions are unchanged`)
  if (inner[cut.index] === ':' && NAME_LIST.test(inner.slice(cut.index + 1)) && n >= 2) {
    const leadWords = wordsOf(m, lead);
    return shortLeftOut(m, lead, () => leadWords, (loose ??= looseWords(m.d)));
  }
  return n >= 2 && n <= 6 && isPlaceholder(m, `// ${lead}`);
}

/**
 * A mark of a cut that opens a comment, in brackets or between rulers: `[snip]`, `<snip>`, `(cut)`,
 * `[omitted]`, `--snip--`; what follows says what was cut (not `[...]`, the ellipsis of a quotation:
 * `// [...] field shall contain a length count C that equals [...]`).
 */
const CUT_MARK =
  /^(?:[[(<{]\s*(?:snip|snipped|cut|omitted|elided|truncated|trimmed|skipped|abridged)\s*[\])>}]|-{2,}\s*snip(?:ped)?\s*-{2,})/i;

/** At most this many words in a comment whose claim is its strong first words, or the writer's own. */
const TOLD_MAX_WORDS = 40;

/** Words that make a lead a claim whatever follows it: it says the code is left out or kept as it was. */
const STRONG_LEAD =
  /\b(?:unchanged|omitted|elided|snipped|truncated|untouched|unmodified|abbreviated|not shown|left out|as before|same as before|as it was|as they were)\b/i;

/**
 * A lead of two to six words up to the first clause break, a placeholder by itself and saying the
 * code is left out or kept (STRONG_LEAD): the claim is made, whatever the clause after it says
 * (`// Implementation omitted for brevity, you would typically load ...`, `// Body unchanged, but
 * you need the import at the top`). Not when the lead itself explains (a veto, a cause, why code
 * went).
 */
function strongLead(m: Compiled, bare: string, words: readonly string[]): boolean {
  if (words.length > TOLD_MAX_WORDS) return false;
  const inner = /^[[(](.*)[\])]$/.exec(bare)?.[1] ?? bare;
  const cut = CLAUSE_BREAK.exec(inner);
  if (cut === null || cut.index === 0) return false;
  const lead = inner.slice(0, cut.index).trim();
  // (a person explaining anywhere: `// unchanged if range is invalid, but we log it`)
  if (!STRONG_LEAD.test(lead) || words.some((w) => w === 'we' || w === 'our' || w === 'us'))
    return false;
  const leadWords = wordsOf(m, lead);
  const veto = m.d.general?.veto ?? [];
  if (leadWords.length < 2 || leadWords.length > 6) return false;
  if (leadWords.some((w) => WHY_GONE.has(w) || CAUSE.has(w) || veto.includes(w))) return false;
  return isPlaceholder(m, `// ${lead}`);
}

/**
 * The writer telling what was done to the text shown, however long the comment runs on (up to
 * TOLD_MAX_WORDS): a word of leaving out and that it was for the text's sake (`// Implementation
 * omitted for brevity, you would typically load ...`, `// (Abbreviated to keep XML concise as ...)`,
 * `// error handling removed for clarity`); a comment that opens on the text's sake and goes on to
 * what is left out (`// NOTE: For brevity, I've only included the modified function below; ...`);
 * the agent's "I left it out" in any of its clauses (`# ..., so I have left it out of this
 * snippet`); that it is not repeated here (`// the remaining methods are not repeated here`, `// no
 * need to repeat the rest of the file`).
 */
function toldCut(bare: string, all: () => readonly string[], own = bare): boolean {
  // (another language's words of brevity and leaving out, in its own words)
  const foreign = FOREIGN_BREVITY.test(own);
  if (!foreign && !TOLD_SCREEN.test(bare)) return false;
  if (/^["“‘]/.test(bare) || /[,(]$/.test(bare) || CONTINUES.test(bare)) return false;
  const lower = said(bare);
  const claim =
    (foreign && FOREIGN_CUT.test(said(own))) ||
    CUT_FOR_TEXT.test(lower) ||
    (TEXT_SAKE_FIRST.test(lower) && LEFT_OUT_AFTER.test(lower)) ||
    I_LEFT_OUT_CLAUSE.test(lower) ||
    NOT_REPEATED.test(lower);
  // (the words are split only for a comment that makes the claim: most comments cost a screen)
  if (!claim) return false;
  const words = all();
  return words.length > 0 && words.length <= TOLD_MAX_WORDS;
}

/**
 * The comment in lower case as it is said: words in quotes or backticks are quoted, not said (a
 * comment that quotes a rule's example), curly apostrophes straight.
 */
function said(bare: string): string {
  const lower = bare.toLowerCase();
  return /[`"“’‘]/.test(lower)
    ? lower.replace(/`[^`]*`|"[^"]*"|“[^”]*”/g, ' ').replace(/[’‘]/g, "'")
    : lower;
}

/**
 * Kinds of the claim that the code stays or is elsewhere, each said in its own words (at most
 * KEPT_MAX_WORDS words, none saying why code went or under what condition):
 * - it may stay as it is, a modal of staying (`// Other properties can stay as they are`, `// The
 *   remaining code does not need to be modified`, `// Should be the same as before`);
 * - do the same, an imperative of likeness (`// Do the same for the other columns`, `// Use the
 *   same code as in the GET handler`);
 * - it is in an earlier answer, step or place (`// as provided earlier`, `// as in step 3`, `// use
 *   the code from my last reply here`, `// full code in the repo`);
 * - trailing off (`// you get the idea`, `// and the like`), continued (`// (continued)`);
 * - a slot: a code noun alone in brackets (`// [code]`, `// <implementation>`);
 * - the others would go here (`// Other helpers would be defined here`, `// Here you would handle
 *   the other events`).
 */
function keptOrElsewhere(bare: string, all: () => readonly string[]): boolean {
  // (code named by a call, a member, a path or a link explains: `// Use same exit code as node: https://...`)
  if (/^["“‘]/.test(bare) || /[,(]$|\w\(|\w\.\w|:\/\//.test(bare) || CONTINUES.test(bare))
    return false;
  const lower = said(bare).replace(/^(?:\.{2,}|…)\s*/, '');
  // each kind looked for only where its words are (most comments hold none)
  const claim =
    (STAYS_SCREEN.test(lower) &&
      MODAL_STAYS.test(lower) &&
      (KEPT_SUBJECT.test(lower) || SUBJECTLESS.test(lower))) ||
    DO_THE_SAME.test(lower) ||
    EARLIER_PLACE.test(lower) ||
    (SELECTIVE.test(lower) && (SHOWS_SELECTION.test(lower) || SELECTION_SAID.test(lower))) ||
    (lower.includes('your') && (KEEP_YOURS.test(lower) || YOU_SUPPLY.test(lower))) ||
    TRAIL_OFF.test(lower) ||
    WHAT_WAS_THERE.test(lower) ||
    SLOT.test(lower) ||
    EDITS_END.test(lower) ||
    (OTHERS_SCREEN.test(lower) && OTHERS_WOULD.test(lower)) ||
    (lower.includes('here') &&
      GOES_HERE.test(lower) &&
      /\b(?:other|others|rest|remaining|existing|more|additional)\b/.test(lower));
  // (the words are split only for a comment that makes the claim)
  if (!claim) return false;
  const words = all();
  // (the reader told to bring back code of their own runs longer: `% You will likely need to
  // compute PSTHparam, PVpower, etc. as in your original script`)
  const max = YOU_SUPPLY.test(lower) ? LEAD_MAX_WORDS : KEPT_MAX_WORDS;
  if (words.length === 0 || words.length > max) return false;
  return !words.some((w) => isWhyGone(w) || CAUSE.has(w) || w === 'we' || w === 'our');
}

/** A word every comment SHOWS_SELECTION takes holds. */
const SELECTIVE =
  /\b(?:key|main|important|relevant|essential|core|primary|major|interesting|critical|notable|representative|selected|few|couple|subset|selection)\b/;
/**
 * A selection said in other voices: passive (`# only the main endpoints are listed here`, `#
 * (only the key ones are shown)`), "here are a few", or a remark in brackets that is only the
 * selection (`// (just a few examples)`, `// (selected tests only)`, `// (a subset of the cases)`);
 * not what the code does with a selection (`// only the key ones are cached`).
 */
const SELECTION_SAID =
  /\b(?:only|just)\s+(?:the\s+|a\s+few\s+)?(?:most\s+)?(?:key|main|important|relevant|essential|core|primary|major|interesting|critical|notable|representative|selected)\s+(?:[\w-]+\s+)?(?:are|is)\s+(?:shown|listed|included|given|here)\b|^\W*here\s+(?:are|is)\s+(?:just\s+|only\s+)?(?:a few|some|a couple|a subset|a selection|the (?:key|main|important|relevant|essential|core|most important))\b|^[[(]\s*(?:just\s+|only\s+)?(?:a few|a couple of|a subset of|a selection of|selected|the key|the main|key|main)\s+[\p{L}\s-]{1,30}?(?:\s+only)?\s*[)\]]$/u;
/**
 * The writer shows only a selection (`# (I'll include the key ones)`, `// (showing just the important
 * tests)`, `# I've included the key methods only`): "I" and a verb of showing, or the verb's
 * participle opening the comment, then the few it chose; not an instruction (`// include the key
 * ones in the cache`).
 */
const SHOWS_SELECTION =
  /^\W*(?:(?:note|nb)\s*:?\s*)?(?:i(?:'ll|'ve|'m| will| have| am)?\s+(?:only\s+|just\s+)?(?:include|included|show|shown|list|listed|cover|covered|add|added|write|wrote|written|kept)|(?:only\s+|just\s+)?(?:showing|including|listing|covering))\s+(?:only\s+|just\s+)?(?:the\s+|a\s+few\s+(?:of\s+the\s+)?|some\s+(?:of\s+the\s+)?)?(?:most\s+)?(?:key|main|important|relevant|essential|core|primary|major|interesting|critical|notable|representative|selected|few)\b/;
/**
 * Keep the reader's own code, named in a few words (`// [Keep your detailed Audiophile/DLNA header
 * logic]`, `# keep your validation logic here`): the code noun closes the claim (not `// keep your
 * logic simple`, `// keep your API key secret`).
 */
const KEEP_YOURS =
  /^\W*(?:(?:todo|note)\s*:?\s*)?(?:keep|retain|preserve|leave|reuse|insert|paste|put back)\s+(?:all\s+(?:of\s+)?)?your\s+(?:[\w/-]+\s+){0,4}?(?:code|logic|implementation|implementations|functions?|methods?|handlers?|helpers|routes|styles|tests|config|configuration|setup|imports|definitions|validation|markup|template|components?|body|class|module|sections?|blocks?|stuff|macros|procedures|routines|subs|subroutines|triggers|queries|endpoints|controllers|reducers|selectors|utils)(?:\s+(?:here|as is|as it is|intact|unchanged|in place|from before))?\W*$/;
/**
 * The reader told to bring code of their own into it (`% You will likely need to compute X, Y, etc.
 * as in your original script`, `# You'll need to add the other handlers from your existing file`).
 */
const YOU_SUPPLY =
  /\byou(?:'ll|'d| will| would)?\s+(?:\w+\s+)?(?:need|have|want)\s+to\s+(?:add|compute|implement|copy|include|port|bring|fill in|paste|keep|reuse|write|restore|carry over|re-?add|insert|define|merge)\b.*\b(?:as in|from|like in|like|of) your (?:original|existing|previous|old|current|own|earlier)\b/;

const KEPT_MAX_WORDS = 16;
/** A word every comment MODAL_STAYS takes holds. */
const STAYS_SCREEN = /stay|remain|left|kept|be |alone|chang|modif|touch|updat|edit/;
/** A modal, then staying as it is; or no need to change it. */
const MODAL_STAYS =
  /\b(?:can|could|should|will|would|may|might|must)\s+(?:all\s+|just\s+|simply\s+)?(?:stay|remain|be left|be kept|be)\s+(?:exactly\s+|completely\s+|entirely\s+)?(?:the same|unchanged|untouched|intact|as (?:is|it is|they are|it was|they were|before)|alone)\b|\b(?:does not|doesn't|do not|don't|won't|will not) (?:need to |have to )?(?:be )?(?:change|changed|modified|touched|updated|edited)\b|\b(?:needs?|requires?) no (?:changes?|modifications?|edits?)\b|\bneed(?:s)? not (?:be )?(?:change|changed|modified|touched)\b|\bneedn't (?:be )?(?:change|changed|modified|touched)\b|\b(?:does not|doesn't|do not|don't) need (?:any )?(?:changes?|changing|updating|updates?|modifications?|edits?|touching)\b/;
/** What stays: the code kept around it. */
const KEPT_SUBJECT =
  /\b(?:other|others|rest|remaining|remainder|everything|existing|original|previous|this (?:part|section|block|function|method|file|class|component|module)|the others|all of it|it all)\b/;
/** No subject: the claim opens on the modal (`// Should be the same as before`; not an instruction, `// don't change this value`). */
const SUBJECTLESS = /^\W*(?:can|could|should|will|would|may|might|must)\b/;
/** An imperative of likeness: do, apply, use, follow, reuse the same (or similar) ... for/as/to ... */
const DO_THE_SAME =
  /^\W*(?:(?:todo|note)\s*:?\s*)?(?:(?:do|repeat)\s+(?:the\s+)?(?:same|similar|likewise)(?:\s+thing)?\s+(?:for|with|to|in|on|here)\b|(?:apply|use|follow|reuse)\s+(?:the\s+)?(?:same|similar|identical)\s+(?:code|logic|pattern|approach|implementation|steps|procedure|structure|handling|process|treatment)\s+(?:for|as in|as above|as before|as with|to|with|here)\b)/;
/** An earlier answer, step or place holds it. */
const EARLIER_PLACE =
  /\b(?:as in|from|see|as per|like in) (?:my |the |your )?(?:previous|earlier|last|prior|first|original|above) (?:answer|reply|response|message|snippet|version|step|example|section|listing|post|comment|code block)\b|\bas (?:provided|shown|given|posted|written|defined|described|listed|discussed) (?:earlier|before|above|previously)\b|\b(?:as|same as) in (?:step|part|section|listing|example|option|approach|version|stage) [\w.]+\b|\b(?:full|complete|entire|whole) (?:\w+ )?(?:code|implementation|listing|file|source|version|example|program) (?:is )?(?:in|on|at) (?:the |my |your )?(?:repo|repository|gist|github|link|answer|message|post|docs|previous|original)\b/;
/** Trailing off, or a continuation mark. */
const TRAIL_OFF =
  /^\W*(?:and\s+)?(?:you get the (?:idea|picture|gist|point)|you know the drill|and the like|the list goes on|rinse(?:,)? and repeat|yada(?:,? yada)+|blah(?:,? blah)+|&\s*c)\W*$|^[[(]?\s*(?:continued|continues|cont'?d)(?: (?:below|as before|from above|as is))?\s*[)\]]?\W*$/;
/** What stood there: `// keep what was there`, `// whatever was there before`, `// (whatever you had)`. */
const WHAT_WAS_THERE =
  /^\W*(?:keep |leave |insert |paste |put back )?(?:what|whatever) (?:was|stood|existed) (?:there|here)(?: before)?\W*$|^\W*(?:keep |leave )?whatever (?:you had|you have|was) (?:there |here )?(?:before)?\W*$/;
/** A code noun alone in brackets: the slot where it stood. */
const SLOT =
  /^[[<{(]\s*(?:the |some |more |other |existing |your |original )?(?:code|implementation|logic|body|function body|method body|methods|functions|helpers|handlers|routes|fields|props|imports|rest)(?: here| goes here)?\s*[\]>})]$/;
/** Where the edit ends and the rest follows as it was: `// no edits past this point`, `// end of changes`. */
const EDITS_END =
  /^\W*no (?:changes?|updates?|edits?|modifications?) (?:needed|required|necessary) (?:below|above|here|beyond|past|after)\b|^\W*(?:no|nothing)\s+(?:more\s+|further\s+|other\s+)?(?:changes?|edits?|modifications?)\s+(?:past|after|beyond|below|from)\s+(?:this|here)\b|^\W*(?:end of (?:the )?(?:changes?|edits?|changed (?:section|part|code|lines)|modifications?)|(?:changes?|edits?) end here)\W*$/;
/** A word every comment OTHERS_WOULD takes holds. */
const OTHERS_SCREEN = /\b(?:other|others|remaining|rest|additional)\b/;
/**
 * The others would be written the same way: a mark and a code noun, a modal and a verb of being
 * written or of likeness (`// All other methods would be implemented as needed`, `// The remaining
 * methods would follow similar patterns`, `// other handlers will look the same`). Not what is still
 * to be written (`// the rest of the code will go in here`, `// remaining tests will be added`):
 * "will" only with likeness.
 */
const OTHERS_WOULD =
  /^\W*(?:and\s+)?(?:all\s+)?(?:the\s+)?(?:other|others|remaining|additional|rest of the)\s+(?:[\w-]+\s+)?(?:methods|functions|handlers|routes|endpoints|cases|fields|props|properties|tests|components|helpers|classes|getters|setters|accessors|columns|hooks|views|commands|steps|operations|members|actions|reducers|services|models|queries|pages|events|listeners|validators|sections|parts|ones|code|logic|implementations?)\s+(?:(?:would|should|could|can|might)\s+(?:also\s+|all\s+|then\s+|just\s+)?(?:be\s+(?:implemented|defined|added|written|handled|declared|included|filled in|similar|analogous|the same|done)|follow|look|work|stay|remain)|will\s+(?:also\s+|all\s+|just\s+)?(?:be\s+(?:similar|analogous|the same)|follow|look|work|stay|remain))\b/;

/** The others would go here. */
const GOES_HERE =
  /\b(?:would|will|should|could|can|might)\s+(?:be\s+|go\s+)?(?:goes?|defined|added|implemented|handled|placed|written|included|declared|listed|set up)\s+here\b|^\W*here\s+(?:you|one)?\s*(?:would|will|could|can|might)\s+(?:\w+\s+)?(?:the\s+)?(?:other|rest|remaining|existing)\b/;

/** A word every comment toldCut takes holds. */
const TOLD_SCREEN =
  /brevity|space|length|clarity|simplicity|concise|short|brief|focused|compact|\bi\b|\bi'|repeat|reproduc|duplicat/i;
/** Left out, for the text's sake. */
const CUT_FOR_TEXT =
  /\b(?:omitted|elided|abbreviated|shortened|trimmed|truncated|skipped|snipped|cut|removed|left out|not shown|not included|excluded|not reproduced|not repeated|hid|hidden|dropped|stripped|collapsed|condensed)\s+(?:(?:them|it|these|those|this|that|the rest|others)\s+)?(?:(?:here|below|above|again)\s+)?(?:for (?:the sake of )?(?:brevity|space|length|clarity|simplicity|conciseness)|to (?:save (?:space|room)|keep (?:\w+\s+){0,3}?(?:short|shorter|concise|brief|small|compact|readable|focused|manageable)))\b/;
/**
 * "For brevity" in other languages (Russian, Ukrainian, Spanish, Portuguese, French, Italian,
 * German, Dutch, Polish, Czech, Swedish, Danish, Norwegian, Turkish, Indonesian, Vietnamese,
 * Chinese, Japanese, Korean), and their words of leaving out or hiding: with one of them a comment
 * says it was left out for the text's sake (`# ... Я их скрыл для краткости.`).
 */
const FOREIGN_BREVITY =
  /для (?:краткости|стислості)|ради краткости|por brevedad|por (?:motivos de )?brevidade|par souci de (?:concision|bri[eè]vet[eé])|pour (?:la )?bri[eè]vet[eé]|per (?:brevità|semplicità)|der kürze halber|aus platzgründen|kürzehalber|voor de (?:beknoptheid|leesbaarheid)|omwille van de beknoptheid|dla zwięzłości|kvůli stručnosti|för korthetens skull|for kortheds skyld|for korthets skyld|kısalık için|demi (?:singkatnya|keringkasan)|cho ngắn gọn|简洁起见|为简洁|為簡潔|为了简洁|簡潔(?:にするため|のため|さのため)|간결(?:성)?을 위해|간략히/i;
const FOREIGN_CUT =
  /скры|опущ|опуст|пропущ|пропуст|убра|не показ|приховал|пропустив|omit|omis|omes|weggelassen|ausgelassen|verborgen|nicht gezeigt|weggelaten|pominię|pominął|pominąłem|vynechal|vynechán|utelämna|udelad|utelat|atlan|atlad|dihilangkan|dilewati|bỏ qua|lược bỏ|省略|略去|省去|隐藏|隱藏|省き|생략|eliminad|quitad|retirad|supprim|enlev|rimoss/i;

/** A comment that opens on the text's sake. */
const TEXT_SAKE_FIRST =
  /^\W*(?:(?:note|nb)\s*:?\s*)?(?:for (?:the sake of )?(?:brevity|space|length|clarity|simplicity)|to (?:save space|keep (?:this|it|the \w+) (?:short|shorter|concise|brief|focused)))\s*[,:;\u2013\u2014-]/;
/** What a comment that opens on the text's sake goes on to say: that part is shown, or left out. */
const LEFT_OUT_AFTER =
  /\b(?:only|omit\w*|left out|leav\w+ out|skip\w*|not (?:shown|included|repeated)|rest|remaining|other|others|everything else)\b/;
/** "I left it out" in any clause, or "I won't repeat". */
const I_LEFT_OUT_CLAUSE =
  /(?:^\W*|[,;:.]\s+|\bso\s+|\band\s+)(?:(?:note|nb)\s*:?\s*)?i(?:'ve|'m|'ll| have| am| will)?\s+(?:\w+\s+)?(?:left (?:\w+ )?out|omitted|omit|skipped|skip|trimmed|shortened|abbreviated|only (?:included|shown|showing|show|kept|changed|pasted)|(?:didn't|did not|won't|will not|haven't|have not) (?:include|included|repeat|repeated|copy|copied|paste|pasted|reproduce|reproduced|show|shown))\b/;
/** Not repeated here, no need to repeat it. */
const NOT_REPEATED =
  /\bnot (?:be )?(?:repeated|reproduced|duplicated|re-?pasted|copied|included|listed) (?:here|again|below)\b|\bno need to (?:repeat|reproduce|copy|paste|include|show|list)\b/;

/** The loose words (looseWords), made once. */
let loose: Set<string> | undefined;

/** Names of code and nothing else: ` getUser, setUser`, ` parse, lex and emit.` */
const NAME_LIST =
  /^\s*[\w$.]+(?:\(\))?(?:\s*,\s*(?:and\s+)?[\w$.]+(?:\(\))?|\s+and\s+[\w$.]+(?:\(\))?)*\.?$/;

/** Before a block opener or `//`: white space, a bracket or a separator (`http://` is no comment); before `#`, `--`: white space. */
const BEFORE_OPENER = /[\s;,{}()[\]>]/;
/** Words without which no trailing comment is tried (the cost of a 15 MB file of commented code lines). */
const TRAIL_WORDS =
  /\.\.|…|rest|remain|unchang|existing|same|other|omit|previous|original|before|keep|etc|elide|truncat|snip|brevity|untouched|identical|more|prior|similar|ditto|preserv|intact|as is/i;

/**
 * Is the code before a comment only brackets, dots, bars, markup tags or a block's end (`},`,
 * `...`, `| ... |`, `<span class="c">`, `end`), or a `pass` before dots? Most code starts with a
 * letter of another word: answered on it.
 */
function plainBefore(line: string, at: number, comment: string): boolean {
  let i = 0;
  let c = line.charCodeAt(0);
  for (; c === 32 || c === 9; c = line.charCodeAt(++i));
  const word = (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
  // (e, f, d: end, esac, fi, done; p: pass)
  if (word && c !== 101 && c !== 102 && c !== 100 && c !== 112) return false;
  const before = line.slice(0, at);
  return (
    !/[\p{L}\p{N}]/u.test(before.includes('<') ? before.replace(/<[^<>]*>/g, '') : before) ||
    NO_OP_BEFORE.test(before) ||
    // (`pass` with dots only: `pass  # Same as the update cache: ...` explains the pass)
    (/^\s*pass\s*$/.test(before) && /^#\s*(?:\.{2,}|…)\s*$/.test(comment.trim()))
  );
}

/** A statement that closes a block, and brackets: `end`, `fi;`, `end)`. */
const NO_OP_BEFORE =
  /^[\s;,)}\]|.…]*(?:end|fi|done|esac|endif|endfor|endwhile|endfunction)[\s;,)}\]|.…]*$/;

/** What may follow an opener: the end, white space, or dots. */
const afterOpener = (c: number) =>
  Number.isNaN(c) || c === 32 || c === 9 || c === 46 || c === 0x2026;

/**
 * The first comment opener after code on a line: where it is and what it is, or null. Each opener
 * is found by a string search (a regex over every line of a 15 MB file costs 200 ms), at most four
 * places each.
 */
function trailingOpener(line: string): { at: number; opener: string } | null {
  let best: { at: number; opener: string } | null = null;
  for (const find of ['/', '#', '<!--', '--']) {
    for (let at = line.indexOf(find, 1), tries = 0; at !== -1 && tries < 4; tries++) {
      if (best !== null && at > best.at) break;
      const c1 = line.charCodeAt(at + 1);
      const opener = find !== '/' ? find : c1 === 42 ? '/*' : c1 === 47 ? '//' : undefined;
      const prev = line.charAt(at - 1);
      const ok =
        opener !== undefined &&
        afterOpener(line.charCodeAt(at + opener.length)) &&
        (opener === '#' || opener === '--'
          ? prev === ' ' || prev === '\t'
          : BEFORE_OPENER.test(prev));
      if (ok) {
        best = { at, opener: opener! };
        break;
      }
      at = line.indexOf(find, at + find.length);
    }
  }
  // `{/*` of JSX: the brace belongs to the comment
  if (best?.opener === '/*' && line.charAt(best.at - 1) === '{')
    best = { at: best.at - 1, opener: '{/*' };
  // block comments of other syntaxes inline (`Proof. (* ... *) Qed.`, `{ {- ... -} }`, `<div>{# ... #}</div>`),
  // on a line with no other opener (one look), read only when closed on the line
  return best ?? inlineBlock(line);
}

/** The first opener of INLINE_BLOCKS after code on a line, closed on it, or null. */
function inlineBlock(line: string): { at: number; opener: string } | null {
  INLINE_OPENER.lastIndex = 1;
  for (let hit = INLINE_OPENER.exec(line); hit !== null; hit = INLINE_OPENER.exec(line)) {
    const open = hit[0];
    if (
      BEFORE_OPENER.test(line.charAt(hit.index - 1)) &&
      line.indexOf(INLINE_BLOCKS.get(open)!, hit.index + open.length) !== -1
    )
      return { at: hit.index, opener: open };
  }
  return null;
}

/**
 * Block comments of other syntaxes (the phrase data's openers with their closers) that stand after
 * code only inline, closed on the line: ML's and Pascal's `(* *)`, Haskell's `{- -}`, Jinja's `{# #}`,
 * Handlebars' `{{!-- --}}`, Blade's `{{-- --}}`, JSP's `<%-- --%>`, Razor's `@* *@`, PowerShell's
 * `<# #>`, Lisp's `#| |#`, D's `/+ +/`, Smarty's `{* *}`.
 */
const INLINE_BLOCKS = new Map([
  ['(*', '*)'],
  ['{-', '-}'],
  ['{#', '#}'],
  ['{{!--', '--}}'],
  ['{{--', '--}}'],
  ['<%--', '--%>'],
  ['@*', '*@'],
  ['<#', '#>'],
  ['#|', '|#'],
  ['/+', '+/'],
  ['{*', '*}'],
]);
/** INLINE_BLOCKS' openers, each before white space, dots or the line's end (afterOpener). */
const INLINE_OPENER = new RegExp(
  `(?:${[...INLINE_BLOCKS.keys()]
    .sort((a, b) => b.length - a.length)
    .map(escape)
    .join('|')})(?=[\\s.…]|$)`,
  'g',
);

/**
 * The comment after code on the same line, when it could be a placeholder
 * (`const routes = [ /* ... other routes ... * / ];`, `pass  # rest of the method unchanged`):
 * a word of TRAIL_WORDS in it. An opener inside a string (an odd number of quotes before it:
 * `x = '  // ... rest unchanged'`) or after a backtick (a Markdown code span) is no comment; `#`
 * and `--` need words (`cmd -- ...` passes arguments on). `enclosed`: it is all a bracket pair
 * holds (`[ /* ... * / ]`, `>{/* existing rows * /}<`): the container's content stands there.
 */
function trailingComment(line: string): {
  comment: string;
  enclosed: boolean;
  plain: boolean;
  literal: boolean;
  opens: boolean;
} | null {
  if (line.length > 400) return null;
  const hit = trailingOpener(line);
  if (hit === null) return null;
  const { at, opener } = hit;
  let comment = line.slice(at);
  // after only brackets, dots, bars, markup tags or a block's end (`},`, `...`, `| ... |`, `<span
  // class="c">`, `end`) the comment is all the line says: read as a comment line (in any script:
  // `}, // 此处省略 ...`), and so are dots after a `pass`
  const plain = plainBefore(line, at, comment);
  // (right after an opening bracket or a colon it may be a literal's whole content or open a body, in any words)
  if (!plain && !bracketBefore(line, at) && !TRAIL_WORDS.test(comment)) return null;
  const closer =
    opener === '<!--' ? '-->' : opener.endsWith('/*') ? '*/' : (INLINE_BLOCKS.get(opener) ?? null);
  let after = '';
  if (closer !== null) {
    const end = comment.indexOf(closer);
    if (end !== -1) {
      const stop = end + closer.length + (opener === '{/*' ? 1 : 0);
      after = comment.slice(stop);
      comment = comment.slice(0, stop);
    }
  }
  if (!plain && (opener === '#' || opener === '--') && !/\p{L}{2}/u.test(comment)) return null;
  const before = line.slice(0, at);
  if (before.trim() === '' || before.includes('`')) return null;
  let single = 0;
  let double = 0;
  for (let k = 0; k < at; k++) {
    const c = line.charCodeAt(k);
    if (c === 39) single++;
    else if (c === 34) double++;
  }
  if (single % 2 === 1 || double % 2 === 1) return null;
  const enclosed = closer !== null && /[[{(>]\s*$/.test(before) && /^\s*[\]})<]/.test(after);
  // what it stands in for: the whole value of a list, a map or an array (`URLs: string[] = [ /*
  // URLs misturadas * / ];`), or a body it opens at the line's end (`) { /* omitted ... * /`, `):  # ...`)
  const literal = enclosed && LITERAL_BEFORE.test(before) && /^\s*[\]})]\s*[;,)]?\s*$/.test(after);
  const opens =
    after.trim() === '' &&
    ((/[[{(:]\s*$/.test(before) && !/::\s*$/.test(before)) || OPENS_BODY.test(before));
  if (!plain && !enclosed && !opens && !TRAIL_WORDS.test(comment)) return null;
  return { comment, enclosed, plain, literal, opens };
}

/**
 * A body opened by a word or an arrow at the line's end (`items.each do |item|`, `if ok then`,
 * `begin`, `=>`, `->`), or a definition's parameter list with no brace (Lua's `function
 * M.setup(opts)`, Ruby's `def render(self)`).
 */
const OPENS_BODY =
  /(?:\b(?:do(?:\s*\|[^|]*\|)?|then|begin|else)|=>|->)\s*$|^\s*(?:(?:local|async|export|public|private|static)\s+)*(?:function|def|fn|func|sub|proc|procedure)\b[^=;]*\)\s*$/;

/** Is the last character before `at`, white space aside, an opening bracket or a colon? */
function bracketBefore(line: string, at: number): boolean {
  let k = at - 1;
  let c = line.charCodeAt(k);
  for (; c === 32 || c === 9; c = line.charCodeAt(--k));
  return c === 91 || c === 123 || c === 40 || c === 58;
}

/**
 * Before a literal whose whole value a comment is: an assignment, a key, a return or an argument,
 * then the bracket (`= [`, `: {`, `return [`, `vec![`, `array(`, `List.of(`); not a call's
 * parameters (`f(`) nor a body (`) {`, `=> {`).
 */
const LITERAL_BEFORE =
  /(?:(?:^|[^=!<>])=|:=|:|\breturn|[(,])\s*(?:[[{]|new\s*(?:[\w.]+\s*)?(?:<[^;=]*>\s*)?(?:\[\s*\]\s*)?(?:\(\s*\)\s*)?[[{]|(?:\[\s*\]|map\[[\w.*[\]]+\])[\w.*]+\s*\{|[@%][wi]?\[|@\{|(?:vec!|array|Array|list|List\.of|Set\.of|Map\.of|set|tuple|dict|listOf|setOf|mapOf|arrayOf)\s*[[(])\s*$/;

function compileMatcher(d: PhraseData): Compiled {
  const opens = [...d.comment.open].sort((a, b) => b.length - a.length);
  // the phrases and the general test compile on the first comment line (~3 ms on Node 24): most
  // deleted lines are code, which screen() answers with the openers alone
  let phrases: Compiled['phrases'] | undefined;
  let general: Compiled['general'] | undefined;
  let kin: Kin | null | undefined;
  return {
    d,
    get phrases() {
      return (phrases ??= d.phrases.map((p) => {
        const tokens = compilePhrase(p, d.slots);
        return { tokens, first: firstWords(tokens) };
      }));
    },
    opens,
    closes: [...d.comment.close].sort((a, b) => b.length - a.length),
    get general() {
      if (general === undefined)
        general = d.general ? generalTest(d.general, d.slots.CODE ?? []) : null;
      return general;
    },
    dotsRe: new RegExp(
      d.dots
        .map(escape)
        .sort((a, b) => b.length - a.length)
        .join('|'),
      'g',
    ),
    maxOpen: Math.max(...opens.map((o) => o.length)),
    firstChars: new Set(opens.flatMap((o) => [o.charCodeAt(0), o.toUpperCase().charCodeAt(0)])),
    get kin() {
      if (kin === undefined) kin = d.general ? compileKin(d.general, d.slots.CODE ?? []) : null;
      return kin;
    },
  };
}

/** The steps a line goes through: a quick look at its start, its comment's text, remarks in brackets, then its words. */
function isPlaceholder(m: Compiled, line: string): boolean {
  const early = screen(m, line);
  if (early !== undefined) return early;
  const read: Read = { kin: 'none' };
  let body = commentBody(m, line, read);
  // another language's words that only name code (`Resto del código`, `Остальные методы`, `Code
  // existant`) head code as often as they stand for it, and read less surely than English: alone
  // where code went they count (the ALONE rule); here, a comment read in English counts only where
  // it says the code is unchanged, the same, left out, here or below (`Resto del código igual`),
  // and otherwise is read in its own words, as the rules before the translation read it
  if (read.kin === 'names') body = commentBody(m, line, undefined, false);
  if (body === null) return false;
  const bare = body.trim();
  // a quotation: a comment that quotes a placeholder (`// "see the original file for the rest"`) talks about one
  if (/^(["`“‘]).*["`”’][.,:;)]?$/.test(bare) && bare.length > 2) return false;
  // the rest of a sentence begun on the line before: `// is returned unchanged.`
  if (CONTINUED_VERB.test(bare)) return false;
  const frame = frameOf(m, bare);
  const remark = bracketRemark(m, bare, frame.wrapped);
  if (remark !== undefined) return remark;
  return byWords(m, body, bare, frame);
}

/**
 * Every line of a file comes through here (findElisions) and most are code:
 * a line whose first characters after ASCII white space are plain ASCII and
 * open no comment cannot become a comment line through the normalising of
 * commentBody (it only drops or replaces non-ASCII characters), so it is
 * answered at once. A numbered BASIC line and dots before a comment are
 * answered by what follows them.
 */
function screen(m: Compiled, line: string): Verdict {
  let i = 0;
  let c0 = line.charCodeAt(0);
  for (; c0 === 32 || (c0 >= 9 && c0 <= 13); c0 = line.charCodeAt(++i));
  // a numbered BASIC line: `30 REM ... rest of program ...`
  if (c0 >= 48 && c0 <= 57) {
    const basic = /^\s*\d+\s+(rem\s.*)$/i.exec(line);
    return basic !== null && isPlaceholder(m, basic[1]!);
  }
  // dots, then the comment: `...    // the rest of the code in the method is unchanged`
  if (c0 === 46 || c0 === 0x2026) {
    const after = /^\s*(?:\.{3}|…)[ \t]+((?:\/\/|#).*)$/.exec(line);
    return after !== null && isPlaceholder(m, after[1]!);
  }
  if (c0 < 128 && !m.firstChars.has(c0)) return false;
  const head = line.slice(i, i + m.maxOpen);
  if (ASCII.test(head) && !m.opens.some((o) => head.toLowerCase().startsWith(o))) return false;
  return undefined;
}

/**
 * The text of a comment line between its opener and its closer, or null when
 * the line is no comment: a string in a list (`'not modified' : 304,`), or a
 * block comment's inner line that quotes code (` *     // ...`).
 */
function commentBody(m: Compiled, line: string, read?: Read, english = true): string | null {
  // zero-width and soft characters hide nothing from a reader, so they hide nothing here
  // NFKC: fullwidth and other compatibility forms (．．． ｅｘｉｓｔｉｎｇ) read as what they look like
  let t = line
    .normalize('NFKC')
    .replace(/[\u200B-\u200D\u2060\uFEFF\u00AD]/g, '')
    .replace(/[\u00A0\u2000-\u200A\u202F\u3000]/g, ' ')
    .trim();
  if (t.length < 2 || t.length > 200) return null;
  const lower = t.toLowerCase();
  const open = m.opens.find((o) => lower.startsWith(o));
  if (open === undefined) return null; // not a comment line
  t = t.slice(open.length);
  // openers that code starts with too (`! function () {...}`, `::std::x = y;`, `" a string" +`): a comment only without code's punctuation
  if ((open === '! ' || open === '" ' || open === '::') && /[;{}=+]/.test(t)) return null;
  // a doubled one-character opener: `;; ... rest of input handling`, `%% ...`, `## ...`
  while (open.length === 1 && t.startsWith(open)) t = t.slice(1);
  // a doc comment's opener: `/** ... */`
  if (open === '/*') t = t.replace(/^\*+/, '');
  // a quote that closes and code follows is a string in a list, not a comment: `'not modified' : 304,`
  // (vim's `" ` the same: `" world",` is a string)
  if (open === "'" && /^[^']*'\s*(?:[:,)\]=+;.]|$)/.test(t) && !/^[^']*\w'\w/.test(t)) return null;
  if (open === '" ' && /"\s*(?:[:,)\]=+;.]|$)/.test(t)) return null;
  // a block comment's inner line indented past its `*` quotes code: a docs example (` *     // ...`)
  if (open === '*' && /^(?: {2,}|\t)/.test(t)) return null;
  const close = m.closes.find((c) => t.trimEnd().endsWith(c));
  // runs of white space read as one: `//    Keep  the  rest  of  the  functions  (...)`
  // a ruler around the words is decoration: `# --- (Rest of your code ...) ---`, `#-- ... more subclasses`
  // a remark in brackets that ends on a colon before a list on the next lines closes there:
  // `# (Other utility functions remain unchanged from Phase 1:` reads as `(... Phase 1)`
  const said = close === undefined ? t : t.trimEnd().slice(0, -close.length);
  return (m.kin === null || !english ? said : inEnglish(m.kin, said, read))
    .replace(/\s+/g, ' ')
    .replace(RULER_BEFORE, ' ')
    .replace(RULER_AFTER, ' ')
    .replace(
      OPEN_TO_COLON,
      (_, o: string, words: string) => `${o}${words}${o === '(' ? ')' : ']'}`,
    );
}

/**
 * Other languages' words, compiled: the words of languages written with spaces by their first word
 * (a phrase is a run of words: `bez zmian`, `und so weiter`), and one expression for the scripts
 * written without them (Chinese, Japanese, Korean, Thai) and marks such as the ditto mark (`〃`).
 */
interface Kin {
  /** Phrases of `kin` (small: false) and of `small` (small: true) by their first word, longest first. */
  first: Map<string, Array<{ words: string[]; to: string; small: boolean }>>;
  /** The phrases of scripts without spaces, longest first, and their English by phrase. */
  joined: RegExp | null;
  joinedTo: Map<string, string>;
  /** The words the rules know (the general rule's classes, the code nouns): the others are unknown. */
  known: Set<string>;
  /** The first words of the phrases of `kin` (not `small`: a comment with none is not translated). */
  opens: Set<string>;
}

/** What inEnglish read: no word of another language, words that only name code, or ones that say what became of it. */
interface Read {
  kin: 'none' | 'names' | 'says';
  /** The comment in its own words, where it was read in English. */
  own?: string;
  /** Then, how many of its words no phrase took and no rule knows. */
  unknown?: number;
}

/** The English kin that only name code or point at it (rest, other, existing, code, ...): the others say what became of it. */
const KIN_NAMES = new Set([
  'rest',
  'other',
  'existing',
  'original',
  'previous',
  'code',
  'file',
  'functions',
  'methods',
  'class',
  'logic',
  'implementation',
  'ellipsis',
  'optional',
  'is',
]);

/**
 * Does a word of the text open a phrase of `kin`? Read character by character (a Unicode regex's
 * split cost a third more on a file of comments): ASCII letters, and past ASCII everything but
 * punctuation and symbols, are letters.
 */
function opensKin(kin: Kin, text: string): boolean {
  const t = text.toLowerCase();
  let start = 0;
  for (let i = 0; i <= t.length; i++) {
    const c = i < t.length ? t.charCodeAt(i) : 32;
    const letter =
      (c >= 97 && c <= 122) ||
      (c >= 0xc0 &&
        c !== 0xd7 &&
        c !== 0xf7 &&
        !(c >= 0x2000 && c <= 0x2bff) &&
        !(c >= 0x3000 && c <= 0x303f) &&
        !(c >= 0xff00 && c <= 0xff20));
    if (letter) continue;
    if (i > start && kin.opens.has(t.slice(start, i))) return true;
    start = i + 1;
  }
  return false;
}

/** A word, as the translation reads words: letters and their marks (Devanagari's vowel signs). */
const KIN_WORD = /[\p{L}\p{M}]+/gu;
/** Scripts written without spaces between words (Thai, CJK and its marks such as the ditto mark `〃`, Hangul). */
const UNSPACED = /[\u0E00-\u0E7F\u3000-\u30FF\u3400-\u9FFF\uAC00-\uD7AF\uF900-\uFAFF]/;
/** The English kin of a code noun: after "rest" it takes an "of" (`sisa kode` -> `rest of code`). */
const KIN_NOUNS = new Set([
  'code',
  'file',
  'functions',
  'methods',
  'class',
  'logic',
  'implementation',
]);

/** `foreign.kin` and `foreign.small` compiled once, on the first comment line; the rules' words (`known`) beside them. */
function compileKin(g: GeneralData, code: readonly string[]): Kin {
  const f = g.foreign;
  const first: Kin['first'] = new Map();
  const joinedTo = new Map<string, string>();
  const add = (table: Record<string, string[]>, small: boolean) => {
    for (const [to, phrases] of Object.entries(table))
      for (const written of phrases) {
        // (as commentBody reads the comment: NFKC)
        const phrase = written.normalize('NFKC');
        if (UNSPACED.test(phrase) || !/\p{L}/u.test(phrase)) {
          joinedTo.set(phrase, to);
          continue;
        }
        const words = phrase.match(KIN_WORD) ?? [];
        if (words.length === 0) continue;
        const list = first.get(words[0]!) ?? [];
        list.push({ words, to, small });
        first.set(words[0]!, list);
      }
  };
  add(f.kin, false);
  add(f.small, true);
  for (const list of first.values()) list.sort((a, b) => b.words.length - a.words.length);
  const keys = [...joinedTo.keys()].sort((a, b) => b.length - a.length);
  const opens = new Set<string>();
  for (const [w, list] of first) if (list.some((p) => !p.small)) opens.add(w);
  return {
    first,
    known: new Set(
      [
        ...g.strong,
        ...g.weak,
        ...g.pointer,
        ...g.mark,
        ...g.position,
        ...g.filler,
        ...g.veto,
        ...g.verbs,
        ...g.pairs,
        ...code,
        ...f.mark,
        ...f.strong,
      ].flatMap((w) => w.split(/[ _]/)),
    ),
    opens,
    // (a key of one character only where no letter stands beside it: `略` alone, not in `戦略`)
    joined: keys.length
      ? new RegExp(
          keys
            .map((k) => ([...k].length === 1 ? `(?<!\\p{L})${escape(k)}(?!\\p{L})` : escape(k)))
            .join('|'),
          'gu',
        )
      : null,
    joinedTo,
  };
}

/**
 * A comment in another language, read in English: each phrase of `kin` (`reszta`, `bez zmian`,
 * `以下同様`) becomes its English kin, and then, in a comment that held one, each of `small` (`del`,
 * `de`, `que`): `Resto del código igual que X` reads `rest of the code the same as X`, `Reszta
 * kodu...` reads `rest of code...`, so every rule the English words meet reads them. A comment with
 * no word of `kin` is returned as it is (an English `de-dupe`, `die`, `a` is never touched).
 */
function inEnglish(kin: Kin, text: string, read?: Read): string {
  // (a comment line is read by isPlaceholder, then by the ALONE rule: the second reading is the first's)
  if (lastEnglish?.kin !== kin || lastEnglish.text !== text) {
    const r: Read = { kin: 'none' };
    lastEnglish = { kin, text, out: translate(kin, text, r), read: r };
  }
  if (read !== undefined) Object.assign(read, lastEnglish.read);
  return lastEnglish.out;
}

/** The last comment inEnglish read, and what it read. */
let lastEnglish: { kin: Kin; text: string; out: string; read: Read } | undefined;

/** inEnglish's reading, `read` filled in. */
function translate(kin: Kin, text: string, read: Read): string {
  let t = text;
  let found: Read['kin'] | false = false;
  if (kin.joined !== null && !ASCII.test(t) && UNSPACED.test(t)) {
    const joined = kin.joined;
    joined.lastIndex = 0;
    if (joined.test(t))
      t = t.replace(joined, (x) => {
        const to = kin.joinedTo.get(x)!;
        // (a phrase found inside a longer word, `省略` in `省略号`, reads no surer than a name)
        found ||= 'names';
        return ` ${to} `;
      });
  }
  // (most comments hold no first word of a phrase of `kin`: one split and a look-up a word)
  if (!found && !opensKin(kin, t)) return text;
  const words = [...t.matchAll(KIN_WORD)];
  const lower = words.map((w) => w[0].toLowerCase());
  // a phrase's words stand apart only by spaces or dots (`и т. д`)
  const apart = (k: number) =>
    /^[\s.]*$/.test(t.slice(words[k - 1]!.index! + words[k - 1]![0].length, words[k]!.index));
  // the phrase at each word (most comments hold no word of another language: one look-up a word)
  const hits = lower.map((w, i) =>
    kin.first
      .get(w)
      ?.find(
        (p) =>
          p.words.every((x, k) => lower[i + k] === x) &&
          p.words.every((_, k) => k === 0 || apart(i + k)),
      ),
  );
  if (!found && !hits.some((h) => h !== undefined && !h.small)) return text;
  read.own = text;
  // it says what became of the code when a word of it says so, and at most one word is left
  // unread (letters past ASCII no phrase took: `Методы для работы с корзиной остаются без
  // изменений` leaves two, and says no more surely than a name)
  let unread = 0;
  let unknown = 0;
  for (let i = 0; i < words.length; i++) {
    const hit = hits[i];
    if (hit !== undefined) i += hit.words.length - 1;
    else {
      if (!ASCII.test(lower[i]!)) unread++;
      if (!kin.known.has(lower[i]!)) unknown++;
    }
  }
  read.unknown = unknown;
  read.kin =
    hits.some((h) => h !== undefined && !h.small && !KIN_NAMES.has(h.to)) && unread <= 1
      ? 'says'
      : 'names';
  let out = '';
  let at = 0;
  let prev = '';
  for (let i = 0; i < words.length;) {
    const hit = hits[i];
    const word = words[i]!;
    const english = hit?.to ?? lower[i]!;
    out += t.slice(at, word.index);
    // English says "the rest of the code" where others say "the rest (of) code"
    if (prev === 'rest' && KIN_NOUNS.has(english.split(' ')[0]!)) out += 'of ';
    out += hit === undefined ? word[0] : hit.to;
    const n = hit?.words.length ?? 1;
    const last = words[i + n - 1]!;
    at = last.index! + last[0].length;
    prev = english.split(' ').at(-1)!;
    i += n;
  }
  return out + t.slice(at);
}

/** A remark opened by a bracket that is never closed and ends on a colon: `(Other helpers unchanged:`. */
const OPEN_TO_COLON = /^(\s*[([])([^()[\]]*\p{L}[^()[\]]*?)\s*:\s*$/u;

/** A run of rule characters before the words or after them (not a lone `-` or `*`: a list's bullet). */
const RULER_BEFORE = /^\s*[-=~_#*]{2,}(?=\s|\.|…|\(|\[|$)/;
const RULER_AFTER = /(?<=\s|\.|…|\)|\])[-=~_#*]{2,}\s*$/;

interface Frame {
  /** Dots before the first word. */
  starts: boolean;
  framed: Framed;
  /** The whole comment in brackets: "(existing interfaces)", "[rest omitted]". */
  wrapped: boolean;
}

function frameOf(m: Compiled, bare: string): Frame {
  const starts = m.d.dots.some((x) => bare.startsWith(x)) || /^[([]\s*(?:\.\.|…)/.test(bare);
  const ends = m.d.dots.some((x) => bare.endsWith(x)) || /(?:\.\.|…)\s*[)\]]$/.test(bare);
  return {
    starts,
    framed: starts && ends ? 'both' : starts || ends ? 'one' : 'none',
    wrapped: /^[([].*[)\]]$/.test(bare),
  };
}

/** Remarks in brackets that say it all, read before the words are normalised. */
function bracketRemark(m: Compiled, bare: string, wrapped: boolean): Verdict {
  // a status in brackets, then dots: "(unchanged) ... all the way until:"
  if (
    /^[([]\s*(?:unchanged|omitted|untouched|unmodified|snipped|same as before)\s*[)\]]\s*(?:\.{2,}|…)/i.test(
      bare,
    )
  )
    return true;
  // dots, then only a remark in brackets: "... (Image collection code)", "… (similar to Option 1)"
  if (
    /^(?:\.{2,}|…|⋯)\s*\([^()]*\w[^()]*\)$/.test(bare) &&
    bare.split(/\s+/).length <= (m.d.general?.dotsMaxWords ?? 18)
  )
    return true;
  // a remark in brackets that is a placeholder itself: "TABS LOGIC (Rest of your existing code remains unchanged)"
  // (the remark begins with a mark: "(same file system)", "(left as it is)" explain the words before them)
  // (a remark inside a quotation is quoted: `// the rule takes "TABS LOGIC (Rest of ... unchanged)"`)
  const unquoted = bare.replace(/"[^"]*"|`[^`]*`|“[^”]*”/g, ' ');
  const inner =
    /\((?:the |all )?(?:rest|remaining|existing|other|previous|original)\b([^()]*)\)/i.exec(
      unquoted,
    )?.[0];
  if (inner !== undefined && !wrapped && isPlaceholder(m, `// ${inner.slice(1, -1)}`)) return true;
  return undefined;
}

/** The comment as words (lower case, numbers as `n`, dots and punctuation dropped): only dots, a phrase, or the general rule. */
function byWords(
  m: Compiled,
  body: string,
  bare: string,
  { starts, framed, wrapped }: Frame,
): boolean {
  let dotted = false;
  // words in double quotes are quoted, not said (when two words are left): `* defaulting to 303 "See Other".`
  const unquoted = body.replace(/"[^"]+"/g, ' ');
  const t = (/\p{L}{2,}.*\s.*\p{L}{2,}/u.test(unquoted) ? unquoted : body)
    .toLowerCase()
    .replace(m.dotsRe, () => {
      dotted = true;
      return ' ';
    })
    .replace(/\d[\d,]*/g, ' n ')
    .replace(/[^\p{L}\p{M}\p{N}\s]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (t === '') return dotted;
  const words = t.split(' ');
  const shape: Shape = { starts, wrapped, text: t, raw: bare };
  if (words.length > 14) return m.general !== null && starts && m.general(words, framed, shape);
  // dots, then a few words and nothing after: what the left-out code did (`// ... execute and return results`)
  if (framed === 'one' && starts && words.length <= 5 && !wrapped) return true;
  // "existing" and one word, nothing else: the agents' word for what it left out (`{/* existing children */}`);
  // real comments label with "original", "other" ("// original methods"), which stay to the general rule
  if (words.length === 2 && words[0] === 'existing') return true;
  if (
    m.phrases.some((p) => (p.first === null || p.first.has(words[0]!)) && matches(p.tokens, words))
  )
    return true;
  return m.general !== null && m.general(words, framed, shape);
}

interface Shape {
  /** Dots before the first word. */
  starts: boolean;
  /** The whole comment in brackets. */
  wrapped: boolean;
  /** The normalised comment, for the substrings of scripts written without spaces. */
  text: string;
  /** The comment's words as written (brackets and all), without its markers. */
  raw: string;
}

/** Words that make a sentence about kept code a condition or a reason, not a placeholder. */
const CAUSE = new Set(['if', 'when', 'unless', 'because', 'since', 'so', 'while', 'until', 'once']);

/** The general rule's word classes, compiled once from elision-phrases.json's `general`. */
interface Classes {
  g: GeneralData;
  strong: Set<string>;
  weak: Set<string>;
  pointer: Set<string>;
  mark: Set<string>;
  listMarks: Set<string>;
  position: Set<string>;
  veto: Set<string>;
  /** The code nouns (the CODE slot's words). */
  nouns: Set<string>;
  filler: Set<string>;
  verbs: Set<string>;
  /** The strong words that can only mean "left out here" (not "unchanged", which a comment on code says too). */
  stays: Set<string>;
  unchanged: Set<string>;
  cut: Set<string>;
  /** Every word of some class: the others are "free". */
  known: Set<string>;
  /** The veto words no pair holds: they veto before pairs are joined too. */
  earlyVeto: Set<string>;
  /** Join the words of a pair into one ("same as before" -> "same_as_before"). */
  join(input: readonly string[]): string[];
}

/** One comment as the general rule reads it. */
interface Sentence {
  input: string[];
  framed: Framed;
  shape: Shape;
}

type Rule = (c: Classes, s: Sentence) => Verdict;

/**
 * The general rule of the phrase data (its `general.about` says it in words):
 * a short comment that says the code is elsewhere, left out, unchanged or
 * truncated, whatever the noun it names. The rules are tried in order; the
 * first that answers decides.
 */
function generalTest(
  g: GeneralData,
  code: readonly string[],
): (words: string[], framed: Framed, shape: Shape) => boolean {
  const c = compileClasses(g, code);
  return (input, framed, shape) => {
    const s = { input, framed, shape };
    for (const rule of GENERAL_RULES) {
      const v = rule(c, s);
      if (v !== undefined) return v;
    }
    return false;
  };
}

function compileClasses(g: GeneralData, code: readonly string[]): Classes {
  // pairs by their first word: most words start none
  const pairs = new Map<string, Array<{ words: string[]; joined: string }>>();
  for (const p of [...g.pairs, ...g.foreign.pairs]) {
    const words = p.split(' ');
    pairs.set(words[0]!, [
      ...(pairs.get(words[0]!) ?? []),
      { words, joined: p.replace(/ /g, '_') },
    ]);
  }
  // the longest pair first: "same as before" before "same as"
  for (const list of pairs.values()) list.sort((a, b) => b.words.length - a.words.length);
  const join = (input: readonly string[]): string[] => {
    const words: string[] = [];
    for (let i = 0; i < input.length;) {
      const pair = pairs.get(input[i]!)?.find((p) => p.words.every((w, k) => input[i + k] === w));
      words.push(pair ? pair.joined : input[i]!);
      i += pair ? pair.words.length : 1;
    }
    return words;
  };
  const inPairs = new Set(g.pairs.flatMap((p) => p.split(' ')));
  const c: Omit<Classes, 'known'> = {
    g,
    strong: new Set([...g.strong, ...g.foreign.strong]),
    weak: new Set(g.weak),
    pointer: new Set(g.pointer),
    mark: new Set([...g.mark, ...g.foreign.mark]),
    listMarks: new Set(g.listMarks),
    position: new Set(g.position),
    veto: new Set(g.veto),
    nouns: new Set(code.flatMap((w) => w.split(' '))),
    filler: new Set(g.filler),
    verbs: new Set(g.verbs),
    stays: new Set(['remain', 'remains', 'stay', 'stays', 'kept']),
    unchanged: new Set([
      'same',
      'same_as_before',
      'unchanged',
      'untouched',
      'as_before',
      'as_is',
      'as_they_are',
      'as_it_was',
      'as_they_were',
      'same_as',
      'intact',
    ]),
    cut: new Set([
      'omitted',
      'elided',
      'snipped',
      'truncated',
      'abbreviated',
      'not_shown',
      'for_brevity',
      'left_out',
    ]),
    earlyVeto: new Set(g.veto.filter((w) => w !== 'see' && !inPairs.has(w))),
    join,
  };
  return {
    ...c,
    known: new Set([
      ...c.strong,
      ...c.weak,
      ...c.pointer,
      ...c.mark,
      ...c.position,
      ...c.filler,
      ...c.nouns,
      ...c.verbs,
    ]),
  };
}

/**
 * dots, then a strong word early, however long the sentence runs on after it:
 * "... Code continues mostly unchanged, just ensure this block is preserved if ..."
 */
const dotsThenStrong: Rule = (c, { input, shape }) =>
  (shape.starts &&
    c
      .join(input.slice(0, 8))
      .slice(0, 5)
      .some((w) => c.strong.has(w))) ||
  undefined;

/** Words of degree that change nothing in "stays (largely) unchanged". */
const DEGREE = new Set([
  'largely',
  'mostly',
  'basically',
  'essentially',
  'entirely',
  'completely',
  'fully',
  'exactly',
  'still',
  'virtually',
  'practically',
  'otherwise',
  'also',
  'pretty',
  'much',
]);

/**
 * a mark and a code noun, then at once a word that says it stays (a word of degree aside), whatever follows:
 * "Existing code remains the same except booting the server", "other handlers unchanged, see below",
 * "Other methods remain largely unchanged, but ..."
 */
const markNounStays: Rule = (c, { input }) => {
  const lead = c
    .join(input.slice(0, 9))
    .filter((w) => w !== 'the' && w !== 'all' && !DEGREE.has(w));
  return (
    (lead.length >= 3 &&
      c.mark.has(lead[0]!) &&
      c.nouns.has(lead[1]!) &&
      (c.strong.has(lead[2]!) ||
        (c.weak.has(lead[2]!) && (c.weak.has(lead[3]!) || c.strong.has(lead[3]!))))) ||
    undefined
  );
};

/**
 * "keep the rest of the code exactly as it was ...", "no changes to the rest of the file are needed ...":
 * the rest of a code noun kept, whatever the sentence says after it
 * (not "keep the rest of the code running if this fails", "keep the rest of the config keys sorted")
 */
const restOfCodeKept: Rule = (c, { input, shape }) => {
  const said = input[0] === 'no' && input[1] === 'changes' && input[2] === 'to';
  const at = said ? 3 : c.verbs.has(input[0]!) ? 1 : -1;
  const tail =
    at < 0 ? [] : input.slice(at).filter((w) => w !== 'the' && w !== 'your' && w !== 'all');
  if (
    tail[0] !== 'rest' ||
    tail[1] !== 'of' ||
    !c.nouns.has(tail[2]!) ||
    tail.some((w) => CAUSE.has(w))
  )
    return undefined;
  const next = tail[3];
  // after the noun: nothing, a word saying it stays, or a list in brackets of what it holds
  return (
    said ||
    next === undefined ||
    c.strong.has(next) ||
    (c.weak.has(next) && !next.startsWith('change')) ||
    next === 'exactly' ||
    next === 'as' ||
    /\brest of (?:the |your |all )*[\w ]+?\s*\(/i.test(shape.raw) ||
    undefined
  );
};

/** Status words that open a remark in brackets as "omitted" does: "[UNCHANGED functions from the provided snippet, ...]" */
const BRACKET_STATUS = new Set(['unchanged', 'untouched', 'unmodified']);

/**
 * a word that can only mean "left out" (or a status word) opens a remark in brackets naming code:
 * "[omitted state variables and event definitions for brevity]", "[Omitted ... logic for brevity, keeping ...]"
 */
const bracketedCut: Rule = (c, { input, shape }) =>
  (shape.wrapped &&
    (c.cut.has(input[0]!) || BRACKET_STATUS.has(input[0]!)) &&
    input.some((w, k) => k > 0 && (c.nouns.has(w) || c.mark.has(w) || w === 'brevity'))) ||
  undefined;

/** a verb of keeping, a mark and at most one word more, and nothing after: "Keep existing variables:" */
const keepMark: Rule = (c, { input }) =>
  (input.length <= 3 &&
    c.verbs.has(input[0]!) &&
    c.mark.has(input[1]!) &&
    !input.slice(2).some((w) => c.earlyVeto.has(w))) ||
  undefined;

/** "rest unchanged helpers + new helper stubs", "rest same as before" */
const restStatus: Rule = (c, { input }) =>
  (input[0] === 'rest' &&
    (c.strong.has(input[1]!) ||
      c.strong.has(c.join(input.slice(1, 4))[0]!) ||
      c.weak.has(input[1]!))) ||
  undefined;

/** Words that end the noun of "the rest of NOUN": what comes after says where it is, or that it stays. */
const AFTER_NOUN = new Set([
  'for',
  'in',
  'of',
  'from',
  'inside',
  'within',
  'is',
  'are',
  'was',
  'were',
  'would',
  'will',
  'can',
  'could',
  'should',
  'may',
  'might',
  'must',
]);
const MODAL = new Set([
  'would',
  'will',
  'can',
  'could',
  'should',
  'may',
  'might',
  'must',
  'is',
  'are',
]);
const WHERE = new Set(['for', 'in', 'of', 'from', 'inside', 'within']);

/**
 * a comment that opens with "the rest of" a thing of up to three words and then ends, says whose
 * it is ("for X", "in X", in a few words), or that it stays or goes here:
 * "rest of the form", "Rest of code for the player component", "Rest of the component logic would go here, ..."
 * (not "the rest of the loop is the slow path", "rest of the args are forwarded to the child")
 */
const restOfThing: Rule = (c, { input }) => {
  const words = c.join(input);
  const at = words[0] === 'the' ? 1 : 0;
  if (words[at] !== 'rest' || words[at + 1] !== 'of') return undefined;
  const after = words
    .slice(at + 2)
    .filter((w) => w !== 'the' && w !== 'your' && w !== 'all' && w !== 'this' && w !== 'our');
  const says = (w: string) => c.strong.has(w) || c.weak.has(w) || c.pointer.has(w);
  let n = 0;
  // a participle after the noun's first word starts what is said of it: "rest of code using the arguments"
  const ends = (w: string, k: number) =>
    AFTER_NOUN.has(w) ||
    says(w) ||
    c.veto.has(w) ||
    CAUSE.has(w) ||
    (k > 0 && /(?:ed|ing)$/.test(w) && !c.mark.has(w));
  while (n < after.length && n < 4 && !ends(after[n]!, n)) n++;
  if (n === 0 || n > 3) return undefined;
  const tail = after.slice(n);
  if (tail.length === 0) return true;
  // whose: a code noun or a position in a few words ("for the player component", "in this file"; not "in reverse order")
  if (WHERE.has(tail[0]!))
    return (
      (tail.length <= 5 &&
        tail.some((w) => c.nouns.has(w) || c.position.has(w)) &&
        !tail.some((w) => c.veto.has(w) || CAUSE.has(w) || MODAL.has(w))) ||
      undefined
    );
  const verb = MODAL.has(tail[0]!) ? tail.slice(tail[1] === 'be' ? 2 : 1) : tail;
  // (what "will go in here" is still to be written: a stub, not a cut)
  const goes =
    (verb[0] === 'go' && tail[0] === 'would') || verb[0] === 'goes' || verb[0] === 'here';
  return (
    (verb[0] !== undefined && (c.strong.has(verb[0]) || c.weak.has(verb[0]) || goes)) || undefined
  );
};

/**
 * a mark and a code noun done "the same way" or "similarly": the code of the others was left out:
 * "Other functions can be similarly updated.", "remaining handlers follow the same pattern"
 */
const othersAlike: Rule = (c, { input }) => {
  const lead = c.join(input.slice(0, 10)).filter((w) => w !== 'the' && w !== 'all');
  if (!c.mark.has(lead[0]!) || !c.nouns.has(lead[1]!) || lead.slice(2).some((w) => CAUSE.has(w)))
    return undefined;
  // the likeness closes the sentence (a word at most after it): not "documented similarly in the wiki"
  const rest = lead.slice(2).join(' ');
  return (
    /\b(?:similarly|likewise|analogously|same way|same pattern)(?: \w+)?$/.test(rest) || undefined
  );
};

/**
 * the generic code noun after a mark, then a comma, a colon, a bracket or nothing:
 * "all other code, including render with ...", "existing logic (validation, retries)"
 */
const otherCode: Rule = (_c, { shape }) =>
  /^(?:(?:all|the)\s+)*(?:other|remaining|existing)\s+(?:code|logic|implementation)\s*(?:[,;\u2013\u2014]|\.?$)/i.test(
    shape.raw,
  ) || undefined;

/** a status, a colon, then a list of what it covers: "Unchanged: audio, indicator, appearance, history retention, etc." */
const statusList: Rule = (_c, { shape }) =>
  /^(?:unchanged|omitted|untouched|unmodified|elided|not shown|same as before|kept as is)\s*:\s*[\w-]+(?: [\w-]+){0,2}(?:\s*,\s*(?:and )?[\w-]+(?: [\w-]+){0,2}){2,}\.?$/i.test(
    shape.raw,
  ) || undefined;

/**
 * a verb of keeping, a mark and a code noun, then nothing or a clause joined by "but" / "and":
 * "# Keep existing implementation but ensure compatibility" (not "keep the existing behaviour for old clients",
 * "preserve existing handlers when redirecting")
 */
const keepMarkNoun: Rule = (c, { input }) => {
  const lead = input.filter((w) => w !== 'the' && w !== 'all' && w !== 'your');
  if (
    !c.verbs.has(lead[0]!) ||
    !c.mark.has(lead[1]!) ||
    !c.nouns.has(lead[2]!) ||
    input.some((w) => CAUSE.has(w))
  )
    return undefined;
  const next = lead[3];
  return (
    next === undefined ||
    next === 'but' ||
    next === 'and' ||
    next === 'here' ||
    next === 'intact' ||
    undefined
  );
};

/** Past dotsMaxWords words, none of the rules below can say yes. */
const tooLong: Rule = (c, { input }) => (input.length > c.g.dotsMaxWords ? false : undefined);

/** Comments after dots, in brackets, or about "the rest", at up to dotsMaxWords words whatever their other words. */
const framedOrRest: Rule = (c, { input, framed, shape }) => {
  if (!(shape.starts || shape.wrapped || input[0] === 'rest' || input[1] === 'rest'))
    return undefined;
  const joined = c.join(input);
  const lead = joined.find((w) => !c.filler.has(w));
  const strongHere =
    joined.some((w) => c.strong.has(w)) ||
    c.g.foreign.substrings.some((x) => shape.text.includes(x));
  // "... rest of visual updates", "... existing tree-walk renderer unchanged ...", "... (hàm này giữ nguyên)"
  if (shape.starts && ((lead !== undefined && c.mark.has(lead)) || strongHere)) return true;
  // after the dots a verb of keeping, then a mark or "same": "... keep existing code (loadX function)", "... same parameters"
  const afterVerb =
    lead !== undefined && c.verbs.has(lead)
      ? joined.slice(joined.indexOf(lead) + 1).find((w) => !c.filler.has(w))
      : lead;
  if (
    shape.starts &&
    afterVerb !== undefined &&
    (c.mark.has(afterVerb) || afterVerb === 'same' || afterVerb === 'similar')
  )
    return true;
  // "(existing interfaces)"
  if (shape.wrapped && lead !== undefined && c.mark.has(lead) && joined.length <= 12) return true;
  // "Rest of the file remains exactly the same as in the previous document" (not "the rest of the loop is the slow path")
  const at = joined.indexOf('rest');
  // ("will" is no veto before a weak word: "rest of the code will remain same")
  const vetoedHere = joined.some(
    (w, k) => c.veto.has(w) && !(w === 'will' && c.weak.has(joined[k + 1]!)),
  );
  if (
    (at === 0 || (at === 1 && joined[0] === 'the')) &&
    joined[at + 1] === 'of' &&
    !vetoedHere &&
    (strongHere || joined.some((w) => c.weak.has(w)))
  )
    return true;
  // "... (error messages) ..."
  if (framed === 'both' && joined.length <= 4) return true;
  return undefined;
};

/**
 * a subject of a few words, then "stays as it was" closing the comment:
 * "Products, Rentals, Payments tabs remain the same as before", "handlers stay unchanged"
 */
const subjectStays: Rule = (c, { input }) => {
  if (input.length > 12 || input.some((w) => c.earlyVeto.has(w))) return undefined;
  const joined = c.join(input);
  const k = joined.findIndex((w) => c.stays.has(w));
  const rest = k > 0 ? joined.slice(k + 1).filter((w) => w !== 'the' && w !== 'exactly') : [];
  return (
    (k <= 5 &&
      rest.length > 0 &&
      rest.length <= 2 &&
      rest.every((w) => c.unchanged.has(w) || w === 'before') &&
      (rest.length === 1 ? rest[0] !== 'same' : rest[1] === 'as_before' || rest[1] === 'before')) ||
    undefined
  );
};

/** "Repeat for other job cards", "same for the other handlers" */
const repeatFor: Rule = (c, { input }) =>
  ((input[0] === 'repeat' || input[0] === 'same' || input[0] === 'similarly') &&
    input[1] === 'for' &&
    input.length <= 8 &&
    c.mark.has(input[2] === 'the' || input[2] === 'all' ? input[3]! : input[2]!)) ||
  undefined;

/** A pair joins two or three words into one: past twice maxWords, nothing can come under it; a veto word no pair holds vetoes before joining ("see" is judged below). */
const vetoedEarly: Rule = (c, { input }) =>
  input.length > 2 * c.g.maxWords || input.some((w) => c.earlyVeto.has(w)) ? false : undefined;

/** A short comment (at most maxWords words once pairs are joined, at most maxFree words of no class) read by its word classes. */
const shortComment: Rule = (c, { input, framed }) => {
  const words = c.join(input);
  if (words.length > c.g.maxWords) return false;
  // "see" explains, except before a mark: "see the original file for the rest"
  const vetoed = (w: string, i: number) =>
    c.veto.has(w) &&
    !(w === 'see' && words.slice(i + 1, i + 3).some((x) => c.mark.has(x) || c.position.has(x)));
  if (words.some(vetoed)) return false;
  const has = (set: Set<string>) => words.some((w) => set.has(w));
  const free = words.filter((w) => !c.known.has(w) && w !== 'see').length;
  const cutMarked = has(c.mark) && words.some((w) => c.cut.has(w));
  if (free > c.g.maxFree + 2) return false;
  if (free > c.g.maxFree + (framed === 'both' ? 1 : 0) && !cutMarked) return false;
  if (has(c.strong)) return true;
  // a word that can only mean "left out", beside a mark, names what was left out in up to three words of its own:
  // "remaining getters and setters are not shown for brevity"
  if (cutMarked) return true;
  if (has(c.weak) && (has(c.mark) || has(c.position) || has(c.nouns))) return true;
  if (has(c.pointer) && has(c.mark)) return true;
  if (words.every((w) => w === 'etc')) return true;
  // "keep all remaining methods", "continue with the existing code" (not "keep the existing behaviour")
  if (has(c.verbs) && has(c.mark) && has(c.nouns) && free === 0) return true;
  // "... other items", not "Keep the existing behaviour: ..." (an instruction that ends in dots)
  if (framed === 'both' || (framed === 'one' && has(c.mark) && !has(c.verbs))) return true;
  // "see the original file for the rest"
  if (words.includes('see') && has(c.listMarks)) return true;
  // only marks, numbers and code nouns: "the other 12 methods", "remaining tests"
  const listed =
    free === 0 &&
    words.every((w) => c.mark.has(w) || c.nouns.has(w) || c.filler.has(w)) &&
    has(c.nouns);
  return listed && has(c.mark) && (has(c.listMarks) || words.includes('n'));
};

/** The general rule's steps, in order. */
const GENERAL_RULES: readonly Rule[] = [
  dotsThenStrong,
  markNounStays,
  restOfCodeKept,
  bracketedCut,
  keepMark,
  restStatus,
  restOfThing,
  othersAlike,
  otherCode,
  statusList,
  keepMarkNoun,
  tooLong,
  framedOrRest,
  subjectStays,
  repeatFor,
  vetoedEarly,
  shortComment,
];

// compiled on first use (2 ms): a change that deletes no line never asks
let matcher: Matcher | undefined;

export function isElisionLine(line: string): boolean {
  return (matcher ??= makeMatcher(data as PhraseData)).isPlaceholder(line);
}

export interface Elision {
  line: number; // 1-based, in the new content
  text: string;
}

/** What `mayOpenComment` needs of the phrase data's comment openers. */
interface LineScreen {
  /** The longest opener's length: the head of a line screen() looks at. */
  maxOpen: number;
  /** The openers by their first character, either case (screen()'s firstChars). */
  byFirst: Map<number, string[]>;
}

let lineScreen: LineScreen | undefined;

function compileLineScreen(d: PhraseData): LineScreen {
  const byFirst = new Map<number, string[]>();
  for (const o of d.comment.open)
    for (const c of new Set([o.charCodeAt(0), o.toUpperCase().charCodeAt(0)]))
      byFirst.set(c, [...(byFirst.get(c) ?? []), o]);
  return { maxOpen: Math.max(...d.comment.open.map((o) => o.length)), byFirst };
}

/**
 * screen()'s "no", read from the character codes (of a string) or bytes (of its
 * UTF-8) between `start` and `end` without making the line a string: false only where screen() answers false (a
 * blank line, or one whose first characters after white space are ASCII and
 * open no comment), and then isComment and mayBeDots answer false too; true
 * where the line must be asked.
 */
function mayOpenComment(
  src: string | Uint8Array,
  start: number,
  end: number,
  { maxOpen, byFirst }: LineScreen,
): boolean {
  let i = start;
  let c = 0;
  for (; i < end; i++) {
    c = codeAt(src, i);
    if (!(c === 32 || (c >= 9 && c <= 13))) break;
  }
  if (i === end) return false;
  // a digit (a numbered BASIC line), dots, or a character screen() hands on
  if ((c >= 48 && c <= 57) || c === 46 || c >= 128) return true;
  const opens = byFirst.get(c);
  if (opens === undefined) return false;
  const head = Math.min(end, i + maxOpen);
  for (let k = i; k < head; k++) if (codeAt(src, k) >= 128) return true;
  // the head in lower case starts with an opener (ASCII: only A-Z change)
  for (const o of opens) {
    let j = 0;
    for (; j < o.length && i + j < head; j++) {
      const x = codeAt(src, i + j);
      if ((x >= 65 && x <= 90 ? x + 32 : x) !== o.charCodeAt(j)) break;
    }
    if (j === o.length) return true;
  }
  return false;
}

/**
 * Could the line between `start` and `end` be a stub statement (STUB)? It starts, after white
 * space, with one of STUB_FIRST's words (read from the code units or bytes, as mayOpenComment;
 * most lines are answered on their first letter).
 */
function mayStub(src: string | Uint8Array, start: number, end: number): boolean {
  let i = start;
  let c = 0;
  for (; i < end; i++) {
    c = codeAt(src, i);
    if (c !== 32 && c !== 9) break;
  }
  const words = c < 128 ? STUB_BY_LETTER[c] : undefined;
  if (words === undefined) return false;
  for (const w of words) {
    if (i + w.length > end) continue;
    let k = 1;
    while (k < w.length && codeAt(src, i + k) === w.charCodeAt(k)) k++;
    if (k === w.length) return true;
  }
  return false;
}

/** Is a character after three dots the start of what they spread (a name, `$`, a bracket, a dot)? */
const spreads = (c: number): boolean =>
  (c >= 97 && c <= 122) ||
  (c >= 65 && c <= 90) ||
  (c >= 48 && c <= 57) ||
  c === 95 ||
  c === 36 ||
  c === 91 ||
  c === 40 ||
  c === 123 ||
  c === 46;

/** Could the line between `start` and `end` stand in as a whole (Matcher.standsIn): its first character after white space? */
function mayBracket(src: string | Uint8Array, start: number, end: number): boolean {
  let i = start;
  let c = 0;
  for (; i < end; i++) {
    c = codeAt(src, i);
    if (c !== 32 && c !== 9) break;
  }
  // `[`, `(`, `-`, or dots: a line in brackets, a list item of dots, dots then words
  return i < end && (c === 91 || c === 40 || c === 45 || c === 46 || c >= 128);
}

/** STUB_FIRST's words by their first letter's code, as an array (a look-up per line). */
const STUB_BY_LETTER: Array<string[] | undefined> = Array.from({ length: 128 }, (_, c) =>
  STUB_FIRST.get(c),
);

/** A string's character code or a byte of its UTF-8 (they agree wherever mayOpenComment says no: ASCII). */
function codeAt(src: string | Uint8Array, k: number): number {
  return typeof src === 'string' ? src.charCodeAt(k) : src[k]!;
}

/** Lines of context that may stand between a placeholder and the lines it replaced (a kept `}` or blank). */
const NEAR = 1;

/**
 * The ALONE rule: a comment on weaker words (Matcher.isLoose) is a placeholder where it is all a
 * hunk adds (with at most ALONE_MAX_ADDED comment lines, blanks and brackets) in place of at least
 * ALONE_MIN removed lines of code. A developer who rewrites code adds code; one who deletes a block
 * and explains it says why (`// moved to utils.ts`); an agent that truncates leaves one line.
 */
const ALONE_MIN = 5;
const ALONE_MAX_ADDED = 3;
/** The ALONE rule allows a line of new code in its hunk for every ALONE_KEEPS lines of code lost. */
const ALONE_KEEPS = 4;

/** How a candidate line was found: a whole comment line, a comment after code, or weaker words (ALONE). */
type Kind = 'line' | 'trailing' | 'alone';

export interface Candidate extends Elision {
  kind: Kind;
  /** The placeholder is a comment after code (its text is the comment, not the line). */
  after?: boolean;
  /**
   * The line stands in as a whole: a comment after only brackets or dots (`}, // 其余不变`), or
   * code that stands for code (`getUser() { ... }`): beside new code it counts as a comment line.
   */
  own?: boolean;
}

/**
 * Placeholder lines in `newText` that stand where code of `oldText` was
 * removed: added in a hunk (at NEAR lines of context) that also removes
 * lines. A placeholder the file already had, or one added where nothing was
 * removed (`// keep the existing behaviour`, a `// ...` in a docs example),
 * is not a truncation. A placeholder after code on the same line counts only
 * when its comment is new (not a line rewritten with its comment kept); a
 * comment on weaker words only where it stands alone (ALONE_MIN). Texts too
 * large to diff in memory fall back to "the file lost lines", which fails
 * closed. Stops at `limit`.
 */
export function findElisions(
  newSide: string | Buffer,
  oldSide: string | (() => string),
  limit = 3,
  path?: string,
): Elision[] {
  const m = (matcher ??= makeMatcher(data as PhraseData));
  let candidates = scan(newSide, m);
  if (candidates.length === 0) return [];
  const newText = typeof newSide === 'string' ? newSide : newSide.toString('utf8');
  const lines = newText.split('\n');
  if (path !== undefined && MARKDOWN.test(path)) candidates = inMarkdown(candidates, lines);
  if (candidates.length === 0) return [];
  // the old text only now: most changes have no candidate, and a large one is decoded on reading
  const oldText = typeof oldSide === 'string' ? oldSide : oldSide();
  const hunks = diffHunks(oldText, newText, NEAR);
  if (hunks === null) return undiffable(candidates, lines, oldText, limit);
  const afterCode = new Set(candidates.filter((c) => c.after).map((c) => c.line));
  const { inPlace, added, alone, mostly, shrinks } = readHunks(hunks, m, afterCode);
  return candidates
    .filter((c) => {
      const h = inPlace.get(c.line);
      if (h === undefined || continuesProse(lines, c.line - 1, m)) return false;
      // after code: a new comment, not one the removed lines had (`f(1) // same as before` -> `f(2) // ...`),
      // in a hunk that loses lines (not a docs example's `pool.request(...)  # Etc, etc` in 200 new lines)
      if (
        c.after &&
        (!added.has(c.line) ||
          !shrinks.has(c.line) ||
          h.lines.some((l) => l[0] === '-' && l.includes(c.text)))
      )
        return false;
      // beside new code: a comment of words that does not describe that code (`# same result as
      // before, vectorised` heads a rewrite)
      return c.kind === 'alone'
        ? alone.has(c.line) ||
            (mostly.has(c.line) &&
              (!c.after || c.own === true) &&
              !BARE_DOTS.test(c.text) &&
              !m.aboutNewCode(c.text))
        : true;
    })
    .slice(0, limit)
    .map(({ line, text }) => ({ line, text }));
}

/** Markdown and MDX, read by their own syntax (inMarkdown). */
const MARKDOWN = /\.(?:md|markdown|mdx)$/i;

/**
 * The candidates of a Markdown file that can be comments: outside its code fences a `#` line is a
 * heading (`#### Choosing Your Own Session Middleware`) and a `*` line a bullet, so there only an
 * HTML or MDX comment (`<!-- rest of the page unchanged -->`) can be a placeholder; inside a fence
 * the lines are code, read as any file's.
 */
function inMarkdown(candidates: readonly Candidate[], lines: readonly string[]): Candidate[] {
  const fenced = new Set<number>();
  let open: string | null = null;
  lines.forEach((l, i) => {
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(l)?.[1];
    if (f !== undefined && (open === null || (f[0] === open[0] && f.length >= open.length))) {
      open = open === null ? f : null;
      return;
    }
    if (open !== null) fenced.add(i + 1);
  });
  return candidates.filter((c) => fenced.has(c.line) || /^(?:<!--|\{\/\*|\[)/.test(c.text));
}

/**
 * What each hunk that removes code says about its new lines: in place (added, or an old line
 * bordering removed ones), added, and added ALONE (all its hunk adds, with at most
 * ALONE_MAX_ADDED comment lines or lines whose comment after code is a candidate, in place of
 * ALONE_MIN or more lines of code), and added in a hunk that loses lines (removes at least as
 * many lines of code as it adds).
 */
function readHunks(
  hunks: readonly Hunk[],
  m: Matcher,
  afterCode: ReadonlySet<number>,
): {
  inPlace: Map<number, Hunk>;
  added: Set<number>;
  alone: Set<number>;
  mostly: Set<number>;
  shrinks: Set<number>;
} {
  const inPlace = new Map<number, Hunk>();
  const added = new Set<number>();
  const alone = new Set<number>();
  const mostly = new Set<number>();
  const shrinks = new Set<number>();
  for (const h of hunks) {
    // code removed: a removed line that is neither blank nor a comment (a comment
    // rewritten around a docs example's `...` removes no code)
    const removedCode = h.lines.filter((l) => l.startsWith('-') && !onlyComment(l.slice(1)));
    if (removedCode.length === 0) continue;
    const mine: number[] = [];
    const lost = removedCode.filter((l) => !TRIVIAL.test(l.slice(1))).length;
    // lines of code and of comment the hunk adds (blanks and brackets aside)
    let code = 0;
    let adds = 0;
    let n = h.newStart;
    h.lines.forEach((l, k) => {
      // an added line in a hunk that removes lines; or a placeholder that was already
      // there and now borders removed lines (added first, then the code cut beside it:
      // two harmless-looking steps that make one truncation)
      const borders =
        l.startsWith(' ') && (h.lines[k - 1]?.startsWith('-') || h.lines[k + 1]?.startsWith('-'));
      if (l.startsWith('+') || borders) inPlace.set(n, h);
      if (l.startsWith('+')) {
        added.add(n);
        mine.push(n);
        const text = l.slice(1);
        if (!TRIVIAL.test(text)) {
          adds++;
          if (!m.isComment(text) && !BARE_DOTS.test(text) && !afterCode.has(n)) code++;
        }
      }
      if (!l.startsWith('-')) n++;
    });
    // ALONE: a few comment lines in place of a run of code; or (`mostly`) beside a line of new code
    // for every ALONE_KEEPS lines of code lost (an agent that rewrites one call beside the cut, not
    // a refactor): there a comment of words counts, not a bare `...` (a stub's body) nor a comment
    // after code
    if (lost >= ALONE_MIN && adds - code <= ALONE_MAX_ADDED && code * ALONE_KEEPS <= lost)
      for (const a of mine) (code === 0 ? alone : mostly).add(a);
    if (lost >= adds) for (const a of mine) shrinks.add(a);
  }
  return { inPlace, added, alone, mostly, shrinks };
}

/** The openers of INLINE_BLOCKS that hold no `/`, `#` or `--` (scan looks for each). */
const INLINE_ONLY = ['(*', '{-', '{*', '@*'];

/** Does one of INLINE_ONLY stand between `start` and `end`? (`next` holds where each stands next, -1 for none.) */
function inlineAhead(
  next: number[],
  start: number,
  end: number,
  find: (s: string, from: number) => number,
): boolean {
  for (let k = 0; k < INLINE_ONLY.length; k++) {
    let at = next[k]!;
    if (at !== -1 && at <= start) next[k] = at = find(INLINE_ONLY[k]!, start + 1);
    if (at !== -1 && at < end) return true;
  }
  return false;
}

/** A line of brackets and punctuation only (`}`, `});`, `]`), or blank: no code of its own. */
const TRIVIAL = /^[\s{}()[\];,]*$/;

/** Every line's look: a whole placeholder line, a placeholder after code, or weaker words (checked by the hunk). */
/** The candidate lines of `text` (exported for its test: `screened` false asks every line). */
export function scan(text: string | Buffer, m: Matcher, screened = true): Candidate[] {
  const screen = (lineScreen ??= compileLineScreen(data as PhraseData));
  const out: Candidate[] = [];
  // a string, or the UTF-8 bytes it is decoded from (a blob as read): "\n", `/`, `#` and `-` are
  // bytes never part of a longer UTF-8 sequence, so a line decoded alone is the same line
  const find = (s: string, from: number) =>
    typeof text === 'string' ? text.indexOf(s, from) : text.indexOf(s, from);
  // where the next `/`, `#` and `--` stand (-1: none is left); a line with none of them past its
  // first character holds no comment after code (trailingOpener looks for nothing else)
  const next = { slash: 0, hash: 0, dashes: 0, dq: 0, sq: 0, dots: 0, ell: 0 };
  // and the openers of INLINE_BLOCKS no tracker above finds (`(*`, `{-`, `{*`, `@*`), looked for
  // only on a line the trackers above pass over
  const blocks = [0, 0, 0, 0];
  // line by line as `text.split('\n')` cuts it, one at a time: a 15 MB text's 255,000 lines
  // were an array held for the whole scan though most files have no candidate
  for (let i = 0, start = 0, end = 0; end < text.length; i++, start = end + 1) {
    end = find('\n', start);
    if (end === -1) end = text.length;
    if ((i & 0xfff) === 0) checkBudget();
    if (next.slash !== -1 && next.slash <= start) next.slash = find('/', start + 1);
    if (next.hash !== -1 && next.hash <= start) next.hash = find('#', start + 1);
    if (next.dashes !== -1 && next.dashes <= start) next.dashes = find('--', start + 1);
    const trails =
      (next.slash !== -1 && next.slash < end) ||
      (next.hash !== -1 && next.hash < end) ||
      (next.dashes !== -1 && next.dashes < end) ||
      inlineAhead(blocks, start, end, find);
    // a stub statement holds a quote (found as the openers are: most lines hold none) and starts
    // with a stub's word (a message in backticks only beside another quote)
    if (next.dq !== -1 && next.dq < start) next.dq = find('"', start);
    if (next.sq !== -1 && next.sq < start) next.sq = find("'", start);
    const stubby =
      ((next.dq !== -1 && next.dq < end) || (next.sq !== -1 && next.sq < end)) &&
      mayStub(text, start, end);
    // an ellipsis in the line (code that stands for code: `getUser() { ... }`), or a line in brackets
    if (next.dots !== -1 && next.dots < start) next.dots = find('...', start);
    if (next.ell !== -1 && next.ell < start) next.ell = find('…', start);
    // (dots with a name or a bracket at once after them are a spread or rest: `...args`, `[...xs]`)
    while (next.dots !== -1 && next.dots < end && spreads(codeAt(text, next.dots + 3)))
      next.dots = find('...', next.dots + 3);
    const standsIn =
      (next.dots !== -1 && next.dots < end) ||
      (next.ell !== -1 && next.ell < end) ||
      mayBracket(text, start, end);
    // no comment after code, and its start opens none: no placeholder, comment, dots or stub either
    if (screened && !trails && !stubby && !standsIn && !mayOpenComment(text, start, end, screen))
      continue;
    const line =
      typeof text === 'string' ? text.slice(start, end) : text.toString('utf8', start, end);
    if (m.isPlaceholder(line)) {
      out.push({ line: i + 1, text: line.trim(), kind: 'line' });
      continue;
    }
    // (a comment line's own `//` is no comment after code: ` *     // ...` quotes code in a doc comment)
    const comment = m.isComment(line);
    // a stub statement's message (`raise NotImplementedError("rest of the code unchanged")`), or the
    // comment after code
    const after = comment
      ? null
      : ((stubby ? m.stub(line) : null) ??
        m.trailing(line) ??
        (standsIn ? m.standsIn(line) : null));
    if (after !== null)
      out.push({
        line: i + 1,
        text: after.text,
        kind: after.loose ? 'alone' : 'trailing',
        after: true,
        ...(after.own === true ? { own: true } : {}),
      });
    else if ((comment || (mayBeDots(line) && BARE_DOTS.test(line))) && m.isLoose(line))
      out.push({ line: i + 1, text: line.trim(), kind: 'alone' });
  }
  return out;
}

/**
 * Texts too large to diff here: a placeholder the old text did not have fails closed, unless the
 * lines around it stood side by side in the old text (it was added where nothing was removed).
 * Each look-up scans the old text, so a text of a million placeholder lines would scan it a
 * million times: a placeholder's text is looked up once, the search stops at `limit`, and each
 * candidate checks the call's budget.
 */
function undiffable(
  candidates: readonly Candidate[],
  lines: readonly string[],
  oldText: string,
  limit: number,
): Elision[] {
  const known = new Map<string, boolean>();
  const out: Elision[] = [];
  for (const c of candidates) {
    if (out.length >= limit) break;
    checkBudget();
    // a comment after code is new when the old text has it nowhere (a line rewritten keeps it)
    const key = `${c.kind}\n${c.text}`;
    let had = known.get(key);
    if (had === undefined)
      known.set(key, (had = c.after ? oldText.includes(c.text) : hasLine(oldText, c.text)));
    if (had) continue;
    const placed =
      c.kind === 'alone'
        ? aloneInOld(lines, c.line - 1, oldText)
        : !insertedBetweenNeighbours(lines, c.line - 1, oldText);
    if (placed) out.push({ line: c.line, text: c.text });
  }
  return out;
}

/** Does `text` hold a line that is `trimmed` with white space around it? (A string search, not a split.) */
function hasLine(text: string, trimmed: string): boolean {
  for (let at = text.indexOf(trimmed); at !== -1; at = text.indexOf(trimmed, at + 1)) {
    const start = text.lastIndexOf('\n', at - 1) + 1;
    let end = text.indexOf('\n', at + trimmed.length);
    if (end === -1) end = text.length;
    if (text.slice(start, at).trim() === '' && text.slice(at + trimmed.length, end).trim() === '')
      return true;
  }
  return false;
}

/**
 * The ALONE rule without hunks (a text too large to diff): line `i`'s nearest non-blank
 * neighbours stood in `oldText` with at least ALONE_MIN lines of code between them and nothing
 * else new beside it (the neighbours are old lines). Looked up by string search: at most 64 places
 * where the line above occurs, 2,000 lines after each; past that it answers no (the whole-line
 * rules still apply).
 */
function aloneInOld(lines: readonly string[], i: number, oldText: string): boolean {
  let a = i - 1;
  while (a >= 0 && lines[a]!.trim() === '') a--;
  let b = i + 1;
  while (b < lines.length && lines[b]!.trim() === '') b++;
  if (a < 0 || b >= lines.length) return false;
  const needle = `${lines[a]!}\n`;
  const below = lines[b]!;
  let at = oldText.startsWith(needle) ? 0 : oldText.indexOf(`\n${needle}`);
  for (let tries = 0; at !== -1 && tries < 64; tries++) {
    let from =
      at === 0 && tries === 0 && oldText.startsWith(needle)
        ? needle.length
        : at + 1 + needle.length;
    let code = 0;
    for (let k = 0; k < 2000 && from < oldText.length; k++) {
      let end = oldText.indexOf('\n', from);
      if (end === -1) end = oldText.length;
      const l = oldText.slice(from, end);
      if (l === below) return code >= ALONE_MIN;
      if (!onlyComment(l) && !TRIVIAL.test(l)) code++;
      from = end + 1;
    }
    at = oldText.indexOf(`\n${needle}`, at + 1);
  }
  return false;
}

/**
 * Was line `i` of `lines` added between two lines that were neighbours in
 * `oldText` (blank lines aside), so that no line was removed where it
 * stands? Its neighbours are the nearest non-blank lines above and below
 * (the start or end of the file where there is none). Looked up by string
 * search, so a 15 MB text costs a few scans; after 64 places where the line
 * above occurs, it answers no (fails closed).
 */
function insertedBetweenNeighbours(lines: readonly string[], i: number, oldText: string): boolean {
  let a = i - 1;
  while (a >= 0 && lines[a]!.trim() === '') a--;
  let b = i + 1;
  while (b < lines.length && lines[b]!.trim() === '') b++;
  const above = a >= 0 ? lines[a]! : null;
  const below = b < lines.length ? lines[b]! : null;
  /** The next non-blank line of oldText from offset `at` (null at the end). */
  const nextLine = (at: number): string | null => {
    while (at < oldText.length) {
      let end = oldText.indexOf('\n', at);
      if (end === -1) end = oldText.length;
      const l = oldText.slice(at, end);
      if (l.trim() !== '') return l;
      at = end + 1;
    }
    return null;
  };
  if (above === null) return below !== null && nextLine(0) === below;
  const needle = `${above}\n`;
  let tries = 0;
  for (
    let at = oldText.startsWith(needle) ? 0 : oldText.indexOf(`\n${needle}`);
    at !== -1 && tries < 64;
    tries++
  ) {
    const start = at === 0 && oldText.startsWith(needle) && tries === 0 ? 0 : at + 1;
    if (nextLine(start + needle.length) === below) return true;
    at = oldText.indexOf(`\n${needle}`, start);
  }
  // the last line, with no newline after it
  return below === null && (oldText === above || oldText.endsWith(`\n${above}`));
}

/**
 * A blank line, or one that can only be a comment: the line-comment markers
 * no code line starts with. Not `'`, `;`, `%` or `"""` (comment markers of
 * some languages, but in others the start of a string in a list, a statement
 * or a docstring: a list of `'name',` lines cut behind `// ... other
 * entries ...` removed code).
 */
function onlyComment(line: string): boolean {
  const t = line.trim();
  return t === '' || /^(?:\/\/|\/\*|\*|#|<!--|\{\/\*|--)/.test(t);
}

/**
 * Is line `i` part of a comment that prose above it began: the line before it
 * is a comment line that says something (not a bare opener such as `/**`, not
 * a placeholder), and this line is an inner line of a block comment (` * ...`)
 * or quotes code (`//   ...`, indented past its marker) or is only dots. A
 * docs example's `...` and a sentence that runs on ("the rest stays
 * unstaged") are that; `// ... existing code ...` standing alone is not.
 */
function continuesProse(lines: readonly string[], i: number, m: Matcher): boolean {
  const prev = lines[i - 1];
  if (prev === undefined || !m.isComment(prev) || m.isPlaceholder(prev)) return false;
  if (/^[\s/*#<!{}\-;%'"]*$/.test(prev)) return false; // a bare opener: `/**`, `//`, `#`
  const t = lines[i]!.trim();
  if (t.startsWith('*') && !t.startsWith('*/')) return true;
  return /^(?:\/\/|#|--|;+)\s{2,}\S/.test(t) || /^(?:\/\/|#|--|;+)\s*(?:\.{2,}|…)\s*$/.test(t);
}

export interface ElisionFigures {
  placeholders: number;
  caught: number;
  /** caught / placeholders */
  recall: number;
  comments: number;
  flagged: number;
  /** flagged / comments */
  falsePositiveRate: number;
  /** Placeholders missed and comments flagged, for the report. */
  missed: string[];
  wronglyFlagged: string[];
}

/** A 30-line body of ordinary code for the measurements below. */
function host(indent: string): string[] {
  return Array.from({ length: 30 }, (_, i) => `${indent}total = total + weight_${i} * value_${i}`);
}

/**
 * The rule measured on a corpus, as an agent's edit would meet it:
 * - each placeholder replaces lines 6..25 of a 30-line body (or, for every
 *   third one, the body's tail: a file truncated at the end); caught when the
 *   rule fires;
 * - each real comment is added where a developer rewrites two lines (the
 *   comment above the new code, in the same hunk as the removed lines); flagged
 *   when the rule fires. (Added where nothing is removed it can never fire.)
 */
export function elisionFigures(
  placeholders: readonly string[],
  comments: readonly string[],
): ElisionFigures {
  const missed: string[] = [];
  for (const [i, p] of placeholders.entries()) {
    const body = host('    ');
    const next =
      i % 3 === 2
        ? [...body.slice(0, 10), `    ${p}`]
        : [...body.slice(0, 5), `    ${p}`, ...body.slice(25)];
    const old = ['def run(values):', ...body, '    return total', ''].join('\n');
    const neu = ['def run(values):', ...next, '    return total', ''].join('\n');
    if (findElisions(neu, old, 1).length === 0) missed.push(p);
  }
  const wronglyFlagged: string[] = [];
  for (const c of comments) {
    const body = host('  ');
    const next = [
      ...body.slice(0, 12),
      `  ${c}`,
      '  total = total + adjust(weight_12, value_12)',
      ...body.slice(14),
    ];
    const old = ['function run() {', ...body, '}', ''].join('\n');
    const neu = ['function run() {', ...next, '}', ''].join('\n');
    if (findElisions(neu, old, 1).length > 0) wronglyFlagged.push(c);
  }
  const caught = placeholders.length - missed.length;
  return {
    placeholders: placeholders.length,
    caught,
    recall: placeholders.length ? caught / placeholders.length : 1,
    comments: comments.length,
    flagged: wronglyFlagged.length,
    falsePositiveRate: comments.length ? wronglyFlagged.length / comments.length : 0,
    missed,
    wronglyFlagged,
  };
}
