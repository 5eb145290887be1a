import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  realpathSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { guardSync } from './inproc.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = path.join(ROOT, 'dist', 'cli', 'main.js');
export const FIXTURES = path.join(ROOT, 'fixtures');

export function fixture(name: string): string {
  return readFileSync(path.join(FIXTURES, name), 'utf8');
}

/** Env for child processes: no user git config, no signing, no terminal answers. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env))
    if (k.startsWith('GIT_') || k.startsWith('GUARD_')) delete env[k];
  delete env.NO_COLOR;
  // guard ci reads pull request reviews through these: never from the environment a test runs in
  delete env.GITHUB_TOKEN;
  delete env.GH_TOKEN;
  // ... and GitLab merge request approvals through these (GITLAB_CI=true picks GitLab over GitHub)
  delete env.GITLAB_CI;
  delete env.GITLAB_TOKEN;
  delete env.FORCE_COLOR;
  // set when the tests run inside an agent's shell: guard then opens no terminal (ui/terminal.ts)
  delete env.CLAUDECODE;
  delete env.GEMINI_CLI;
  Object.assign(env, {
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.com',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.com',
  });
  if (RESIDENT_DIR) Object.assign(env, { GUARD_RESIDENT: '1', GUARD_RESIDENT_DIR: RESIDENT_DIR });
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/**
 * GUARD_TEST_RESIDENT=1: every CLI call of the test file is a process of its own (as
 * GUARD_TEST_SPAWN=1) and every `guard hook` goes through the resident server
 * (GUARD_RESIDENT=1), one per test file, its socket in a folder of the file's own. The folder
 * is removed after the file, and a server whose socket is gone ends within seconds
 * (src/cli/resident-server.ts): the run of the hook tests with the resident hook on
 * (docs/performance.md, "The resident hook").
 */
const RESIDENT_DIR =
  process.env.GUARD_TEST_RESIDENT === '1'
    ? path.join(mkdtempSync(path.join(tmpdir(), 'guard-resident-test-')), 'sock')
    : null;
if (RESIDENT_DIR)
  afterAll(() => rmSync(path.dirname(RESIDENT_DIR), { recursive: true, force: true }));

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function toRun(r: SpawnSyncReturns<Buffer>): Run {
  return {
    code: r.status ?? 128,
    stdout: r.stdout.toString('utf8'),
    stderr: r.stderr.toString('utf8'),
  };
}

export class TestRepo {
  readonly dir: string;
  constructor(dir: string) {
    this.dir = dir;
  }

  git(
    args: string[],
    opts: {
      input?: string | Buffer;
      env?: Record<string, string | undefined>;
      allowFail?: boolean;
    } = {},
  ): string {
    const r = spawnSync('git', args, { cwd: this.dir, env: cleanEnv(opts.env), input: opts.input });
    if (r.status !== 0 && !opts.allowFail) {
      throw new Error(`git ${args.join(' ')} failed (${r.status}): ${r.stderr.toString()}`);
    }
    return r.stdout.toString('utf8');
  }

  gitRun(args: string[], env: Record<string, string | undefined> = {}): Run {
    return toRun(spawnSync('git', args, { cwd: this.dir, env: cleanEnv(env) }));
  }

  write(file: string, content: string | Buffer): void {
    const p = path.join(this.dir, file);
    mkdirSync(path.dirname(p), { recursive: true });
    writeFileSync(p, content);
  }

  read(file: string): string {
    return readFileSync(path.join(this.dir, file), 'utf8');
  }

  commitAll(message = 'commit'): string {
    this.git(['add', '-A']);
    this.git(['commit', '-q', '--no-verify', '-m', message]);
    return this.git(['rev-parse', 'HEAD']).trim();
  }

