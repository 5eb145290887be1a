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
  const read = scan(command.replace(/\\\n/g, ''));
  const { commands } = read;
  // any background `&`, even with a `wait` after it: what the shell waits for cannot be read from
  // the text (a job that kills the shell, `wait` made a function by code run from elsewhere: adv11,
  // adv12), and reading too much costs checkpoints, never a refusal
  if (read.amp) return true;
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
  const name = at < 0 ? '' : nameOf(words[at]!);
  const rest = words.slice(at + 1);
  if (DETACHERS.has(name)) return true;
  // `sudo -b`: sudo runs it in the background (adv10); `-nb`, `--background` too (adv11)
  const before = words.slice(0, Math.max(at, 0));
  const sudo = before.some((w) => /^(sudo|doas)$/.test(nameOf(w)));
  if (sudo && before.some((w) => /^(-[a-zA-Z]*b[a-zA-Z]*|--background)$/.test(w))) return true;
  // `flock FILE -c '...'`: a runner that takes a script too
  const lock = words.some((w) => /flock|[*?[]/.test(w))
    ? words.findIndex((w, j) => (at < 0 || j < at) && nameOf(w) === 'flock')
    : -1;
  const script = lock < 0 ? -1 : scriptAt(words.slice(lock + 1));
  if (script >= 0 && detaches(words[lock + 1 + script]!)) return true;
  // `env -S 'setsid -f ...'`: env splits the string into the command (adv11)
  if (at > 0 && /^(-S|--split-string)$/.test(before[at - 1]!) && detaches(words[at]!)) return true;
  // a container started detached (`docker run -d -v $PWD:/w ...`), a cron table installed
  if (CONTAINERS.has(name) && containerDetached(rest)) return true;
  if (name === 'crontab' && !rest.some((x) => /^-[lr]$/.test(x))) return true;
  // a service or process manager told to start something, which runs on after it returns (adv11)
  if (STARTERS.has(name) && rest.some((x) => STARTS.test(x))) return true;
  // `find -exec CMD ...`: the command it runs
  const exec = name === 'find' ? rest.findIndex((x) => /^-(exec|execdir|ok|okdir)$/.test(x)) : -1;
  if (exec >= 0 && detachedWords(rest.slice(exec + 1))) return true;
  // a script handed to a shell (`script`, `su`, `flock` too), to eval or to trap is read as one
  const c = SHELLS.has(name) || SCRIPTERS.has(name) ? scriptAt(rest) : -1;
  if (c >= 0 && detaches(rest[c]!)) return true;
  if (
    (name === 'eval' || name === 'trap') &&
    detaches(name === 'eval' ? rest.join(' ') : (rest[0] ?? ''))
  )
    return true;
  if (name === 'screen' && rest.some((x) => /^-([a-zA-Z]*d|X$)/.test(x))) return true;
  // a tmux window started detached, or keys or a command sent to a tmux server (adv10)
  if (name === 'tmux' && rest.some((x) => x === '-d' || TMUX_RUNS.test(x))) return true;
  // systemd-run starts a unit and returns, unless told to wait or run in a scope
  if (name === 'systemd-run')
    return !rest.some((x) => /^(--scope|--wait|-P|--pipe|--pty|-t)$/.test(x));
  return false;
}

/**
 * `docker run -d`, `exec -d`, `compose up -d`: a `-d` among the options before the image or the
 * container (after it, the words are its command's: `docker exec -it db psql -d app` was read as
 * detached, adv11), or anywhere for `compose up`, which takes no command.
 */
function containerDetached(rest: readonly string[]): boolean {
  const detach = (x: string) => x === '--detach' || /^-[a-zA-Z]*d[a-zA-Z]*$/.test(x);
  let i = 0;
  // global options (`--context x`, `compose -f file`) and `container`/`compose` before the subcommand
  for (
    ;
    i < rest.length && (rest[i]!.startsWith('-') || /^(container|compose)$/.test(rest[i]!));
    i++
  )
    if (/^(-[Hcflp]|--[a-z-]+)$/.test(rest[i]!) && !BOOL_LONG.test(rest[i]!)) i++;
  const args = rest.slice(i + 1);
  if (rest[i] === 'up') return args.some(detach);
  // a stopped container started again runs on after docker returns, unless attached (adv11)
  if (rest[i] === 'start' || rest[i] === 'restart')
    return !args.some((x) => /^(-[a-zA-Z]*[ai][a-zA-Z]*|--attach|--interactive)$/.test(x));
  if (rest[i] !== 'run' && rest[i] !== 'exec') return false;
  for (let j = 0; j < args.length && args[j]!.startsWith('-'); j++) {
    const x = args[j]!;
    if (detach(x)) return true;
    // an option's value in the next word: `-v X`, `--name X` (not `--rm`, `-it`)
    if (x.startsWith('--') ? !x.includes('=') && !BOOL_LONG.test(x) : /[acehlmpuvw]$/.test(x)) j++;
  }
  return false;
}
/** docker's and podman's long options that take no value. */
const BOOL_LONG =
  /^--(rm|init|privileged|read-only|interactive|tty|publish-all|no-healthcheck|oom-kill-disable|quiet|help|debug|tls|tlsverify|build|no-deps|remove-orphans|wait|replace|sig-proxy)$/;

