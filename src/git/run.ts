import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { GuardError } from '../core/errors.js';
import { timeoutError, watchDeadline } from '../runtime/deadline.js';

/*
 * The one way guard runs git: a bare spawn, no shell, output as bytes, one
 * line per process in GUARD_TRACE_GIT. (simple-git waits ~50 ms after every
 * quiet command and keeps the process alive ~50 ms at exit; this runner is
 * small enough that no command needed it.)
 */

export interface GitOptions {
  cwd: string;
  /** Extra environment, on top of process.env (e.g. GIT_INDEX_FILE). */
  env?: NodeJS.ProcessEnv;
  input?: string | Buffer;
  /** Exit codes that are answers, not failures (e.g. 1 for `diff --quiet`). */
  okCodes?: number[];
  /**
   * Input in two parts: `input` first, then, once git has answered `lines` lines on stdout, what
   * `rest` makes of them (fast-import's `get-mark` answers before its `done` moves any ref).
   */
  thenInput?: { lines: number; rest: (stdout: string) => string | Buffer };
}

/**
 * The subcommands guard runs that change a ref, an index or a work tree.
 * Killing one half way (the --timeout deadline, runtime/deadline.ts) could leave a `.lock` file
 * that blocks the user's next git command, a ref moved without its record,
 * or half a worktree, so these are never killed. Subcommands that only add
 * objects (hash-object -w, write-tree, commit-tree, merge-file -p) are not
 * here: git writes each object to a temp file and renames it, so a kill
 * leaves at most an unreachable object for gc.
 */
export const WRITES: ReadonlySet<string> = new Set([
  'add', // checkpoints: fills a temporary index (index.lock while it runs)
  'commit', // review --commit: moves HEAD's branch and rewrites the index
  'fast-import', // records: writes the record refs
  'fetch', // discard: brings a nested repository's checkpoint into the main object store
  'update-index', // check and review stage what was decided
  'update-ref', // checkpoints, rejected refs, lanes, log --prune
  'worktree', // start/discard: add/remove/prune a lane's work tree and admin files (list is cheap)
]);

/** Does this git command line change a ref, an index or a work tree? */
export function writes(args: readonly string[]): boolean {
  return args[0] !== undefined && WRITES.has(args[0]);
}

/**
 * The environment of every git process guard starts: process.env, the
 * caller's extras, then what guard insists on.
 * - GIT_NO_REPLACE_OBJECTS=1: `git replace` can make any object read as
 *   another (HEAD's tree, a blob, a commit's parents) without changing its
 *   id; guard judges the objects that are really there (DESIGN "No back
 *   doors"). https://git-scm.com/docs/git#Documentation/git.txt-codeGITNOREPLACEOBJECTScode
 * - GIT_GRAFT_FILE naming no file: `.git/info/grafts` (deprecated, still read by git 2.39, and
 *   not turned off by GIT_NO_REPLACE_OBJECTS) gives any commit other parents; one line naming a
 *   session chain's tip hid every earlier link from guard log, restore and rewind (adv6). gc
 *   ignores grafts, so nothing is lost while guard reads past them.
 */
export function gitEnv(extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...process.env, ...extra, GIT_NO_REPLACE_OBJECTS: '1', GIT_GRAFT_FILE: NO_GRAFTS };
}

/** A path that is never a file (ENOTDIR: git reads no grafts and warns about none). */
const NO_GRAFTS = '/dev/null/guard-reads-no-grafts';

export interface GitResult {
  stdout: Buffer;
  stderr: string;
  code: number;
}

/**
 * Options every invocation gets, before the subcommand:
 * - core.quotepath=off: paths in human messages stay readable (we parse -z output anyway);
 * - color.ui=never: plumbing output never carries escape codes, whatever the user set;
 * - core.fsmonitor=false: no daemon spawns under guard's process count;
 * - core.commitGraph=false: git reads a commit's parents from `.git/objects/info/commit-graph`
 *   without checking its checksum; a graph edited to give a session chain's tip no parent hid
 *   every earlier link from guard log, restore, rewind and doctor, as grafts did (adv7). gc and
 *   prune read the commits themselves, so nothing is lost while guard reads past the graph;
 *   guard's own walks are short (a chain, a range since a verified tip);
 * - advice.detachedHead etc. stay untouched: we never run porcelain that prints them.
 */