  /**
   * The CLI, in auto mode unless env says otherwise: in this test process
   * (test/inproc.ts guardSync) unless the call needs a process of its own
   * (needsProcess), when it is the built CLI spawned, as guardSpawned.
   */
  guard(
    args: string[],
    opts: { env?: Record<string, string | undefined>; input?: string | Buffer; cwd?: string } = {},
  ): Run {
    if (needsProcess(args, opts.env)) return this.guardSpawned(args, opts);
    return guardSync(args, { cwd: opts.cwd ?? this.dir, env: opts.env, input: opts.input ?? '' });
  }

  /** The built CLI (dist/cli/main.js, the bundle) in a process of its own. */
  guardSpawned(
    args: string[],
    opts: { env?: Record<string, string | undefined>; input?: string | Buffer; cwd?: string } = {},
  ): Run {
    const env = cleanEnv({ CI: 'true', ...opts.env });
    return toRun(
      spawnSync(process.execPath, [CLI, ...args], {
        cwd: opts.cwd ?? this.dir,
        env,
        input: opts.input ?? '',
      }),
    );
  }

  guardJson(
    args: string[],
    opts: { env?: Record<string, string | undefined>; input?: string | Buffer } = {},
  ): { code: number; json: any; stderr: string } {
    const r = this.guard([...args, '--json'], opts);
    let json: any;
    try {
      json = JSON.parse(r.stdout);
    } catch {
      throw new Error(
        `stdout is not one JSON document (exit ${r.code}):\n${r.stdout}\nstderr:\n${r.stderr}`,
      );
    }
    return { code: r.code, json, stderr: r.stderr };
  }

  refs(prefix = 'refs/guard/'): string[] {
    return this.git(['for-each-ref', '--format=%(refname)', prefix]).split('\n').filter(Boolean);
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

let spawnAll = process.env.GUARD_TEST_SPAWN === '1' || process.env.GUARD_TEST_RESIDENT === '1';
/**
 * Every TestRepo.guard of this test file spawns the built CLI. For files
 * whose subject is the process: signals, kills, locks between processes.
 * GUARD_TEST_SPAWN=1 does it for every file (to compare the two ways).
 */
export function spawnEveryCall(): void {
  spawnAll = true;
}

/**
 * What a call in process cannot be: GUARD_FAULT* (the fault points kill the
 * process), the hook's own time budget (it ends the process), `init` (husky
 * changes the process's cwd, which a worker thread may not) and `run` (it
 * hands its terminal and signals to a command).
 */
function needsProcess(args: string[], env: Record<string, string | undefined> = {}): boolean {
  if (spawnAll || args[0] === 'init' || args[0] === 'run') return true;
  if (args[0] === 'hook' && args.includes('--timeout')) return true;
  return Object.keys(env).some((k) => k.startsWith('GUARD_FAULT') || k === 'GUARD_HOOK_TIMEOUT');
}

const repos: TestRepo[] = [];
const outsideDirs: string[] = [];

let initDir: string | undefined;
/** A folder whose .git is a fresh `git init -q -b main`, made once per test file. */
function initTemplate(): string {
  if (initDir === undefined) {
    const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'guard-init-')));
    new TestRepo(dir).git(['init', '-q', '-b', 'main']);
    initDir = dir;
  }
  return path.join(initDir, '.git');
}
afterAll(() => {
  if (initDir !== undefined) rmSync(initDir, { recursive: true, force: true });
  initDir = undefined;
});

const REPO_CONFIG =
  '[commit]\n\tgpgsign = false\n[core]\n\thooksPath = /dev/null\n[maintenance]\n\tauto = false\n[gc]\n\tauto = 0\n';

