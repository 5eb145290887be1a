/**
 * Elision placeholders: the comment an agent writes where it meant "the rest
 * stays as it was" and so truncates a file. The phrases are data
 * (elision-phrases.json); this module normalises a comment line and matches
 * it against them, and finds the placeholders that stand where code was
 * removed. Measured against test/corpus/elision/ (elisionFigures below,
 * test/unit/elision-corpus.test.ts, npm run bench). Rule id: `elision`.
 */
import data from './elision-phrases.json' with { type: 'json' };
import { diffHunks } from './hunks.js';

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
  foreign: { mark: string[]; strong: string[]; pairs: string[]; substrings: string[] };
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
    if (alt.every((word, k) => words[w + k] === word) && matches(tokens, words, t + 1, w + alt.length)) return true;
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
}

const ASCII = /^[\x00-\x7f]*$/;

/** Dots before and after a comment's words (`... imports ...`), on one side, or none. */
type Framed = 'both' | 'one' | 'none';

/** A matcher's data, compiled once: phrases as words, openers longest first, the general rule. */
interface Compiled {
  d: PhraseData;
  phrases: Array<{ tokens: PhraseToken[]; first: Set<string> | null }>;
  opens: string[];
  closes: string[];
  general: GeneralTest | null;
  dotsRe: RegExp;
  /** The longest opener's length. */
  maxOpen: number;
  /** The first characters any opener can start with, either case: most code lines start with none. */
  firstChars: Set<number>;
}

export function makeMatcher(d: PhraseData): Matcher {
  const c = compileMatcher(d);
  return {
    isPlaceholder: (line) => isPlaceholder(c, line),
    isComment(line: string): boolean {
      const t = line.trim().toLowerCase();
      return t.length > 0 && c.opens.some((o) => t.startsWith(o));
    },
  };
}

function compileMatcher(d: PhraseData): Compiled {
  const phrases = d.phrases.map((p) => {
    const tokens = compilePhrase(p, d.slots);
    return { tokens, first: firstWords(tokens) };
  });
  const opens = [...d.comment.open].sort((a, b) => b.length - a.length);
  const closes = [...d.comment.close].sort((a, b) => b.length - a.length);
  const general = d.general ? generalTest(d.general, d.slots.CODE ?? []) : null;
  const dotsRe = new RegExp(d.dots.map(escape).sort((a, b) => b.length - a.length).join('|'), 'g');
  const maxOpen = Math.max(...opens.map((o) => o.length));
  const firstChars = new Set(opens.flatMap((o) => [o.charCodeAt(0), o.toUpperCase().charCodeAt(0)]));
  return { d, phrases, opens, closes, general, dotsRe, maxOpen, firstChars };
}

function isPlaceholder(c: Compiled, line: string): boolean {
  let i = 0;
  let c0 = line.charCodeAt(0);
  for (; c0 === 32 || (c0 >= 9 && c0 <= 13); c0 = line.charCodeAt(++i));
  // a numbered BASIC line: `30 REM ... rest of program ...`
  if (c0 >= 48 && c0 <= 57) {
    const basic = /^\s*\d+\s+(rem\s.*)$/i.exec(line);
    return basic !== null && isPlaceholder(c, basic[1]!);
  }
  // Every line of a file comes through here (findElisions) and most are
  // code: a line whose first characters after ASCII white space are plain
  // ASCII and open no comment cannot become a comment line through the
  // normalising in commentText (it only drops or replaces non-ASCII
  // characters), so it is answered at once.
  if (c0 < 128 && !c.firstChars.has(c0)) return false;
  const head = line.slice(i, i + c.maxOpen);
  if (ASCII.test(head) && !c.opens.some((o) => head.toLowerCase().startsWith(o))) return false;
  const comment = commentText(c, line);
  return comment !== null && isPlaceholderComment(c, comment);
}