export const GIT_GLOBAL_ARGS = [
  '-c',
  'core.quotepath=off',
  '-c',
  'color.ui=never',
  '-c',
  'core.commitGraph=false',
] as const;

/** Test and bench hook: one line per git process spawned, to prove constant counts. */
function trace(args: readonly string[]): void {
  const file = process.env.GUARD_TRACE_GIT;
  if (file) appendFileSync(file, args.join(' ').replace(/\n/g, ' ') + '\n');
}

export function gitSpawnArgs(args: readonly string[]): string[] {
  trace(args);
  return [...GIT_GLOBAL_ARGS, ...args];
}

export function git(args: readonly string[], opts: GitOptions): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', gitSpawnArgs(args), {
      cwd: opts.cwd,
      env: gitEnv(opts.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const unwatch = writes(args) ? () => {} : watchDeadline(child, () => (timedOut = true));
    const more = opts.thenInput ? secondPart(child.stdin, opts.thenInput) : null;
    child.stdout.on('data', (b: Buffer) => (out.push(b), more?.seen(out)));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) =>
      reject(
        new GuardError(
          'E_GIT',
          `could not run git: ${e.message}`,
          'install git 2.25 or newer and put it on PATH',
        ),
      ),
    );
    child.stdin.on('error', () => {
      /* git may exit before reading all input; its exit code tells */
    });
    child.on('close', (code) => {
      unwatch();
      if (timedOut) return reject(timeoutError());
      if (more?.failed) return reject(more.failed);
      const result = {
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(err).toString('utf8'),
        code: code ?? 128,
      };
      if (result.code === 0 || opts.okCodes?.includes(result.code)) resolve(result);
      else reject(gitFailure(args, result));
    });
    if (more) child.stdin.write(opts.input ?? '');
    else child.stdin.end(opts.input ?? '');
  });
}

/**
 * The second part of a two-part input (GitOptions.thenInput), written once stdout holds `lines`
 * lines; stdin is ended then. When `rest` throws, stdin is ended with nothing more (git reads an
 * input cut short and fails) and the error is kept as the command's (`failed`).
 */
function secondPart(
  stdin: NodeJS.WritableStream,
  then: NonNullable<GitOptions['thenInput']>,
): { seen(out: Buffer[]): void; failed?: unknown } {
  let done = false;
  const part: { seen(out: Buffer[]): void; failed?: unknown } = {
    seen(out) {
      if (done) return;
      const text = Buffer.concat(out).toString('utf8');
      if (text.split('\n').length - 1 < then.lines) return;
      done = true;
      try {
        stdin.end(then.rest(text));
      } catch (e) {
        part.failed = e;
        stdin.end();
      }
    },
  };
  return part;
}

export function gitFailure(
  args: readonly string[],
  r: { stderr: string; code: number },
): GuardError {
  const first = r.stderr.split('\n').find((l) => l.trim()) ?? `exit code ${r.code}`;
  if (/not a git repository/i.test(first)) {
    return new GuardError(
      'E_NOT_A_REPO',
      'not a git repository',
      'run guard inside a git work tree, or pass --cwd DIR',
    );
  }
  // e.g. `git add` in a checkpoint: "error: open("secret.txt"): Permission denied"
  if (/permission denied/i.test(first)) {
    return new GuardError(
      'E_UNREADABLE',
      `git ${args[0]} could not read a file: ${first.replace(/^(fatal|error): /, '')}`,
      'fix its permissions (or move it away), then run guard again',
    );
  }
  return new GuardError(
    'E_GIT',
    `git ${args[0]} failed: ${first.replace(/^(fatal|error): /, '')}`,
    'run the same git command by hand to see why; GUARD_DEBUG=1 shows more',
  );
}

/** Split NUL-terminated output (`-z`) into fields, dropping the trailing empty one. */
export function splitZ(buf: Buffer): string[] {
  const parts = buf.toString('utf8').split('\0');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
}