/** A fresh repository in a temp folder, with hooks, signing and automatic maintenance off. */
export function makeRepo(
  files: Record<string, string | Buffer> = {},
  opts: { commit?: boolean } = {},
): TestRepo {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'guard-test-')));
  const repo = new TestRepo(dir);
  // what `git init -q -b main` makes, copied from the one this test file ran (~25 ms less a repository here)
  cpSync(initTemplate(), path.join(dir, '.git'), { recursive: true });
  // as `git config` writes them, without more processes: no signing, no hooks, and no
  // automatic maintenance (each `git commit` would otherwise start `git maintenance run
  // --auto`, ~25 ms here, for repositories too small to ever need it). guard's own
  // background gc (src/git/records.ts) passes its own -c gc.auto=N, so it still runs.
  appendFileSync(path.join(dir, '.git', 'config'), REPO_CONFIG);
  for (const [f, c] of Object.entries(files)) repo.write(f, c);
  if (opts.commit !== false && Object.keys(files).length > 0) {
    repo.git(['add', '-A']);
    repo.git(['commit', '-q', '--no-verify', '-m', 'base']);
  }
  repos.push(repo);
  return repo;
}

export function cleanupRepos(): void {
  for (const r of repos.splice(0)) r.cleanup();
  for (const d of outsideDirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** A folder outside every repository (symlink targets, decisions files); removed by cleanupRepos. */
export function outsideDir(): string {
  const d = realpathSync(mkdtempSync(path.join(tmpdir(), 'guard-outside-')));
  outsideDirs.push(d);
  return d;
}

/** Where `guard start NAME` puts a lane. */
export function lanePath(repo: TestRepo, name: string): string {
  return path.join(repo.dir, '.guard', 'lanes', name);
}

/** Start lane NAME with the built CLI; its path. */
export function startLane(repo: TestRepo, name = 'agent'): string {
  const r = repo.guard(['start', name]);
  if (r.code !== 0) throw new Error(`guard start failed: ${r.stderr}`);
  return lanePath(repo, name);
}

/** Write a file into a lane (folders made as needed). */
export function laneWrite(lane: string, file: string, content: string | Buffer): void {
  const p = path.join(lane, file);
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, content);
}

export function lines(n: number, prefix = 'line'): string {
  let s = '';
  for (let i = 1; i <= n; i++) s += `${prefix} ${i}\n`;
  return s;
}

/**
 * A repository with guard installed as a user would: `node_modules/.bin/guard`
 * (the built CLI), `guard init` (husky, relative core.hooksPath), and the
 * install committed through the hook. Returns the repo.
 *
 * The install (a guard init and a commit through the hook: seconds on a
 * loaded machine) runs once per `files` in a test process, into a template
 * folder; each call gets a copy of it. A copy is the same repository: guard
 * keeps no absolute path in it but the manifest of its hook files
 * (`.git/guard/gate.json`), rewritten for the copy's folder.
 */
export function installGuard(files: Record<string, string | Buffer>): TestRepo {
  const key = JSON.stringify(
    Object.entries(files).map(([f, c]) => [
      f,
      typeof c === 'string' ? c : `base64:${c.toString('base64')}`,
    ]),
  );
  let template = installTemplates.get(key);
  if (template === undefined) {
    template = freshInstall(files);
    installTemplates.set(key, template);
  }
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'guard-test-')));
  cpSync(template, dir, { recursive: true, verbatimSymlinks: true });
  const manifest = path.join(dir, '.git', 'guard', 'gate.json');
  // the paths are JSON strings: the folder's name holds no character JSON escapes
  const text = readFileSync(manifest, 'utf8').split(template).join(dir);
  writeFileSync(manifest, text);
  // the journal's word on the record (git/journal.ts noteGate), as guard init would have noted it here
  const gate = `gate ${createHash('sha256').update(text).digest('hex')}\n`;
  for (const [f, seal] of [
    ['journal', 'guard-journal-seal'],
    ['journal-pinned', 'guard-pinned-seal'],
  ] as const) {
    const file = path.join(dir, '.git', 'guard', f);
    appendFileSync(file, gate);
    // and sealed, as guard seals a note (src/git/journal-seal.ts): its size, the sha-256 of its last 256 bytes
    const buf = readFileSync(file);
    const last = buf.subarray(Math.max(0, buf.length - 256));
    const hash = createHash('sha256').update(last).digest('hex');
    writeFileSync(path.join(dir, '.git', 'info', seal), `v1 ${buf.length} ${hash}\n`);
  }
  const repo = new TestRepo(dir);
  repos.push(repo);
  return repo;
}

