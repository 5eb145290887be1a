import path from 'node:path';

/**
 * Whether a shell command leaves something running after the shell returns (holes7): a harness
 * whose payload has no background flag (Codex's `Bash`, Copilot's `bash`, Cursor, the row
 * harnesses) sends the after event as soon as the shell returns, and a command detached with `&`
 * goes on changing the work tree after it. Such a call is treated as one the harness ran in the
 * background (flows/hook/hook.ts): its checkpoint stays open, later calls of the session tell what
 * it took, and `guard rewind` compares it with the tree as it is then.
 *
 * Read from the command's text as the shell splits it (quotes, backslashes, comments): a `&`
 * that is a control operator (not `&&`, not a redirection's `>&`, `&>`, `<&`, nor `|&`), anywhere,
 * a subshell or a command substitution included; or a word that detaches what it runs
 * (`setsid`, `disown`, `daemonize`, `start-stop-daemon`; `screen -d`, `tmux ... -d`); a script
 * handed to a shell (`bash -c '...'`) or to `eval` is read the same way. A command built at run
 * time (`eval "$x"`, `bash -c "$cmd"` with `&` in a variable) is not read: its
 * after event compares what it did by then, as before. Reading too much costs one checkpoint per
 * later call of the session for 30 minutes, never a refusal.
 */
export function detaches(command: string): boolean {
  if (depth >= MAX_DEPTH) return true;
  depth++;
  try {
    return detachesText(command);
  } finally {
    depth--;
  }
}

function detachesText(command: string): boolean {
  const { amp, commands } = scan(command.replace(/\\\n/g, ''));
  if (amp) return true;
  // a shell reading its script from its input (`echo '... &' | sh`, `sh <<< '...'`): every
  // word of the line that could be a script is read as one (adv10)
  const fed = commands.some((words) => shellFed(words, command));
  if (fed && commands.flat().some((w) => /[\s&]/.test(w) && w !== command && detaches(w)))
    return true;
  return commands.some(detachedWords);
}

/** Whether one simple command's words detach what it runs. */
function detachedWords(words: string[]): boolean {
  const at = nameAt(words);
  const name = at < 0 ? '' : path.basename(words[at]!);
  const rest = words.slice(at + 1);
  if (DETACHERS.has(name)) return true;
  // `sudo -b`: sudo runs it in the background (adv10)
  const before = words.slice(0, Math.max(at, 0));
  if (before.includes('-b') && before.some((w) => path.basename(w) === 'sudo')) return true;
  // a container started detached (`docker run -d -v $PWD:/w ...`), a cron table installed
  if (CONTAINERS.has(name) && rest.some((x) => /^(-[a-zA-Z]*d[a-zA-Z]*|--detach)$/.test(x)))
    return true;
  if (name === 'crontab' && !rest.some((x) => /^-[lr]$/.test(x))) return true;
  // `find -exec CMD ...`: the command it runs
  const exec = name === 'find' ? rest.findIndex((x) => /^-(exec|execdir|ok|okdir)$/.test(x)) : -1;
  if (exec >= 0 && detachedWords(rest.slice(exec + 1))) return true;
  // a script handed to a shell (`script`, `su`, `flock` too), to eval or to trap is read as one
  const c = SHELLS.has(name) || SCRIPTERS.has(name) ? rest.findIndex((x) => /^-\w*c$/.test(x)) : -1;
  if (c >= 0 && rest[c + 1] !== undefined && detaches(rest[c + 1]!)) return true;
  if (
    (name === 'eval' || name === 'trap') &&
    detaches(name === 'eval' ? rest.join(' ') : (rest[0] ?? ''))
  )
    return true;
  if (name === 'screen' && rest.some((x) => /^-([a-zA-Z]*d|X$)/.test(x))) return true;
  // a tmux window started detached, or keys or a command sent to a tmux server (adv10)
  if (
    name === 'tmux' &&
    rest.some((x) => x === '-d' || /^(send-keys|send|run-shell|run|respawn-\w+)$/.test(x))
  )
    return true;
  // systemd-run starts a unit and returns, unless told to wait or run in a scope
  if (name === 'systemd-run')
    return !rest.some((x) => /^(--scope|--wait|-P|--pipe|--pty|-t)$/.test(x));
  return false;
}

/**
 * Where the command's name is among its words: past assignments and the words that run what
 * follows them (`sudo`, `timeout`, `nice`, ...), and those words' options (`sudo -u me`,
 * `nice -n 5`, `timeout -s KILL 10`, adv10).
 */