/** The words of a comment line, between its opener and its closer; null when the line is no comment. */
function commentText(c: Compiled, line: string): string | null {
  // zero-width and soft characters hide nothing from a reader, so they hide nothing here
  // NFKC: fullwidth and other compatibility forms (．．． ｅｘｉｓｔｉｎｇ) read as what they look like
  let t = line.normalize('NFKC').replace(/[\u200B-\u200D\u2060\uFEFF\u00AD]/g, '').replace(/[\u00A0\u2000-\u200A\u202F\u3000]/g, ' ').trim();
  if (t.length < 2 || t.length > 200) return null;
  const lower = t.toLowerCase();
  const open = c.opens.find((o) => lower.startsWith(o));
  if (open === undefined) return null; // not a comment line
  t = t.slice(open.length);
  // a doubled one-character opener: `;; ... rest of input handling`, `%% ...`, `## ...`
  while (open.length === 1 && t.startsWith(open)) t = t.slice(1);
  // a quote that closes and code follows is a string in a list, not a comment: `'not modified' : 304,`
  if ((open === "'" || open === '"') && /^[^']*'\s*(?:[:,)\]=+;.]|$)/.test(t) && !/^[^']*\w'\w/.test(t)) return null;
  // a block comment's inner line indented past its `*` quotes code: a docs example (` *     // ...`)
  if (open === '*' && /^(?: {2,}|\t)/.test(t)) return null;
  const close = c.closes.find((x) => t.trimEnd().endsWith(x));
  return close !== undefined ? t.trimEnd().slice(0, -close.length) : t;
}

