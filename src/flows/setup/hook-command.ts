import path from 'node:path';
import { HARNESSES, type HarnessName } from '../../harness/types.js';
import { ROWS } from '../../harness/table.js';
import { ASKED_DIR } from '../../git/asked-marks.js';

/**
 * What a command hook that runs guard looks like: the one definition that
 * `guard init --agent` (which of a settings file's entries are guard's, to
 * replace), doctor's per-harness checks and the net (flows/doctor/integrity.ts:
 * does the file still run guard, which entries the fingerprint covers) share.
 *
 * It is exactly what init writes, `PROGRAM hook HARNESS` followed by the
 * harness's fail-closed fallback (`fallback`), where PROGRAM is one of the
 * forms `guardCommand` writes:
 *
 *   "$VAR"/node_modules/.bin/guard        (the harness's project-folder variable)
 *   /abs/node_modules/.bin/guard          (quoted as init quotes a word when it must be)
 *   cd /abs && yarn guard                 (yarn Plug'n'Play)
 *   /abs/node /abs/.../cli/main.js        (the guard that ran init)
 *
 * So an entry that only mentions guard (`echo guard hook claude; true`), one
 * that turns guard's refusal or crash into success (`guard hook claude ||
 * true`), runs it in the background (`... &`), sets variables for it
 * (`GUARD_X=1 guard hook claude`) or names a program of another name is not
 * guard's hook. With `file` (the settings file the entry is in), an absolute
 * `node_modules/.bin/guard` or yarn's folder must be the project's: a folder
 * the settings file is in.
 */
const FAILED = 'guard hook failed without answering: blocked (fail closed); run guard doctor';

/** What init appends to `PROGRAM hook HARNESS`: on any non-zero exit, the harness's block. */
export function fallback(harness: HarnessName): string {
  // every Claude-style harness blocks on exit 2 with the reason on stderr
  if (Object.hasOwn(ROWS, harness)) return ` || { echo '${FAILED}' >&2; exit 2; }`;
  switch (harness) {
    case 'gemini':
    case 'codex':
      return ` || { echo '${FAILED}' >&2; exit 2; }`;
    case 'cursor':
      return ` || { echo '{"permission":"deny","user_message":"${FAILED}","agent_message":"${FAILED}"}'; exit 2; }`;
    case 'copilot':
      return ` || echo '{"permissionDecision":"deny","permissionDecisionReason":"${FAILED}"}'`;
    default:
      return '';
  }
}

/** The characters init leaves unquoted (agents.ts quote), and its single-quoted form. */
const SAFE = /^[A-Za-z0-9_./@%+=:,-]+$/;
const QUOTED = /^'(?:[^']|'\\'')*'$/;
const WORD = String.raw`(?:[A-Za-z0-9_./@%+=:,-]+|'(?:[^']|'\\'')*')`;
const VAR_BIN = /^"\$[A-Za-z_][A-Za-z0-9_]*"\/node_modules\/\.bin\/guard$/;
const YARN = new RegExp(String.raw`^cd ("\$[A-Za-z_][A-Za-z0-9_]*"|${WORD}) && yarn guard$`);
const NODE_MAIN = new RegExp(`^(${WORD}) (${WORD})$`);

function unquote(word: string): string | null {
  if (SAFE.test(word)) return word;
  if (QUOTED.test(word)) return word.slice(1, -1).replace(/'\\''/g, "'");
  return null;
}

/** Is `dir` a folder the settings file is in (or any folder, without one)? */
function holds(dir: string, file: string | undefined): boolean {
  if (!path.isAbsolute(dir)) return false;
  return file === undefined || path.resolve(file).startsWith(path.resolve(dir) + path.sep);
}

function isGuardProgram(prog: string, file: string | undefined): boolean {
  if (VAR_BIN.test(prog)) return true;
  const bin = unquote(prog);
  const tail = '/node_modules/.bin/guard';
  if (bin !== null && bin.endsWith(tail)) return holds(bin.slice(0, -tail.length), file);
  const yarn = YARN.exec(prog);
  if (yarn) return yarn[1]!.startsWith('"$') || holds(unquote(yarn[1]!) ?? '', file);
  const nm = NODE_MAIN.exec(prog);
  if (!nm) return false;
  const [node, main] = [unquote(nm[1]!), unquote(nm[2]!)];
  return (
    node !== null &&
    path.isAbsolute(node) &&
    main !== null &&
    path.isAbsolute(main) &&
    /\/cli\/main\.js$/.test(main)
  );
}

/**
 * Is `command` guard's hook for `harness` (any harness when left out), exactly as init writes it?
 * `file`: the settings file it is in (see above).
 */
export function isGuardHookCommand(command: string, harness?: string, file?: string): boolean {
  for (const h of harness === undefined ? HARNESSES : [harness as HarnessName]) {
    const end = ` hook ${h}${fallback(h)}`;
    if (command.length > end.length && command.endsWith(end))
      return isGuardProgram(command.slice(0, -end.length), file);
  }
  return false;
}

/**
 * What init puts before `PROGRAM hook claude` on Claude Code's after events of the write tools
 * (and nowhere else): a test in the harness's own shell that ends the hook at once, with nothing
 * said, when the project's `.git` is a folder that holds no `guard-asked` folder. After a write
 * guard records one thing, that a person said yes to a write guard asked them about
 * (hook-write.ts writeAfter); guard's before event makes that folder before it answers `ask`, so
 * the after events of the other writes (all of them where nobody is asked) start no node
 * (docs/harnesses/README.md, "Which events guard installs"). Anything else (no variable, `.git`
 * a file as in a linked worktree, the folder there) runs guard as before. An agent that removes
 * the folder loses only the record of an approval, as if nobody had been asked: the branch gate
 * and ci then ask again. Only for a harness that can ask and names its project (Claude Code).
 */
export function askGate(harness: string): string | null {
  const row = Object.hasOwn(ROWS, harness) ? ROWS[harness as keyof typeof ROWS] : null;
  const v = row?.ask === 'claude' ? row.config.projectVar : null;
  return v ? `[ -d "$${v}/.git" ] && [ ! -e "$${v}/.git/${ASKED_DIR}" ] || ` : null;
}

/**
 * Is `command` guard's after-event hook of the write tools, `askGate` then the hook, exactly as
 * init writes it? Never the hook of a before event: there the gate would let a write through
 * unjudged (doctor and the net count it as not guard's there).
 */
export function isGuardAskGatedCommand(command: string, harness?: string, file?: string): boolean {
  for (const h of harness === undefined ? HARNESSES : [harness as HarnessName]) {
    const gate = askGate(h);
    if (gate !== null && command.startsWith(gate))
      return isGuardHookCommand(command.slice(gate.length), h, file);
  }
  return false;
}