function nameAt(words: string[]): number {
  let prefixed = false;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (/^\w+=/.test(w)) continue;
    if (PREFIXES.has(path.basename(w))) {
      // `command -v nohup` looks a name up, runs nothing
      if (w === 'command' && /^-[vV]$/.test(words[i + 1] ?? '')) return -1;
      prefixed = true;
      continue;
    }
    if (!prefixed || !(w.startsWith('-') || /^[\d.]+[smhd]?$/.test(w))) return i;
    // an option's value (`-u me`), unless it is a command (`env -i bash`)
    const next = words[i + 1];
    if (VALUED.test(w) && next !== undefined && !KNOWN.has(path.basename(next))) i++;
  }
  return -1;
}

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'ash', 'busybox']);
const SCRIPTERS = new Set(['script', 'su', 'runuser', 'flock']);
const CONTAINERS = new Set(['docker', 'podman', 'nerdctl']);
// coproc, at, batch: bash or atd runs the command after the shell returns (adv10). Not nohup:
// it runs its command in the foreground, deaf to SIGHUP; `nohup cmd &` is detached by its `&`
// (holes8: `nohup make` read as detached got a whole-tree checkpoint per call for 30 minutes)
const DETACHERS = new Set(
  ['setsid', 'disown', 'daemonize', 'start-stop-daemon'].concat(['coproc', 'at', 'batch']),
);
const PREFIXES = new Set(
  ['sudo', 'exec', 'env', 'time', 'nice', 'command', 'builtin', 'then', 'do', 'else', '!'].concat([
    'ionice',
    'stdbuf',
    'timeout',
    'xargs',
    'nohup',
  ]),
);
/** Short options of the prefixes that take a value in the next word. */
const VALUED = /^-[ugnckILPsoeCpaUhiEr]$/;
const KNOWN = new Set([...SHELLS, ...DETACHERS, ...PREFIXES, 'eval', 'trap', 'screen', 'tmux']);

type Scan = { amp: boolean; commands: string[][]; targets: string[] };
/** A here-document whose text starts at the next line: read as code (a shell's), text, or not. */
type Doc = { delim: string; dash: boolean; read: 'code' | 'text' | 'skip' };

/**
 * The command's unquoted words (quotes removed) and whether a background `&` is among its
 * operators. Single quotes and `$'...'` hold everything; inside double quotes only a command
 * substitution (`$(...)`, backticks) is code again, read as such (a stack of where the reading is).
 * A here-document's text is read apart (adv10: a `'` in it swallowed the rest of the command);
 * `body` reads such a text, where only substitutions are code.
 */
function scan(s: string, body = false): Scan {
  // a text nested past any command's (`cat <( cat <( ...` 20,000 deep: a stack overflow, and
  // each level read again): read as detached, which costs a checkpoint per call, not a refusal
  if (depth >= MAX_DEPTH) return { amp: true, commands: [], targets: [] };
  depth++;
  try {
    return scanText(s, body);
  } finally {
    depth--;
  }
}
let depth = 0;
const MAX_DEPTH = 64;

function scanText(s: string, body: boolean): Scan {
  const out: Scan = { amp: false, commands: [[]], targets: [] };
  let word = '';
  // the next word is what an output redirection writes to (`> f`, `>> f`, `>| f`, `&> f`)
  let redirected = false;
  const end = () => {
    if (word) out.commands[out.commands.length - 1]!.push(word);
    if (word && redirected) out.targets.push(word);
    if (word) redirected = false;
    word = '';
  };
  // a simple command ends (`;`, `&`, `|`, a subshell's or substitution's edge, a new line)
  const cut = () => {
    end();
    redirected = false;
    out.commands.push([]);
  };
  const target = (on: boolean) => {
    redirected = on;
  };
  // '"': inside double quotes (`h`: a here-document's text); '(' and '`': a substitution (code)
  const at: Array<'"' | 'h' | '(' | '`'> = body ? ['h'] : [];
  const docs: Doc[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    const top = at[at.length - 1];
    if (c === '\\') {
      word += s[i + 1] ?? '';
      i++;
      continue;
    }
    const arith = c === '$' && s[i + 1] === '(' && s[i + 2] === '(' ? closeOf(s, i + 1, true) : -1;
    if (arith >= 0 || (c === '$' && s[i + 1] === '{' && top !== '"' && top !== 'h')) {
      // `$((a & b))`, `${x//&/y}`: a word, not operators
      const k = arith >= 0 ? arith : closeOf(s, i + 1, false);
      word += s.slice(i, k + 1);
      i = k;
      continue;
    }
    if (top === '"' || top === 'h') {
      if (c === '"' && top === '"') at.pop();
      else if (c === '$' && s[i + 1] === '(') {
        at.push('(');
        cut();
        i++;
      } else if (c === '`') {
        at.push('`');
        cut();
      } else word += c;
      continue;
    }
    if ((top === '(' && c === ')') || (top === '`' && c === '`')) {
      at.pop();
      cut();
      continue;
    }
    const quoted = c === "'" || (c === '$' && s[i + 1] === "'") ? single(s, i) : null;
    if (quoted) {
      word += quoted.text;
      i = quoted.stop;
      continue;
    }
    if (c === '"') {
      at.push('"');
      continue;
    }
    if (c === '#' && word === '' && (i === 0 || /[\s;&|()]/.test(s[i - 1]!))) {
      const nl = s.indexOf('\n', i);
      i = nl < 0 ? s.length : nl - 1;
      continue;
    }
    const next = operator(s, i, { out, end, cut, target, docs, at });
    if (next === null) word += c;
    else i = next;
  }
  end();
  return out;
}
type Ctx = {
  out: Scan;
  end: () => void;
  cut: () => void;
  target: (on: boolean) => void;
  docs: Doc[];
  at: string[];
};