/**
 * Where the command's name is among its words: past assignments and the words that run what
 * follows them (`sudo`, `timeout`, `nice`, ...), and those words' options (`sudo -u me`,
 * `nice -n 5`, `timeout -s KILL 10`, adv10; `timeout --signal KILL`, a runner's first
 * argument: `flock FILE`, `taskset MASK`, adv11).
 */
function nameAt(words: string[]): number {
  let prefixed = false;
  let positional = 0;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const n = w.startsWith('-') ? w : nameOf(w);
    if (/^\w+=/.test(w)) continue;
    if (PREFIXES.has(n) || RUNNERS.has(n)) {
      // `command -v nohup` looks a name up, runs nothing
      if (w === 'command' && /^-[vV]$/.test(words[i + 1] ?? '')) return -1;
      prefixed = true;
      positional = RUNNERS.get(n) ?? 0;
      continue;
    }
    const option = w.startsWith('-') || /^[\d.]+[smhd]?$/.test(w);
    if (prefixed && !option && positional > 0 && !KNOWN.has(n)) {
      positional--;
      continue;
    }
    if (!prefixed || !option) return i;
    // an option's value (`-u me`, `--signal KILL`), unless it is a command (`env -i bash`)
    const next = words[i + 1];
    if ((VALUED.test(w) || LONG_VALUED.test(w)) && next !== undefined && !KNOWN.has(nameOf(next)))
      i++;
  }
  return -1;
}

/**
 * A command word's name: its base name, or the known name a glob there stands for
 * (`/usr/bin/sets?d`: the shell expands it before it runs, adv11).
 */