/** Installed templates of this test file, by their files; removed after its last test. */
const installTemplates = new Map<string, string>();
afterAll(() => {
  for (const d of installTemplates.values()) rmSync(d, { recursive: true, force: true });
  installTemplates.clear();
});

function freshInstall(files: Record<string, string | Buffer>): string {
  const repo = makeRepo(files);
  // a template, not a test's repository: cleanupRepos leaves it for the next copy
  repos.splice(repos.indexOf(repo), 1);
  repo.git(['config', '--unset', 'core.hooksPath']);
  mkdirSync(path.join(repo.dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(CLI, path.join(repo.dir, 'node_modules', '.bin', 'guard'));
  chmodSync(CLI, 0o755);
  const init = repo.guard(['init']);
  if (init.code !== 0) throw new Error(`guard init failed: ${init.stderr}`);
  repo.write('.gitignore', 'node_modules/\n');
  repo.git(['add', '-A']);
  const commit = repo.gitRun(['commit', '-q', '-m', 'install guard'], { CI: 'true' });
  if (commit.code !== 0) throw new Error(`the install commit failed: ${commit.stderr}`);
  return repo.dir;
}

/** Every file of the main tree (outside .git and .guard), bytes and kind, for byte-for-byte comparisons. */
export function snapshotTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(dir, rel))) {
      const r = rel ? `${rel}/${name}` : name;
      if (r === '.git' || r === '.guard') continue;
      const st = lstatSync(path.join(dir, r));
      if (st.isSymbolicLink()) out[r] = `link:${readlinkSync(path.join(dir, r))}`;
      else if (st.isDirectory()) walk(r);
      else
        out[r] =
          `${(st.mode & 0o777).toString(8)}:${readFileSync(path.join(dir, r)).toString('base64')}`;
    }
  };
  walk('');
  return out;
}

/** A Claude Code tool call's payload (PreToolUse, or PostToolUse with `post`) for session `session`. */
export function claudePayload(
  repo: TestRepo,
  session: string,
  tool: string,
  input: object,
  id: string,
  post = false,
): string {
  return JSON.stringify({
    session_id: session,
    transcript_path: '/tmp/t.jsonl',
    cwd: repo.dir,
    permission_mode: 'bypassPermissions',
    hook_event_name: post ? 'PostToolUse' : 'PreToolUse',
    tool_name: tool,
    tool_input: input,
    tool_use_id: id,
    ...(post ? { tool_response: {} } : {}),
  });
}

/** `guard hook claude` on a payload with every git process it starts traced (GUARD_TRACE_GIT): its decision, output and the git command lines. */
export function tracedHook(
  repo: TestRepo,
  payload: string,
): { decision: string | null; stdout: string; git: string[] } {
  const trace = path.join(outsideDir(), 'trace');
  const r = repo.guard(['hook', 'claude'], { input: payload, env: { GUARD_TRACE_GIT: trace } });
  if (r.code !== 0) throw new Error(`guard hook claude exited ${r.code}: ${r.stderr}`);
  const json = r.stdout.trim() ? JSON.parse(r.stdout) : null;
  const git = existsSync(trace) ? readFileSync(trace, 'utf8').split('\n').filter(Boolean) : [];
  return { decision: json?.hookSpecificOutput?.permissionDecision ?? null, stdout: r.stdout, git };
}

