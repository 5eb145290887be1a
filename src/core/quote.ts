/**
 * A file name as a person may safely read it. A name is only data: an ESC or
 * CR in it must not move the cursor or redraw what the person sees. Git
 * C-quotes such names ("a\033[2Jb"); so does guard, in every line a person
 * reads (the prompt, check's and write's reports, log).
 *
 * Like git with core.quotePath=false: control characters, DEL, `"` and `\`
 * make a name quoted and are escaped (\a \b \t \n \v \f \r, \ooo for the
 * rest); other characters, non-ASCII letters included, stay as they are.
 * https://git-scm.com/docs/git-config#Documentation/git-config.txt-corequotePath
 */
const NAMED: Record<number, string> = {
  7: '\\a',
  8: '\\b',
  9: '\\t',
  10: '\\n',
  11: '\\v',
  12: '\\f',
  13: '\\r',
  34: '\\"',
  92: '\\\\',
};

// eslint-disable-next-line no-control-regex
const NEEDS_QUOTING = /[\u0000-\u001f\u007f"\\]/;

export function quotePath(name: string): string {
  return NEEDS_QUOTING.test(name) ? cQuote(name) : name;
}

/**
 * Always quoted, as git's quote_c_style writes a name: what fast-import reads
 * in a path and `guard ci` reads back from a trailer (cUnquote, below).
 */
export function cQuote(name: string): string {
  let out = '"';
  for (const ch of name) {
    const code = ch.codePointAt(0)!;
    if (NAMED[code] !== undefined) out += NAMED[code];
    else if (code < 0x20 || code === 0x7f) out += '\\' + code.toString(8).padStart(3, '0');
    else out += ch;
  }
  return out + '"';
}

/** `old -> new` for a rename, each quoted. */
export function displayName(f: { path: string; oldPath?: string }): string {
  return f.oldPath !== undefined
    ? `${quotePath(f.oldPath)} -> ${quotePath(f.path)}`
    : quotePath(f.path);
}

/** "1 line", "2 lines": the noun in the singular for exactly one. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

const C_ESCAPES: Record<string, number> = {
  a: 7,
  b: 8,
  t: 9,
  n: 10,
  v: 11,
  f: 12,
  r: 13,
  '"': 34,
  '\\': 92,
};

/**
 * Undo git's quote_c_style: "..." with \a \b \t \n \v \f \r \" \\ and \ooo
 * octal bytes (UTF-8 sequences come out as octal when core.quotePath is on).
 * Null when the text is not a well-formed quoted string.
 */
export function cUnquote(s: string): string | null {
  if (s.length < 2 || !s.startsWith('"') || !s.endsWith('"')) return null;
  const bytes: number[] = [];
  const body = s.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch === '"') return null;
    if (ch !== '\\') {
      bytes.push(...Buffer.from(ch, 'utf8'));
      continue;
    }
    const next = body[i + 1];
    if (next === undefined) return null;
    if (next in C_ESCAPES) {
      bytes.push(C_ESCAPES[next]!);
      i++;
    } else if (/^[0-3][0-7]{2}$/.test(body.slice(i + 1, i + 4))) {
      bytes.push(parseInt(body.slice(i + 1, i + 4), 8));
      i += 3;
    } else return null;
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * A word a person can paste into a POSIX shell (sh, bash, zsh) and get back
 * exactly `word`: plain names as they are, others in single quotes; a name
 * with a control character in bash's $'...' (never raw on the terminal, and
 * it still pastes as the same bytes). A leading dash stays data after `--`.
 */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_./@%+=:,-]+$/.test(word)) return word;
  // eslint-disable-next-line no-control-regex
  if (!/[\u0000-\u001f\u007f]/.test(word)) return `'${word.replace(/'/g, `'\\''`)}'`;
  let out = "$'";
  for (const ch of word) {
    const code = ch.codePointAt(0)!;
    if (ch === "'" || ch === '\\') out += '\\' + ch;
    else if (code < 0x20 || code === 0x7f) out += '\\' + code.toString(8).padStart(3, '0');
    else out += ch;
  }
  return out + "'";
}