function nameOf(w: string): string {
  const base = path.basename(w);
  // (the names known are short: a longer glob is none of them, and `**` is `*`, so that a
  // pattern built to backtrack, `*****...x`, costs nothing)
  if (!/[*?[]/.test(base) || base.length > 64) return base;
  const glob = base
    .replace(/\*+/g, '*')
    .replace(/[.+^${}()|\\]/g, '\\$&')
    .replace(/\[!/g, '[^')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  try {
    const re = new RegExp(`^${glob}$`);
    return [...KNOWN].find((k) => re.test(k)) ?? base;
  } catch {
    return base;
  }
}

/** Where a shell's `-c` script is among the words after its name (`-c x`, `-ce x`, `-c -- x`: adv11), or -1. */
function scriptAt(rest: string[]): number {
  const c = rest.findIndex((x) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(x));
  for (let j = c < 0 ? rest.length : c + 1; j < rest.length; j++) {
    if (/^[-+][oO]$/.test(rest[j]!)) j++;
    else if (rest[j] === '--') return j + 1 < rest.length ? j + 1 : -1;
    else if (!/^[-+]/.test(rest[j]!)) return j;
  }
  return -1;
}

/**
 * Whether a shell run with these words reads its script from its input: no script file, `-s`
 * (`bash -s -- x`), `-` or a file that is its input (`bash /dev/stdin`, adv11), or a here-string.
 */
function readsInput(rest: string[], command: string): boolean {
  if (command.includes('<<<')) return true;
  for (let j = 0; j < rest.length; j++) {
    const x = rest[j]!;
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(x)) return false;
    if (/^-[a-zA-Z]*s[a-zA-Z]*$/.test(x) || x === '-') return true;
    if (/^[-+][oO]$/.test(x)) j++;
    else if (x === '--') return STDIN.test(rest[j + 1] ?? '-');
    else if (!/^[-+]/.test(x)) return STDIN.test(x);
  }
  return true;
}
const STDIN = /^(\/dev\/stdin|\/dev\/fd\/0|\/proc\/self\/fd\/0|-)$/;

const SHELLS = new Set(
  ['sh', 'bash', 'dash', 'zsh', 'ksh', 'ash'].concat([
    'mksh',
    'yash',
    'posh',
    'rbash',
    'fish',
    'csh',
    'tcsh',
  ]),
);
const SCRIPTERS = new Set(['script', 'su', 'runuser']);
const CONTAINERS = new Set(['docker', 'podman', 'nerdctl']);
const STARTERS = new Set(['systemctl', 'service', 'pm2', 'forever', 'supervisorctl']);
const STARTS = /^(start|restart|reload|try-restart|reload-or-restart|--now)$/;
// coproc, at, batch: bash or atd runs the command after the shell returns (adv10). Not nohup:
// it runs its command in the foreground, deaf to SIGHUP; `nohup cmd &` is detached by its `&`
// (holes8: `nohup make` read as detached got a whole-tree checkpoint per call for 30 minutes)
const DETACHERS = new Set(
  ['setsid', 'disown', 'daemonize', 'start-stop-daemon'].concat(['coproc', 'at', 'batch']),
);
const PREFIXES = new Set(
  ['sudo', 'doas', 'exec', 'env', 'time', 'nice', 'command', 'builtin', 'then', 'do', 'else', '!']
    .concat(['ionice', 'stdbuf', 'timeout', 'xargs', 'npx', 'bunx', 'pnpx', 'nohup'])
    // a condition's or a loop's command (`if setsid -f ...; then`, adv11)
    .concat(['if', 'elif', 'while', 'until']),
);
/** Programs that run the command after their options and this many arguments of their own (adv11). */
const RUNNERS = new Map(
  Object.entries({ flock: 1, chroot: 1, taskset: 1, chrt: 0, unshare: 0, nsenter: 0 }).concat(
    Object.entries({ setpriv: 0, strace: 0, ltrace: 0, firejail: 0, unbuffer: 0, busybox: 0 }),
    Object.entries({ pkexec: 0, chpst: 0, fakeroot: 0, proot: 0 }),
  ),
);
/** Short options of the prefixes that take a value in the next word. */
const VALUED = /^-[ugnckILPsoeCpaUhiEr]$/;
const LONG_VALUED =
  /^--(signal|kill-after|user|group|chdir|unset|adjustment|class|classdata|pid|output|prompt|host|close-from|chroot|role|type|other-user|target|login-class)$/;
// tmux subcommands that have its server run a command past the shell's return (adv10, adv11)
const TMUX_RUNS =
  /^(send-keys|send|run-shell|run|respawn-\w+|new-window|neww|split-window|splitw|display-popup|popup|pipe-pane|pipep|if-shell|if)$/;
const KNOWN = new Set([
  ...DETACHERS,
  ...SHELLS,
  ...PREFIXES,
  ...SCRIPTERS,
  ...CONTAINERS,
  ...RUNNERS.keys(),
  ...['eval', 'trap', 'screen', 'tmux', 'crontab', 'find', 'systemd-run'],
  ...STARTERS,
]);

type Scan = {
  amp: boolean;
  commands: string[][];
  /** The files its output redirections write to (`> f`, `>> f`, `>| f`, `&> f`: the net, holes8). */
  targets: string[];
};
function scanOf(amp: boolean, commands: string[][]): Scan {
  return { amp, commands, targets: [] };
}
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
  if (depth >= MAX_DEPTH) return scanOf(true, []);
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
  const out = scanOf(false, [[]]);
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
    const shell = SHELLS.has(nameOf(words[nameAt(words)] ?? ''));
    const read = shell ? 'code' : /['"\\]/.test(raw) ? 'skip' : 'text';
    docs.push({ delim: raw.replace(/['"\\]/g, ''), dash: m[1] === '-', read });
    return i + m[0].length - 1;
  }
  if (c === '(' && (s[i - 1] === '<' || s[i - 1] === '>')) {
    // a process substitution: bash does not wait for it (adv10), unless what reads it reads to its end
    const words = out.commands[out.commands.length - 1]!;
    const name = nameOf(words[nameAt(words)] ?? words[0] ?? '');
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
  // mapfile and readarray read their input to its end (adv11: `mapfile -t a < <(git ls-files)`)
  'mapfile',
  'readarray',
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
    // a quoted here-document is text, unless the line feeds it to a shell (`cat <<'EOF' | bash`,
    // adv11): kept as a word of its own for that reading
    if (doc.read === 'skip') {
      out.commands.push(['<<', text.join('\n')]);
      continue;
    }
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
  // a quoted here-document's text (`<<` and the text, kept for the reading above) is text, unless
  // the line feeds it to a shell (`cat <<'EOF' | bash`)
  const fed = r.commands.some((w) => shellFed(w, command));
  return {
    commands: r.commands.filter((w) => w.length > 0 && (w[0] !== '<<' || fed)),
    targets: r.targets,
  };
}

/**
 * The scripts a simple command runs that are text among its words: a shell's or `su`'s `-c`
 * script, what `eval` runs, a git alias's `!` command (`alias.r='!guard recover'`).
 */
export function scriptsOf(words: readonly string[]): string[] {
  const at = nameAt([...words]);
  const name = at < 0 ? '' : nameOf(words[at]!);
  const rest = words.slice(at + 1);
  const out: string[] = [];
  // `-c x`, `-ce x`, `-c -- x` (adv11's reading)
  const c = SHELLS.has(name) || SCRIPTERS.has(name) ? scriptAt(rest) : -1;
  if (c >= 0) out.push(rest[c]!);
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
  return at >= 0 && SHELLS.has(nameOf(words[at]!)) && readsInput(words.slice(at + 1), command);
}