/** `guard hook claude` on that payload: its exit code, output and parsed answer. */
/** A repository with guard's global hooks and its Claude Code entry, as `guard init --global --agent claude` writes them. */
export function claudeRepo(files: Record<string, string> = { 'app.py': lines(10) }): TestRepo {
  const repo = makeRepo(files);
  repo.git(['config', '--unset', 'core.hooksPath']);
  const init = repo.guard(['init', '--global', '--agent', 'claude']);
  if (init.code !== 0) throw new Error(`guard init failed: ${init.stderr}`);
  return repo;
}

/** A Claude hook answer's permission decision (deny, ask, allow), or null when it said none. */
export const claudeDecision = (r: { json: any }): string | null =>
  r.json?.hookSpecificOutput?.permissionDecision ?? null;

export function claudeHook(
  repo: TestRepo,
  session: string,
  tool: string,
  input: object,
  id: string,
  post = false,
) {
  const r = repo.guard(['hook', 'claude'], {
    input: claudePayload(repo, session, tool, input, id, post),
  });
  return { ...r, json: r.stdout.trim() ? JSON.parse(r.stdout) : null };
}

/**
 * The hook calls' records that only a session chain holds (git/session-chain.ts): each link's
 * checkpoint (`<step>^`, when it has no ref of its own) and decision records, oldest first.
 */
export function chainedRecords(repo: TestRepo): {
  checkpoints: string[];
  decisions: string[];
  steps: string[];
  byId: Record<string, string>;
  /** Each step's commit by the name its ref would have had (its link's `step`). */
  byName: Record<string, string>;
} {
  const chains = repo.refs('refs/guard/sessions/').filter((r) => r.endsWith('/chain'));
  const out = {
    checkpoints: [] as string[],
    decisions: [] as string[],
    steps: [] as string[],
    byId: {} as Record<string, string>,
    byName: {} as Record<string, string>,
  };
  if (chains.length === 0) return out;
  const log = repo.git(['log', '--first-parent', '--format=%P%x00%B%x01', ...chains, '--']);
  for (const rec of log.split('\x01').reverse()) {
    const [parents, message] = rec.replace(/^\n/, '').split('\0');
    const body = /\n\n(\{.*\})\s*$/s.exec(message ?? '')?.[1];
    if (!parents || !body) continue;
    const link = JSON.parse(body) as {
      records?: string[];
      held?: boolean;
      step?: string;
      checkpoint?: string;
    };
    if (!link.step || !Array.isArray(link.records)) continue;
    const ps = parents.split(' ');
    if (link.held) out.checkpoints.push(`${ps[1]}^`);
    if (link.checkpoint) out.byId[link.checkpoint] = `${ps[1]}^`;
    out.steps.push(ps[1]!);
    out.byName[link.step] = ps[1]!;
    out.decisions.push(...ps.slice(2));
  }
  return out;
}

/** Every checkpoint guard keeps, whichever layout holds it: the refs, then the chained ones (revisions git reads). */
export function checkpointsOf(repo: TestRepo): string[] {
  return [...repo.refs('refs/guard/checkpoints/'), ...chainedRecords(repo).checkpoints];
}

/** Every decision record, whichever layout holds it. */
export function decisionsOf(repo: TestRepo): string[] {
  return [...repo.refs('refs/guard/decisions/'), ...chainedRecords(repo).decisions];
}

/** A checkpoint by its id, whichever layout holds it: its ref, else `<step>^` from its session chain. */
export function checkpointRev(repo: TestRepo, id: string): string {
  const ref = `refs/guard/checkpoints/${id}`;
  return repo.refs(ref).includes(ref) ? ref : (chainedRecords(repo).byId[id] ?? ref);
}

/** The session steps, whichever layout holds them: step refs (not the policy anchors, not a chain), then the chained steps. */
export function stepsOf(repo: TestRepo): string[] {
  const refs = repo
    .refs('refs/guard/sessions/')
    .filter((r) => !r.includes('/policy/') && !r.endsWith('/chain'));
  return [...refs, ...chainedRecords(repo).steps];
}