/** An operator at `i` in code (`&`, `;`, a here-document, a process substitution): where the reading goes on, or null for a word's character. */
function operator(s: string, i: number, { out, end, cut, target, docs, at }: Ctx): number | null {
  const c = s[i]!;
  if (c === '\n' && docs.length) {
    cut();
    return hereDocs(s, i, docs.splice(0), out);
  }
  if (c === '<' && s[i + 1] === '<' && s[i + 2] !== '<' && s[i - 1] !== '<') {
    end();
    const m = /^<<(-?)[ \t]*([^\s;&|<>()]+)/.exec(s.slice(i));
    if (!m) return i + 1;
    const raw = m[2]!;
    const words = out.commands[out.commands.length - 1]!;
    const shell = SHELLS.has(path.basename(words[nameAt(words)] ?? ''));
    const read = shell ? 'code' : /['"\\]/.test(raw) ? 'skip' : 'text';
    docs.push({ delim: raw.replace(/['"\\]/g, ''), dash: m[1] === '-', read });
    return i + m[0].length - 1;
  }
  if (c === '(' && (s[i - 1] === '<' || s[i - 1] === '>')) {
    // a process substitution: bash does not wait for it (adv10), unless what reads it reads to its end
    const words = out.commands[out.commands.length - 1]!;
    const name = path.basename(words[nameAt(words)] ?? words[0] ?? '');
    if (s[i - 1] === '>' || !READERS.has(name)) out.amp = true;
    target(false);
    // read apart, so that the command it is a word of goes on (`diff <(a) <(b)`)
    const k = closeOf(s, i, false);
    const r = scan(s.slice(i + 1, k));
    out.amp ||= r.amp;
    out.commands.push(...r.commands);
    out.targets.push(...r.targets);
    return k;
  }
  const arith = c === '(' && s[i + 1] === '(' ? closeOf(s, i, true) : -1;
  if (arith >= 0) {
    // `(( a & b ))`: arithmetic, not a command
    cut();
    return arith;
  }
  if (c === '&') {
    const op = ampersand(s[i - 1], s[i + 1]);
    if (op === 'redirect') end();
    else cut();
    if (op === 'background') out.amp = true;
    return op === 'and' ? i + 1 : i;
  }
  if (/[;|()`{}\n]/.test(c)) {
    // a subshell inside a substitution: its `)` is not the substitution's
    if (c === '(' && at.length) at.push('(');
    cut();
    return i;
  }
  if (/[\s<>]/.test(c)) {
    end();
    if (c === '>') target(true);
    // `>|`: a redirection that writes over the file (noclobber or not), not a pipe
    return c === '>' && s[i + 1] === '|' ? i + 1 : i;
  }
  return null;
}

/** Commands that read a process substitution to its end (so it is done when they are). */
const READERS = new Set([
  'diff',
  'cmp',
  'comm',
  'cat',
  'sort',
  'paste',
  'join',
  'wc',
  'done',
  'source',
  '.',
]);

/** The here-documents' texts from the line after `nl`, read as each asks; where the reading goes on. */
function hereDocs(s: string, nl: number, docs: Doc[], out: Scan): number {
  let i = nl;
  for (const doc of docs) {
    const text: string[] = [];
    while (i < s.length) {
      const stop = s.indexOf('\n', i + 1);
      const line = s.slice(i + 1, stop < 0 ? s.length : stop);
      i = stop < 0 ? s.length : stop;
      if ((doc.dash ? line.replace(/^\t+/, '') : line) === doc.delim) break;
      text.push(line);
    }
    if (doc.read === 'skip') continue;
    const r = scan(text.join('\n'), doc.read === 'text');
    out.amp ||= r.amp;
    out.commands.push(...r.commands);
    out.targets.push(...r.targets);
  }
  return i - 1;
}

/** `'...'` or `$'...'` at `i`: its text (`$'\x26'` decoded) and where it closes. */
function single(s: string, i: number): { text: string; stop: number } {
  const ansi = s[i] === '$';
  let j = ansi ? i + 2 : i + 1;
  while (j < s.length && s[j] !== "'") j += ansi && s[j] === '\\' ? 2 : 1;
  const raw = s.slice(ansi ? i + 2 : i + 1, j);
  const text = ansi
    ? raw.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|[0-7]{1,3}|.)/g, (_, e: string) =>
        /^[xu]/.test(e)
          ? String.fromCharCode(parseInt(e.slice(1), 16))
          : /^[0-7]/.test(e)
            ? String.fromCharCode(parseInt(e, 8))
            : e === 'n'
              ? '\n'
              : e,
      )
    : raw;
  return { text, stop: Math.min(j, s.length) };
}

/**
 * Where the bracket at `open` (`(` or `{`) closes; with `arith`, only an arithmetic `((...))`
 * whose inner `(` closes right before (else -1, as for one never closed).
 */
function closeOf(s: string, open: number, arith: boolean): number {
  const [o, c] = s[open] === '{' ? ['{', '}'] : ['(', ')'];
  const closes: number[] = [];
  const stack: number[] = [];
  // arithmetic is short: a bounded look, so that 20,000 `$((` are not read to the end each
  const stop = arith ? Math.min(s.length, open + 256) : s.length;
  for (let j = open; j < stop; j++) {
    // a quoted `}` or `)` closes nothing
    if (s[j] === '\\') j++;
    else if (s[j] === "'" || s[j] === '"') {
      const q = s.indexOf(s[j]!, j + 1);
      j = q < 0 ? s.length : q;
    } else if (s[j] === o) stack.push(j);
    else if (s[j] === c) {
      const from = stack.pop();
      // `((...))`: arithmetic only if the outer `)` comes right after the inner one
      if (arith && from === open + 1) return s[open + 1] === '(' && s[j + 1] === ')' ? j + 1 : -1;
      if (from === open + 1) closes.push(j);
      if (from === open) {
        if (!arith) return j;
        return s[open + 1] === '(' && closes[0] === j - 1 ? j : -1;
      }
    }
  }
  return arith ? -1 : s.length - 1;
}

/** What a `&` is, from the characters around it. */
function ampersand(
  prev: string | undefined,
  next: string | undefined,
): 'and' | 'redirect' | 'pipe' | 'background' {
  if (next === '&') return 'and';
  // `>&2`, `<&0`, `&>file`: redirections; `|&`: a pipe of both outputs
  if (prev === '>' || prev === '<' || next === '>') return 'redirect';
  // `;&` and `;;&` end a case's branch (adv10)
  if (prev === '|' || prev === ';') return 'pipe';
  return 'background';
}

/**
 * A command as the shell reads it (the scanner above: quotes, backslashes, comments, here-documents,
 * substitutions), for the net's refusals (net-commands.ts): each simple command's words, and the
 * files its output redirections write to. A line continued with a backslash is one line.
 */
export function shellWords(command: string): { commands: string[][]; targets: string[] } {
  const r = scan(command.replace(/\\\n/g, ''));
  return { commands: r.commands.filter((w) => w.length > 0), targets: r.targets };
}

/**
 * The scripts a simple command runs that are text among its words: a shell's or `su`'s `-c`
 * script, what `eval` runs, a git alias's `!` command (`alias.r='!guard recover'`).
 */
export function scriptsOf(words: readonly string[]): string[] {
  const at = nameAt([...words]);
  const name = at < 0 ? '' : path.basename(words[at]!);
  const rest = words.slice(at + 1);
  const out: string[] = [];
  const c = SHELLS.has(name) || SCRIPTERS.has(name) ? rest.findIndex((x) => /^-\w*c$/.test(x)) : -1;
  if (c >= 0 && rest[c + 1] !== undefined) out.push(rest[c + 1]!);
  if (name === 'eval') out.push(rest.join(' '));
  if (name === 'git')
    for (const w of rest) {
      const m = /^(?:[^=\s]*=)?!([^]*)$/.exec(w);
      if (m) out.push(m[1]!);
    }
  return out;
}

/**
 * Whether a simple command is a shell reading its script from its input (`... | sh`, `sh <<< '...'`):
 * a shell with a script file (`sh deploy.sh`) or `-c` does not read its input (a here-string's word
 * is among the words: `sh <<< '...'`).
 */
export function shellFed(words: readonly string[], command: string): boolean {
  const at = nameAt([...words]);
  const opts = (x: string) => x.startsWith('-') && !/^-\w*c$/.test(x);
  return (
    at >= 0 &&
    SHELLS.has(path.basename(words[at]!)) &&
    (words.slice(at + 1).every(opts) || command.includes('<<<'))
  );
}
