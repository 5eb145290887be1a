import { constants } from 'node:fs';
import { access, readFile, readdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { CONFIG_FILE } from '../core/config.js';
import { GuardError } from '../core/errors.js';
import { parseRecordMessage } from '../core/record.js';
import { catFileBatch } from '../git/catfile.js';
import { LANE_REFS, listLanes, mainRepo, type Lane } from '../git/lanes.js';
import { REFS, listRecords, listRefTypes, type RefType } from '../git/records.js';
import type { Repo } from '../git/repo.js';
import { readHooksPath, type HooksPath } from '../git/config.js';
import { configAt, type FlowOptions } from './context.js';
import { processAlive as alive } from '../git/alive.js';

/**
 * `guard doctor`: would the gate run? Each check is data; the verdict is
 * "active" unless some check is an error. Reads only: it never repairs, it
 * says how. A constant number of git processes whatever the number of refs
 * and lanes: rev-parse, worktree list (inside a lane), config, for-each-ref
 * (lanes) + worktree list, cat-file --batch, for-each-ref x2.
 */
export type Severity = 'error' | 'warning' | 'info';

export interface DoctorCheck {
  id: string;
  ok: boolean;
  severity: Severity;
  message: string;
  hint?: string;
}

export interface RefCounts {
  checkpoints: number;
  decisions: number;
  rejected: number;
  lanes: number;
  tmp: number;
  other: number;
}

export interface DoctorResult {
  root: string;
  /** The gate would run: no check is an error. */
  active: boolean;
  checks: DoctorCheck[];
  refs: RefCounts;
}

export interface DoctorOptions extends FlowOptions {
  /** The environment hooks would run in (HUSKY, PATH); process.env by default. */
  env?: NodeJS.ProcessEnv;
}

const HOOK = 'pre-commit';
/** husky v9's runner, next to its stubs: `.husky/_/h`. */
const HUSKY_RUNNER = 'h';
/** A husky v9 stub: `. "$(dirname "$0")/h"` (it runs `<dir>/../pre-commit` with `sh -e`). */
const HUSKY_STUB = /\$\(dirname\s+"?\$0"?\)\/h\b/;
/** The hook runs guard: `guard check`, `npx guard check`, or a node path to guard's main.js (guard's own repo). */
const RUNS_GUARD_COMMAND = /(?:^|[\s;&|(`])(?:(?:npx|bunx|pnpm\s+exec|yarn)\s+)?guard\s+check\b/m;
const RUNS_GUARD_SCRIPT = /\bnode\s+\S*main\.js\s+check\b/m;
const LOCK_FILE = 'guard.lock';
/** How many bad refs a message names before "and N more". */
const NAMED = 5;

const ok = (id: string, message: string, hint?: string): DoctorCheck => (hint ? { id, ok: true, severity: 'info', message, hint } : { id, ok: true, severity: 'info', message });
const bad = (id: string, severity: 'error' | 'warning', message: string, hint?: string): DoctorCheck =>
  hint ? { id, ok: false, severity, message, hint } : { id, ok: false, severity, message };

export async function doctor(opts: DoctorOptions): Promise<DoctorResult> {
  const env = opts.env ?? process.env;
  const main = await mainRepo(opts.cwd);
  const [hooksPath, lanes, objects, types, records] = await Promise.all([
    readHooksPath(main.root),
    listLanes(main),
    // HEAD first: a missing config in a repository without commits is not the same news.
    catFileBatch(main.root, ['HEAD', `HEAD:${CONFIG_FILE}`], 1 << 20),
    // One for-each-ref for every ref's type: a ref may point at a blob or tree after a hand edit.
    listRefTypes(main.root, REFS.root),
    listRecords(main.root, REFS.root),
  ]);
  const checks: DoctorCheck[] = [];
  checks.push(...(await hookChecks(main, hooksPath, env)));
  checks.push(...(await laneChecks(main, hooksPath, lanes)));
  checks.push(configCheck(objects[0] ?? null, objects[1] ?? null));
  const refs = refChecks(types, records);
  checks.push(...refs.checks);
  checks.push(...(await lockChecks(main)));
  // per agent harness: is guard's hook there and would it run (flows/agents.ts)
  for (const a of await (await import('./agents.js')).agentChecks(main.root, env.HOME)) {
    const id = `agent:${a.harness}`;
    if (a.state === 'ok' || a.state === 'absent') checks.push(ok(id, a.message, a.state === 'absent' ? undefined : a.hint));
    else checks.push(bad(id, 'warning', a.message, a.hint));
  }
  return { root: main.root, active: !checks.some((c) => c.severity === 'error'), checks, refs: refs.counts };
}

/* ------------------------------------------------------------------ hooks */

/** The folder git looks for hooks in, for the work tree at `root`. Relative hooksPath is per work tree. */
function hooksDir(root: string, commonDir: string, hp: HooksPath): string {
  if (hp.value === null || hp.value === '') return path.join(commonDir, 'hooks');
  if (hp.value === '~' || hp.value.startsWith('~/')) return path.join(homedir(), hp.value.slice(1));
  return path.resolve(root, hp.value);
}

interface HookFacts {
  dir: string;
  file: string;
  exists: boolean;
  isFile: boolean;
  executable: boolean;
  /** husky v9: the hook is a stub that runs `<dir>/../pre-commit` through `<dir>/h`. */
  husky: boolean;
  runnerExists: boolean;
  /** The script that holds the commands: husky's `.husky/pre-commit`, or the hook itself. */
  script: string;
  scriptText: string | null;
}

async function readText(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch {
    return null;
  }
}

async function inspectHook(dir: string): Promise<HookFacts> {
  const file = path.join(dir, HOOK);
  const st = await stat(file).catch(() => null);
  // git runs a hook only when access(X_OK) says so, and warns (hint) otherwise.
  const executable = st !== null && st.isFile() && (st.mode & 0o111) !== 0 && (await access(file, constants.X_OK).then(() => true, () => false));
  const text = st?.isFile() ? await readText(file) : null;
  const husky = text !== null && HUSKY_STUB.test(text);
  const script = husky ? path.join(path.dirname(dir), HOOK) : file;
  return {
    dir,
    file,
    exists: st !== null,
    isFile: st?.isFile() ?? false,
    executable,
    husky,
    runnerExists: husky ? (await stat(path.join(dir, HUSKY_RUNNER)).catch(() => null))?.isFile() === true : false,
    script,
    scriptText: husky ? await readText(script) : text,
  };
}

/** The script's commands, comments dropped (a comment that mentions guard check does not run it). */
function commands(text: string): string {
  return text
    .split('\n')
    .filter((l) => !/^\s*#/.test(l))
    .join('\n');
}

function runsGuard(text: string | null): 'command' | 'script' | null {
  if (text === null) return null;
  const code = commands(text);
  if (RUNS_GUARD_COMMAND.test(code)) return 'command';
  if (RUNS_GUARD_SCRIPT.test(code)) return 'script';
  return null;
}

/** Why the hook in `facts` would not run guard check, or null when it would. */
function hookProblem(facts: HookFacts, rel: (p: string) => string): { message: string; hint: string } | null {
  if (!facts.exists) return { message: `${rel(facts.file)} does not exist: git runs no pre-commit hook`, hint: 'run guard init' };
  if (!facts.isFile) return { message: `${rel(facts.file)} is not a file`, hint: `remove it and run guard init` };
  if (!facts.executable) return { message: `${rel(facts.file)} is not executable: git skips it`, hint: `chmod +x ${rel(facts.file)}` };
  if (facts.husky && !facts.runnerExists) {
    return { message: `husky's runner ${rel(path.join(facts.dir, HUSKY_RUNNER))} is missing: the stub fails`, hint: 'run guard init (or npx husky) to reinstall husky' };
  }
  if (facts.scriptText === null) {
    // husky's runner exits 0 when the script is missing: the commit passes unchecked.
    return { message: `${rel(facts.script)} does not exist: husky skips the hook silently`, hint: 'run guard init' };
  }
  if (!runsGuard(facts.scriptText)) return { message: `${rel(facts.script)} does not run guard check`, hint: 'run guard init (it adds the line), or add `guard check` to it' };
  return null;
}

async function executableOn(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}

/** Where the hook's shell finds `guard`: PATH, plus node_modules/.bin that husky puts first. */
async function findGuard(root: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  const dirs = [path.join(root, 'node_modules', '.bin'), ...(env.PATH ?? '').split(path.delimiter).filter(Boolean)];
  for (const d of dirs) {
    const candidate = path.resolve(root, d, 'guard');
    if (await executableOn(candidate)) return candidate;
  }
  return null;
}

async function hookChecks(main: Repo, hp: HooksPath, env: NodeJS.ProcessEnv): Promise<DoctorCheck[]> {
  const rel = (p: string) => {
    const r = path.relative(main.root, p);
    return r && !r.startsWith('..') && !path.isAbsolute(r) ? r : p;
  };
  const checks: DoctorCheck[] = [];
  const where = hp.scope ? ` (${hp.scope} config)` : '';
  const unset = hp.scope ? `git config --${hp.scope === 'local' ? 'local' : hp.scope} --unset core.hooksPath` : 'git config --unset core.hooksPath';

  if (hp.value === '/dev/null' || hp.value === 'nul') {
    checks.push(bad('hooks-path', 'error', `core.hooksPath=${hp.value}${where}: git runs no hooks at all`, `${unset}, then guard init`));
    return checks;
  }
  const dir = hooksDir(main.root, main.commonDir, hp);
  const facts = await inspectHook(dir);
  if (hp.value) {
    const dirStat = await stat(dir).catch(() => null);
    if (!dirStat?.isDirectory()) {
      checks.push(bad('hooks-path', 'error', `core.hooksPath=${hp.value}${where} is not a folder: git runs no hooks`, `${unset}, then guard init`));
      return checks;
    }
    if (!facts.exists) {
      checks.push(bad('hooks-path', 'error', `core.hooksPath=${hp.value}${where} has no ${HOOK} hook: the gate is skipped`, `guard init points it at .husky/_ and installs the hook`));
      return checks;
    }
    checks.push(ok('hooks-path', `core.hooksPath=${hp.value}${where}`));
  } else {
    checks.push(ok('hooks-path', `core.hooksPath is not set: git runs ${rel(dir)}`));
  }

  const problem = hookProblem(facts, rel);
  if (problem) checks.push(bad('hook', 'error', problem.message, problem.hint));
  else checks.push(ok('hook', `${rel(facts.file)} is executable${facts.husky ? ` and runs ${rel(facts.script)} through husky` : ''}, which runs guard check`));

  if (facts.husky && env.HUSKY === '0') {
    checks.push(bad('husky-env', 'warning', 'HUSKY=0 is set in this environment: husky skips every hook, guard check included', 'unset HUSKY (look in your shell profile and ~/.config/husky/init.sh)'));
  }

  if (!problem && runsGuard(facts.scriptText) === 'command') {
    const found = await findGuard(main.root, env);
    if (found) checks.push(ok('guard-command', `the hook finds guard at ${rel(found)}`));
    else {
      checks.push(
        bad('guard-command', 'error', 'the guard command is not on PATH or in node_modules/.bin: the hook would fail every commit', 'npm install --save-dev guard (or install it globally)'),
      );
    }
  }
  return checks;
}

/** Each lane runs the hooks of its own work tree (relative hooksPath) or the shared ones. */
async function laneChecks(main: Repo, hp: HooksPath, lanes: Lane[]): Promise<DoctorCheck[]> {
  if (lanes.length === 0) return [ok('lanes', 'no lanes')];
  if (hp.value === '/dev/null' || hp.value === 'nul') return [bad('lanes', 'warning', `${lanes.length} lane${lanes.length === 1 ? '' : 's'}: no hooks run (core.hooksPath=${hp.value})`)];
  return Promise.all(
    lanes.map(async (lane): Promise<DoctorCheck> => {
      const id = `lane:${lane.name}`;
      if (lane.broken) return bad(id, 'warning', `lane ${lane.name} is broken: its work tree is missing`, `guard discard ${lane.name} cleans it up`);
      const dir = hooksDir(lane.path, main.commonDir, hp);
      const rel = (p: string) => path.relative(lane.path, p) || p;
      const problem = hookProblem(await inspectHook(dir), rel);
      if (problem) {
        const copy = hp.value && !path.isAbsolute(hp.value) ? `cp -R ${path.join(main.root, hp.value)} ${dir}` : 'guard init in the main tree';
        return bad(id, 'warning', `lane ${lane.name} would not run the hook: ${problem.message}`, copy);
      }
      return ok(id, `lane ${lane.name} runs the pre-commit hook`);
    }),
  );
}

/* ----------------------------------------------------------------- config */

function configCheck(head: { type: string } | null, blob: { type: string; data?: Buffer } | null): DoctorCheck {
  if (head === null) return ok('config', `no commits yet: guard uses the defaults until ${CONFIG_FILE} is committed`);
  if (blob === null) return ok('config', `no ${CONFIG_FILE} at HEAD: defaults in use`, `commit a ${CONFIG_FILE} (guard init writes one)`);
  if (blob.type !== 'blob') return bad('config', 'error', `HEAD:${CONFIG_FILE} is a ${blob.type}, not a file`, `commit ${CONFIG_FILE} as a JSON file`);
  if (blob.data === undefined) return bad('config', 'error', `HEAD:${CONFIG_FILE} is too large to be a config`, `commit a valid ${CONFIG_FILE}`);
  try {
    configAt('HEAD', blob.data);
    return ok('config', `HEAD:${CONFIG_FILE} is valid`);
  } catch (err) {
    if (!(err instanceof GuardError)) throw err;
    // check fails closed on this config: every commit would be refused with this message
    return bad('config', 'error', err.message, err.hint ?? `fix ${CONFIG_FILE} and commit it with --no-verify`);
  }
}

/* ------------------------------------------------------------------- refs */

const KINDS = [
  ['checkpoints', REFS.checkpoints],
  ['decisions', REFS.decisions],
  ['rejected', REFS.rejected],
] as const;
const TMP_REFS = `${REFS.root}tmp/`;

function named(refs: string[]): string {
  return refs.length <= NAMED ? refs.join(', ') : `${refs.slice(0, NAMED).join(', ')} and ${refs.length - NAMED} more`;
}

/** How to delete bad refs with plain git. */
function deleteHint(refs: string[]): string {
  if (refs.length === 1) return `look at it with git show ${refs[0]}; delete it with git update-ref -d ${refs[0]}`;
  return `look at each with git show REF; delete each with git update-ref -d REF (e.g. git update-ref -d ${refs[0]})`;
}

function refChecks(types: RefType[], records: Awaited<ReturnType<typeof listRecords>>): { checks: DoctorCheck[]; counts: RefCounts } {
  const counts: RefCounts = { checkpoints: 0, decisions: 0, rejected: 0, lanes: 0, tmp: 0, other: 0 };
  const notCommits: string[] = [];
  const tmp: string[] = [];
  for (const { ref, type } of types) {
    if (ref.startsWith(TMP_REFS)) tmp.push(ref);
    if (type !== 'commit') notCommits.push(ref);
  }
  const notCommit = new Set(notCommits);
  const corrupt: string[] = [];
  for (const rec of records) {
    if (rec.ref.startsWith(TMP_REFS)) {
      counts.tmp++;
      continue;
    }
    if (rec.ref.startsWith(LANE_REFS)) {
      counts.lanes++;
      continue;
    }
    const kind = KINDS.find(([, prefix]) => rec.ref.startsWith(prefix));
    if (!kind) {
      counts.other++;
      continue;
    }
    counts[kind[0]]++;
    if (notCommit.has(rec.ref)) continue;
    const parsed = parseRecordMessage(rec.message.replace(/\n$/, ''));
    const readable = parsed !== null && (kind[0] === 'checkpoints' || Array.isArray(parsed.decisions));
    if (!readable) corrupt.push(rec.ref);
  }

  const checks: DoctorCheck[] = [];
  const summary = `refs/guard/: ${counts.checkpoints} checkpoint${counts.checkpoints === 1 ? '' : 's'}, ${counts.decisions} decision record${counts.decisions === 1 ? '' : 's'}, ${counts.rejected} rejected, ${counts.lanes} lane${counts.lanes === 1 ? '' : 's'}`;
  checks.push(ok('refs', summary));
  if (notCommits.length) {
    checks.push(bad('refs-type', 'warning', `${notCommits.length} ref${notCommits.length === 1 ? '' : 's'} under refs/guard/ not pointing at a commit: ${named(notCommits)}`, deleteHint(notCommits)));
  }
  if (corrupt.length) {
    checks.push(
      bad(
        'refs-corrupt',
        'warning',
        `${corrupt.length} record${corrupt.length === 1 ? '' : 's'} under refs/guard/ not readable (corrupt or edited by hand; guard log skips ${corrupt.length === 1 ? 'it' : 'them'}): ${named(corrupt)}`,
        deleteHint(corrupt),
      ),
    );
  }
  if (tmp.length) {
    checks.push(
      bad('refs-tmp', 'warning', `${tmp.length} leftover temporary ref${tmp.length === 1 ? '' : 's'} (an interrupted guard, unless one is writing right now): ${named(tmp)}`, `git for-each-ref --format='delete %(refname)' ${TMP_REFS} | git update-ref --stdin`),
    );
  }
  return { checks, counts };
}

/* ------------------------------------------------------------------ locks */

/** guard.lock lives in each work tree's git dir: `.git/` and `.git/worktrees/<name>/`. */
async function lockChecks(main: Repo): Promise<DoctorCheck[]> {
  const worktrees = await readdir(path.join(main.commonDir, 'worktrees')).catch(() => [] as string[]);
  const files = [path.join(main.commonDir, LOCK_FILE), ...worktrees.map((w) => path.join(main.commonDir, 'worktrees', w, LOCK_FILE))];
  const checks: DoctorCheck[] = [];
  for (const file of files) {
    const text = await readText(file);
    if (text === null) continue;
    const [pidText, what] = text.split('\n');
    const pid = Number(pidText);
    if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
      checks.push(ok('lock', `guard (pid ${pid}) is working: ${file}${what ? ` (${what})` : ''}`));
    } else {
      checks.push(bad('lock', 'warning', `stale lock ${file} (pid ${pidText || '?'} is not running): a guard was interrupted`, `the next guard command takes it over; or remove it: rm ${file}`));
    }
  }
  return checks;
}