/** Is the text of a comment a placeholder: its frame of dots or brackets, then its words? */
function isPlaceholderComment(c: Compiled, comment: string): boolean {
  const { d, general } = c;
  const bare = comment.trim();
  // a quotation: a comment that quotes a placeholder (`// "see the original file for the rest"`) talks about one
  if (/^(["`“‘]).*["`”’][.,:;)]?$/.test(bare) && bare.length > 2) return false;
  const starts = d.dots.some((x) => bare.startsWith(x)) || /^[([]\s*(?:\.\.|…)/.test(bare);
  const ends = d.dots.some((x) => bare.endsWith(x)) || /(?:\.\.|…)\s*[)\]]$/.test(bare);
  const framed: Framed = starts && ends ? 'both' : starts || ends ? 'one' : 'none';
  // the whole comment in brackets: "(existing interfaces)", "[rest omitted]"
  const wrapped = /^[([].*[)\]]$/.test(bare);
  // dots, then only a remark in brackets: "... (Image collection code)", "… (similar to Option 1)"
  if (/^(?:\.{2,}|…|⋯)\s*\([^()]*\w[^()]*\)$/.test(bare) && bare.split(/\s+/).length <= (d.general?.dotsMaxWords ?? 18)) return true;
  // a remark in brackets that is a placeholder itself: "TABS LOGIC (Rest of your existing code remains unchanged)"
  // (the remark begins with a mark: "(same file system)", "(left as it is)" explain the words before them)
  const inner = /\((?:the |all )?(?:rest|remaining|existing|other|previous|original)\b([^()]*)\)/i.exec(bare)?.[0];
  if (inner !== undefined && !wrapped && isPlaceholder(c, `// ${inner.slice(1, -1)}`)) return true;
  const { text: t, dotted } = plainWords(c, comment);
  if (t === '') return dotted;
  const words = t.split(' ');
  if (words.length > 14) return general !== null && starts && general(words, framed, { starts, wrapped, text: t });
  // dots, then a few words and nothing after: what the left-out code did (`// ... execute and return results`)
  if (framed === 'one' && starts && words.length <= 5 && !wrapped) return true;
  if (c.phrases.some((p) => (p.first === null || p.first.has(words[0]!)) && matches(p.tokens, words))) return true;
  return general !== null && general(words, framed, { starts, wrapped, text: t });
}

/** A comment as lower-case words and `n` for numbers, space-separated; `dotted` when it held dots. */
function plainWords(c: Compiled, comment: string): { text: string; dotted: boolean } {
  let dotted = false;
  const text = comment
    .toLowerCase()
    .replace(c.dotsRe, () => {
      dotted = true;
      return ' ';
    })
    .replace(/\d[\d,]*/g, ' n ')
    .replace(/[^\p{L}\p{M}\p{N}\s]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return { text, dotted };
}

interface Shape {
  /** Dots before the first word. */
  starts: boolean;
  /** The whole comment in brackets. */
  wrapped: boolean;
  /** The normalised comment, for the substrings of scripts written without spaces. */
  text: string;
}

type GeneralTest = (words: string[], framed: Framed, shape: Shape) => boolean;

/** The general rule's word lists as sets, and the pairs of words it reads as one. */
interface Vocabulary {
  g: GeneralData;
  /** Pairs by their first word (most words start none), the longest first: "same as before" before "same as". */
  pairs: Map<string, Array<{ words: string[]; joined: string }>>;
  strong: Set<string>;
  weak: Set<string>;
  pointer: Set<string>;
  mark: Set<string>;
  listMarks: Set<string>;
  position: Set<string>;
  veto: Set<string>;
  nouns: Set<string>;
  filler: Set<string>;
  verbs: Set<string>;
  /** The strong words that can only mean "left out here" (not "unchanged", which a comment on code says too). */
  stays: Set<string>;
  unchanged: Set<string>;
  cut: Set<string>;
  known: Set<string>;
  /** The veto words no pair holds (and not "see"): they veto before joining. */
  earlyVeto: Set<string>;
}

function vocabulary(g: GeneralData, code: readonly string[]): Vocabulary {
  const pairs = new Map<string, Array<{ words: string[]; joined: string }>>();
  for (const p of [...g.pairs, ...g.foreign.pairs]) {
    const words = p.split(' ');
    pairs.set(words[0]!, [...(pairs.get(words[0]!) ?? []), { words, joined: p.replace(/ /g, '_') }]);
  }
  for (const list of pairs.values()) list.sort((a, b) => b.words.length - a.words.length);
  const strong = new Set([...g.strong, ...g.foreign.strong]);
  const weak = new Set(g.weak);
  const pointer = new Set(g.pointer);
  const mark = new Set([...g.mark, ...g.foreign.mark]);
  const position = new Set(g.position);
  const nouns = new Set(code.flatMap((c) => c.split(' ')));
  const filler = new Set(g.filler);
  const verbs = new Set(g.verbs);
  const inPairs = new Set(g.pairs.flatMap((p) => p.split(' ')));
  return {
    g,
    pairs,
    strong,
    weak,
    pointer,
    mark,
    listMarks: new Set(g.listMarks),
    position,
    veto: new Set(g.veto),
    nouns,
    filler,
    verbs,
    stays: new Set(['remain', 'remains', 'stay', 'stays', 'kept']),
    unchanged: new Set(['same', 'same_as_before', 'unchanged', 'untouched', 'as_before', 'as_is', 'as_they_are', 'as_it_was', 'as_they_were', 'same_as', 'intact']),
    cut: new Set(['omitted', 'elided', 'snipped', 'truncated', 'abbreviated', 'not_shown', 'for_brevity', 'left_out']),
    known: new Set([...strong, ...weak, ...pointer, ...mark, ...position, ...filler, ...nouns, ...verbs]),
    earlyVeto: new Set(g.veto.filter((w) => w !== 'see' && !inPairs.has(w))),
  };
}

/** The words with each pair of the vocabulary joined into one word (`same_as_before`). */
function joinPairs(v: Vocabulary, input: readonly string[]): string[] {
  const words: string[] = [];
  for (let i = 0; i < input.length; ) {
    const pair = v.pairs.get(input[i]!)?.find((p) => p.words.every((w, k) => input[i + k] === w));
    words.push(pair ? pair.joined : input[i]!);
    i += pair ? pair.words.length : 1;
  }
  return words;
}

/**
 * The general rule of the phrase data (its `general.about` says it in words):
 * a short comment that says the code is elsewhere, left out, unchanged or
 * truncated, whatever the noun it names.
 */
function generalTest(g: GeneralData, code: readonly string[]): GeneralTest {
  const v = vocabulary(g, code);
  return (input, framed, shape) => {
    if (saysSoEarly(v, input, shape)) return true;
    if (input.length > g.dotsMaxWords) return false;
    if ((shape.starts || shape.wrapped || input[0] === 'rest' || input[1] === 'rest') && framedSaysSo(v, input, framed, shape)) return true;
    if (endsStayingAsItWas(v, input)) return true;
    // "Repeat for other job cards", "same for the other handlers"
    if ((input[0] === 'repeat' || input[0] === 'same' || input[0] === 'similarly') && input[1] === 'for' && input.length <= 8 && v.mark.has(input[2] === 'the' || input[2] === 'all' ? input[3]! : input[2]!)) return true;
    return wordsSaySo(v, input, framed);
  };
}

/** The opening words alone say it, however long the comment runs on after them. */
function saysSoEarly(v: Vocabulary, input: string[], shape: Shape): boolean {
  const { strong, weak, mark, nouns, verbs, earlyVeto } = v;
  // dots, then a strong word early, however long the sentence runs on after it:
  // "... Code continues mostly unchanged, just ensure this block is preserved if ..."
  if (shape.starts && joinPairs(v, input.slice(0, 8)).slice(0, 5).some((w) => strong.has(w))) return true;
  // a mark and a code noun, then at once a word that says it stays, whatever follows:
  // "Existing code remains the same except booting the server", "other handlers unchanged, see below"
  const lead = joinPairs(v, input.slice(0, 7)).filter((w) => w !== 'the' && w !== 'all');
  if (lead.length >= 3 && mark.has(lead[0]!) && nouns.has(lead[1]!) && (strong.has(lead[2]!) || (weak.has(lead[2]!) && (weak.has(lead[3]!) || strong.has(lead[3]!))))) return true;
  // a verb of keeping, a mark and at most one word more, and nothing after: "Keep existing variables:"
  if (input.length <= 3 && verbs.has(input[0]!) && mark.has(input[1]!) && !input.slice(2).some((w) => earlyVeto.has(w))) return true;
  // "rest unchanged helpers + new helper stubs", "rest same as before"
  return input[0] === 'rest' && (strong.has(input[1]!) || strong.has(joinPairs(v, input.slice(1, 4))[0]!) || weak.has(input[1]!));
}

/** A comment after dots, in brackets, or about "the rest". */
function framedSaysSo(v: Vocabulary, input: string[], framed: Framed, shape: Shape): boolean {
  const { strong, weak, mark, filler, verbs, veto } = v;
  const joined = joinPairs(v, input);
  const lead = joined.find((w) => !filler.has(w));
  const strongHere = joined.some((w) => strong.has(w)) || v.g.foreign.substrings.some((x) => shape.text.includes(x));
  // "... rest of visual updates", "... existing tree-walk renderer unchanged ...", "... (hàm này giữ nguyên)"
  if (shape.starts && ((lead !== undefined && mark.has(lead)) || strongHere)) return true;
  // after the dots a verb of keeping, then a mark or "same": "... keep existing code (loadX function)", "... same parameters"
  const afterVerb = lead !== undefined && verbs.has(lead) ? joined.slice(joined.indexOf(lead) + 1).find((w) => !filler.has(w)) : lead;
  if (shape.starts && afterVerb !== undefined && (mark.has(afterVerb) || afterVerb === 'same' || afterVerb === 'similar')) return true;
  // "(existing interfaces)"
  if (shape.wrapped && lead !== undefined && mark.has(lead) && joined.length <= 12) return true;
  // "Rest of the file remains exactly the same as in the previous document" (not "the rest of the loop is the slow path")
  const at = joined.indexOf('rest');
  // ("will" is no veto before a weak word: "rest of the code will remain same")
  const vetoedHere = joined.some((w, k) => veto.has(w) && !(w === 'will' && weak.has(joined[k + 1]!)));
  if ((at === 0 || (at === 1 && joined[0] === 'the')) && joined[at + 1] === 'of' && !vetoedHere && (strongHere || joined.some((w) => weak.has(w)))) return true;
  // "... (error messages) ..."
  return framed === 'both' && joined.length <= 4;
}

/**
 * A subject of a few words, then "stays as it was" closing the comment:
 * "Products, Rentals, Payments tabs remain the same as before", "handlers stay unchanged"
 */
function endsStayingAsItWas(v: Vocabulary, input: string[]): boolean {
  if (input.length > 12 || input.some((w) => v.earlyVeto.has(w))) return false;
  const joined = joinPairs(v, input);
  const k = joined.findIndex((w) => v.stays.has(w));
  const rest = k > 0 ? joined.slice(k + 1).filter((w) => w !== 'the' && w !== 'exactly') : [];
  return k <= 5 && rest.length > 0 && rest.length <= 2 && rest.every((w) => v.unchanged.has(w) || w === 'before') && (rest.length === 1 ? rest[0] !== 'same' : rest[1] === 'as_before' || rest[1] === 'before');
}

/** A short comment judged by its words alone: which kinds it holds, and how many words no list knows. */
function wordsSaySo(v: Vocabulary, input: string[], framed: Framed): boolean {
  const { g, strong, weak, pointer, mark, listMarks, position, veto, nouns, filler, verbs, cut, known, earlyVeto } = v;
  // a pair joins two or three words into one: past twice maxWords, nothing can come under it
  if (input.length > 2 * g.maxWords) return false;
  // a veto word no pair holds vetoes before joining too ("see" is judged below)
  if (input.some((w) => earlyVeto.has(w))) return false;
  const words = joinPairs(v, input);
  if (words.length > g.maxWords) return false;
  // "see" explains, except before a mark: "see the original file for the rest"
  const vetoed = (w: string, i: number) => veto.has(w) && !(w === 'see' && words.slice(i + 1, i + 3).some((x) => mark.has(x) || position.has(x)));
  if (words.some(vetoed)) return false;
  const has = (set: Set<string>) => words.some((w) => set.has(w));
  const free = words.filter((w) => !known.has(w) && w !== 'see').length;
  if (free > g.maxFree + 2) return false;
  if (free > g.maxFree + (framed === 'both' ? 1 : 0) && !(has(mark) && words.some((w) => cut.has(w)))) return false;
  if (has(strong)) return true;
  // a word that can only mean "left out", beside a mark, names what was left out in up to three words of its own:
  // "remaining getters and setters are not shown for brevity"
  if (free <= g.maxFree + 2 && has(mark) && words.some((w) => cut.has(w))) return true;
  if (has(weak) && (has(mark) || has(position) || has(nouns))) return true;
  if (has(pointer) && has(mark)) return true;
  if (words.every((w) => w === 'etc')) return true;
  // "keep all remaining methods", "continue with the existing code" (not "keep the existing behaviour")
  if (has(verbs) && has(mark) && has(nouns) && free === 0) return true;
  // "... other items", not "Keep the existing behaviour: ..." (an instruction that ends in dots)
  if (framed === 'both' || (framed === 'one' && has(mark) && !has(verbs))) return true;
  // "see the original file for the rest"
  if (words.includes('see') && has(listMarks)) return true;
  // only marks, numbers and code nouns: "the other 12 methods", "remaining tests"
  const listed = free === 0 && words.every((w) => mark.has(w) || nouns.has(w) || filler.has(w)) && has(nouns);
  return listed && has(mark) && (has(listMarks) || words.includes('n'));
}

// compiled on first use (2 ms): a change that deletes no line never asks
let matcher: Matcher | undefined;

export function isElisionLine(line: string): boolean {
  return (matcher ??= makeMatcher(data as PhraseData)).isPlaceholder(line);
}

export interface Elision {
  line: number; // 1-based, in the new content
  text: string;
}

/** Lines of context that may stand between a placeholder and the lines it replaced (a kept `}` or blank). */
const NEAR = 1;

/**
 * Placeholder lines in `newText` that stand where code of `oldText` was
 * removed: added in a hunk (at NEAR lines of context) that also removes
 * lines. A placeholder the file already had, or one added where nothing was
 * removed (`// keep the existing behaviour`, a `// ...` in a docs example),
 * is not a truncation. Texts too large to diff in memory fall back to "the
 * file lost lines", which fails closed. Stops at `limit`.
 */
export function findElisions(newText: string, oldText: string, limit = 3): Elision[] {
  const candidates: Elision[] = [];
  const lines = newText.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (isElisionLine(line)) candidates.push({ line: i + 1, text: line.trim() });
  }
  if (candidates.length === 0) return [];
  const hunks = diffHunks(oldText, newText, NEAR);
  if (hunks === null) {
    // too large to diff here: a placeholder the old text did not have fails closed, unless the
    // lines around it stood side by side in the old text (it was added where nothing was removed)
    return candidates.filter((c) => !hasLine(oldText, c.text) && !insertedBetweenNeighbours(lines, c.line - 1, oldText)).slice(0, limit);
  }
  const m = (matcher ??= makeMatcher(data as PhraseData));
  const inPlace = new Set<number>();
  for (const h of hunks) {
    // code removed: a removed line that is neither blank nor a comment (a comment
    // rewritten around a docs example's `...` removes no code)
    if (!h.lines.some((l) => l.startsWith('-') && !onlyComment(l.slice(1)))) continue;
    let n = h.newStart;
    h.lines.forEach((l, k) => {
      // an added line in a hunk that removes lines; or a placeholder that was already
      // there and now borders removed lines (added first, then the code cut beside it:
      // two harmless-looking steps that make one truncation)
      const borders = l.startsWith(' ') && (h.lines[k - 1]?.startsWith('-') || h.lines[k + 1]?.startsWith('-'));
      if (l.startsWith('+') || borders) inPlace.add(n);
      if (!l.startsWith('-')) n++;
    });
  }
  return candidates.filter((c) => inPlace.has(c.line) && !continuesProse(lines, c.line - 1, m)).slice(0, limit);
}

/** Does `text` hold a line that is `trimmed` with white space around it? (A string search, not a split.) */
function hasLine(text: string, trimmed: string): boolean {
  for (let at = text.indexOf(trimmed); at !== -1; at = text.indexOf(trimmed, at + 1)) {
    const start = text.lastIndexOf('\n', at - 1) + 1;
    let end = text.indexOf('\n', at + trimmed.length);
    if (end === -1) end = text.length;
    if (text.slice(start, at).trim() === '' && text.slice(at + trimmed.length, end).trim() === '') return true;
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
  for (let at = oldText.startsWith(needle) ? 0 : oldText.indexOf(`\n${needle}`); at !== -1 && tries < 64; tries++) {
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
export function elisionFigures(placeholders: readonly string[], comments: readonly string[]): ElisionFigures {
  const missed: string[] = [];
  for (const [i, p] of placeholders.entries()) {
    const body = host('    ');
    const next = i % 3 === 2 ? [...body.slice(0, 10), `    ${p}`] : [...body.slice(0, 5), `    ${p}`, ...body.slice(25)];
    const old = ['def run(values):', ...body, '    return total', ''].join('\n');
    const neu = ['def run(values):', ...next, '    return total', ''].join('\n');
    if (findElisions(neu, old, 1).length === 0) missed.push(p);
  }
  const wronglyFlagged: string[] = [];
  for (const c of comments) {
    const body = host('  ');
    const next = [...body.slice(0, 12), `  ${c}`, '  total = total + adjust(weight_12, value_12)', ...body.slice(14)];
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
