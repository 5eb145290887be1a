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
 * a subshell or a command substitution included; or a word that detaches what it runs (`nohup`,
 * `setsid`, `disown`, `daemonize`, `start-stop-daemon`; `screen -d`, `tmux ... -d`); a script
 * handed to a shell (`bash -c '...'`) or to `eval` is read the same way. A command built at run
 * time (`eval "$x"`, `bash -c "$cmd"` with `&` in a variable) is not read: its
 * after event compares what it did by then, as before. Reading too much costs one checkpoint per
 * later call of the session for 30 minutes, never a refusal.
 */
export function detaches(command: string): boolean {
  const { amp, commands } = scan(command);
  if (amp) return true;
  for (const words of commands) {
    // the command's name: past assignments and the words that run what follows them
    const at = words.findIndex((w) => !/^\w+=/.test(w) && !PREFIXES.has(path.basename(w)));
    const name = at < 0 ? '' : path.basename(words[at]!);
    const rest = words.slice(at + 1);
    if (DETACHERS.has(name)) return true;
    // a script handed to a shell or to eval is read as the command it is
    const c = SHELLS.has(name) ? rest.findIndex((x) => /^-\w*c$/.test(x)) : -1;
    if (c >= 0 && rest[c + 1] !== undefined && detaches(rest[c + 1]!)) return true;
    if (name === 'eval' && detaches(rest.join(' '))) return true;
    if (name === 'screen' && rest.some((x) => /^-[a-zA-Z]*d/.test(x))) return true;
    if (name === 'tmux' && rest.some((x) => x.startsWith('new')) && rest.includes('-d'))
      return true;
  }
  return false;
}

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'ash', 'busybox']);
const DETACHERS = new Set(['nohup', 'setsid', 'disown', 'daemonize', 'start-stop-daemon']);
const PREFIXES = new Set(
  ['sudo', 'exec', 'env', 'time', 'nice', 'command', 'builtin', 'then', 'do', 'else', '!'].concat([
    'ionice',
    'stdbuf',
    'timeout',
    'xargs',
  ]),
);

/**
 * The command's unquoted words (quotes removed) and whether a background `&` is among its
 * operators. Single quotes and `$'...'` hold everything; inside double quotes only a command
 * substitution (`$(...)`, backticks) is code again, read as such (a stack of where the reading is).
 */
function scan(s: string): { amp: boolean; commands: string[][] } {
  const commands: string[][] = [[]];
  let word = '';
  let amp = false;
  const end = () => {
    if (word) commands[commands.length - 1]!.push(word);
    word = '';
  };
  // a simple command ends (`;`, `&`, `|`, a subshell's or substitution's edge, a new line)
  const cut = () => {
    end();
    commands.push([]);
  };
  // '"': inside double quotes; '(' and '`': a command substitution (code) opened inside them
  const at: Array<'"' | '(' | '`'> = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    const top = at[at.length - 1];
    if (c === '\\') {
      word += s[i + 1] ?? '';
      i++;
      continue;
    }
    if (top === '"') {
      if (c === '"') at.pop();
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
    if (c === "'") {
      const close = s.indexOf("'", i + 1);
      const stop = close < 0 ? s.length : close;
      word += s.slice(i + 1, stop);
      if (word.startsWith('$')) word = word.slice(1);
      i = stop;
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
    if (c === '&') {
      const op = ampersand(s[i - 1], s[i + 1]);
      if (op === 'redirect') end();
      else cut();
      if (op === 'and') i++;
      if (op === 'background') amp = true;
      continue;
    }
    if (/[;|()`{}\n]/.test(c)) {
      cut();
      continue;
    }
    if (/[\s<>]/.test(c)) {
      end();
      continue;
    }
    word += c;
  }
  end();
  return { amp, commands };
}

/** What a `&` is, from the characters around it. */
function ampersand(
  prev: string | undefined,
  next: string | undefined,
): 'and' | 'redirect' | 'pipe' | 'background' {
  if (next === '&') return 'and';
  // `>&2`, `<&0`, `&>file`: redirections; `|&`: a pipe of both outputs
  if (prev === '>' || prev === '<' || next === '>') return 'redirect';
  if (prev === '|') return 'pipe';
  return 'background';
}
