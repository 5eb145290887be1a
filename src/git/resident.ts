import { spawn, type ChildProcess } from 'node:child_process';
import { lstat, readFile, readdir, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { GuardError } from '../core/errors.js';
import { budgetEnd, timeoutError, watchDeadline } from '../runtime/deadline.js';
import { faultPoint } from '../runtime/faults.js';
import { batchParser, type CatFileOptions, type CatResult } from './catfile.js';
import { discoverRepo, openRepo, type Repo } from './repo.js';
import { residentGit } from './resident-switch.js';
import { gitEnv, gitSpawnArgs } from './run.js';

/**
 * What guard keeps across tool calls when it runs inside a harness's own
 * process (src/plugin): where the repository of a folder is, and one
 * `git cat-file --batch-command` per work tree. Everywhere else each read
 * starts its own git (git/resident-switch.ts stays unset).
 *
 * Nothing kept may answer what a fresh git would not, whatever the agent's
 * own git did between two calls, so every use first looks again, with a few
 * stats and no process:
 * - a folder's repository: every folder from it up to its work tree still
 *   has no `.git` (nor `HEAD`) of its own; the work tree, its `.git` (file
 *   or folder, and what a `.git` file says), the git dir and the common dir
 *   are the same inodes; the repository's config files unchanged. Else one
 *   rev-parse again (a repository moved, deleted, re-inited, a nested one
 *   made, a worktree's link rewritten, a GIT_* variable of the process
 *   changed).
 * - a cat-file: git resolves every name afresh (refs, HEAD, packed-refs,
 *   which git re-reads when it changes) and finds objects written after it
 *   started (loose objects are looked up each time; a pack it does not know
 *   makes it look at the pack folder again). What it would keep that a new
 *   git would not see: a pack that was deleted (repack -ad, gc: it may still
 *   read the objects pruned with it), the config, alternates, shallow and
 *   grafts it read once, and its environment. So it is started again when
 *   the repository's answer changed, one of its packs is gone, one of those
 *   files or a GIT_* variable changed;
 *   when it died or did not answer in time (killed, then started with the
 *   next read); names of the index (`:path`) never go to it.
 * The processes never keep the harness alive (unref'd while idle), end with
 * their stdin when it exits, and end after IDLE_MS unused.
 */

/** A resident process unused this long ends (the next read starts one). */
const IDLE_MS = 5 * 60_000;
/** At most this many work trees keep a cat-file (the least recently used ends). */
const MAX_CATS = 8;
/** Folders whose repository is kept. */
const MAX_FOLDERS = 256;
/** Hook calls under way in withCallCatFile (resident reads for the call alone). */
let callDepth = 0;

/** Turn resident reads on for this process (the plugin, once). GUARD_PLUGIN_RESIDENT=0 keeps every read its own process. */
export function activateResident(): void {
  if (residentGit.catFile || process.env.GUARD_PLUGIN_RESIDENT === '0') return;
  residentGit.openRepo = openKept;
  residentGit.catFile = residentCatFile;
  process.once('exit', closeResident);
}

/**
 * One hook call of a short-lived guard (`guard hook`, a process per event) with its reads sent to one
 * cat-file per work tree, ended with the call: a write's before event and a shell call's after
 * event read HEAD's configs and the session bases at once, two git processes otherwise (issue 22,
 * S2). Nothing outlives the call, so nothing kept can answer what a fresh git would not. Where
 * resident reads are on already (the plugin, the resident hook's server) the call runs as it is.
 */
export async function withCallCatFile<T>(run: () => Promise<T>): Promise<T> {
  if (residentGit.catFile && callDepth === 0) return run();
  residentGit.catFile = residentCatFile;
  callDepth++;
  try {
    return await run();
  } finally {
    if (--callDepth === 0) {
      delete residentGit.catFile;
      closeResident();
    }
  }
}

/** End every resident process and forget every repository (tests; a harness that unloads guard). */
export function closeResident(): void {
  for (const c of cats.values()) c.close();
  cats.clear();
  folders.clear();
}

/** The resident cat-files' process ids (tests: none may outlive the harness). */
export function residentPids(): number[] {
  return [...cats.values()].flatMap((c) =>
    c.dead || c.child.pid === undefined ? [] : [c.child.pid],
  );
}

/* ------------------------------------------------------------ discovery */

interface KeptRepo {
  repo: Repo;
  print: string;
}

const folders = new Map<string, KeptRepo>();

/** The process's GIT_* variables (GIT_DIR, GIT_OBJECT_DIRECTORY, GIT_CONFIG_*, ...): any change is a new answer and a new process. */
function gitVars(): string {
  return Object.keys(process.env)
    .filter((k) => k.startsWith('GIT_'))
    .sort()
    .map((k) => `${k}=${process.env[k]}`)
    .join('\0');
}

/** openRepo, kept per folder while its print holds. */
async function openKept(cwd: string): Promise<Repo> {
  const key = gitVars() + '\0' + cwd;
  const kept = folders.get(key);
  if (kept && (await repoPrint(cwd, kept.repo).catch(() => null)) === kept.print) {
    folders.delete(key);
    folders.set(key, kept);
    return kept.repo;
  }
  folders.delete(key);
  // what was there changed: a process started for it ends now, not when it is next asked
  if (kept) {
    cats.get(cwd)?.close();
    cats.delete(cwd);
  }
  // the print before the rev-parse: whatever changes from here on is seen by the next call
  const before = await repoPrint(cwd, null).catch(() => null);
  const repo = await discoverRepo(cwd);
  const print = before === null ? null : await repoPrint(cwd, repo).catch(() => null);
  // kept only when the folder's walk was the same before the rev-parse as after it
  if (print !== null && before !== null && print.startsWith(before)) {
    folders.set(key, { repo, print });
    if (folders.size > MAX_FOLDERS) folders.delete(folders.keys().next().value!);
  }
  return repo;
}

/**
 * A file's identity and state, or how it is missing. A folder's identity
 * only (its entries come and go with every git command), unless `entries`:
 * then whether one was added or removed (its times) too.
 */
async function sig(file: string, entries = false): Promise<string> {
  try {
    const s = await lstat(file, { bigint: true });
    const id = `${s.dev}:${s.ino}:${s.mode}:${s.uid}`;
    // a link: what it leads to too (a config linked out of .git changes with the link untouched: adv3)
    if (s.isSymbolicLink()) {
      const to = await realpath(file).catch(() => null);
      return `${id}:${await readlink(file)}>${to === null ? '-' : await sig(to, entries)}`;
    }
    return s.isDirectory() && !entries ? id : `${id}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch (err) {
    return `-${(err as NodeJS.ErrnoException).code ?? '?'}`;
  }
}

/**
 * What git's discovery from `cwd` reads: the folder's real path and, from
 * it up to the first folder with a `.git`, each folder's `.git` and `HEAD`;
 * with `repo` (after the rev-parse), then the work tree, what its `.git`
 * file says, the git and common dirs and their config. Throws when the
 * folder is gone, or the walk does not end at the work tree (GIT_DIR and
 * alike: not kept). The print without `repo` is the start of the print with
 * it when the walk found the same.
 */
async function repoPrint(cwd: string, repo: Repo | null): Promise<string> {
  const real = await realpath(cwd);
  const parts = [real];
  let d = real;
  for (;;) {
    const [dotGit, head] = await Promise.all([
      sig(path.join(d, '.git')),
      sig(path.join(d, 'HEAD')),
    ]);
    parts.push(dotGit, head);
    if (!dotGit.startsWith('-') || d === path.dirname(d)) break;
    d = path.dirname(d);
  }
  if (!repo) return parts.join('|');
  const [root, ...more] = await Promise.all([
    realpath(repo.root),
    sig(repo.root),
    readFile(path.join(repo.root, '.git'), 'utf8').catch(() => ''),
    sig(repo.gitDir),
    sig(repo.commonDir),
    sig(path.join(repo.gitDir, 'commondir')),
    sig(path.join(repo.commonDir, 'config')),
    sig(path.join(repo.gitDir, 'config.worktree')),
  ]);
  if (d !== root) throw new Error('the walk does not end at the work tree');
  return [...parts, '#', ...more].join('|');
}

/* ------------------------------------------------------------- cat-file */

/** One request on a resident cat-file: its parser, how many answers, and who waits. */
interface Pending {
  parser: ReturnType<typeof batchParser>;
  count: number;
  onProgress: CatFileOptions['onProgress'];
  resolve: (r: CatResult[]) => void;
  reject: (e: unknown) => void;
}

/** A `git cat-file --batch-command --buffer` kept for one work tree. */
class ResidentCat {
  readonly child: ChildProcess;
  dead = false;
  /** The repository's answer it was started for (openKept's object: a new one is a new answer). */
  readonly repo: Repo;
  /** The files it read once (store print). */
  readonly print: string;
  packDir: string;
  /** Pack folder's state when last listed, and every pack seen there since the start. */
  packSig = '';
  packs = new Set<string>();
  private tail: Promise<unknown> = Promise.resolve();
  /** Reads asked and not yet answered. */
  private waiting = 0;
  private pending: Pending | null = null;
  private stderr = '';
  private idle: NodeJS.Timeout | undefined;

  constructor(cwd: string, repo: Repo, print: string) {
    this.repo = repo;
    this.print = print;
    this.packDir = path.join(repo.commonDir, 'objects', 'pack');
    this.child = spawn('git', gitSpawnArgs(['cat-file', '--batch-command', '--buffer']), {
      cwd,
      env: gitEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const c = this.child;
    c.on('error', (e) => this.fail(new GuardError('E_GIT', `could not run git: ${e.message}`)));
    c.on('close', (code) => this.fail(this.exitError(code)));
    c.stdin!.on('error', () => {});
    c.stderr!.on('data', (b: Buffer) => (this.stderr = (this.stderr + b.toString()).slice(-4096)));
    c.stdout!.on('data', (b: Buffer) => this.data(b));
    this.hold(false);
  }

  /** Keep the harness alive only while a read waits for git. */
  private hold(on: boolean): void {
    const c = this.child;
    for (const h of [c, c.stdin, c.stdout, c.stderr] as Array<{ ref?(): void; unref?(): void }>)
      if (on) h.ref?.();
      else h.unref?.();
  }

  /** The objects named, in order; one read at a time. */
  read(names: readonly string[], o: CatFileOptions): Promise<CatResult[]> {
    const run = () => this.request(names, o);
    const p = this.tail.then(run, run);
    this.waiting++;
    this.tail = p.catch(() => {}).finally(() => this.waiting--);
    return p;
  }

  get busy(): boolean {
    return this.waiting > 0;
  }

  private request(names: readonly string[], o: CatFileOptions): Promise<CatResult[]> {
    if (this.dead) return Promise.reject(new GuardError('E_GIT', 'git cat-file stopped early'));
    const info = names.map((_, i) => o.infoOnly?.(i) ?? false);
    clearTimeout(this.idle);
    this.hold(true);
    const p = new Promise<CatResult[]>((resolve, reject) => {
      this.pending = {
        parser: batchParser(info, o.maxBytes),
        count: names.length,
        onProgress: o.onProgress,
        resolve,
        reject,
      };
    });
    // a git that does not answer in time is killed (the call is refused; the next read starts another)
    let timedOut = false;
    const kill = () => {
      timedOut = true;
      this.child.kill('SIGKILL');
    };
    const end = budgetEnd() ?? Date.now() + (Number(process.env.GUARD_HOOK_TIMEOUT) || 20) * 1000;
    const timer = setTimeout(kill, Math.max(0, end - Date.now()));
    const unwatch = watchDeadline(this.child, () => (timedOut = true));
    this.child.stdin!.write(
      names.map((n, i) => `${info[i] ? 'info' : 'contents'} ${n}\n`).join('') + 'flush\n',
    );
    return p
      .catch((err: unknown) => {
        throw timedOut ? timeoutError() : err;
      })
      .finally(() => {
        clearTimeout(timer);
        unwatch();
        if (this.dead) return;
        this.hold(false);
        this.idle = setTimeout(() => this.close(), IDLE_MS).unref();
      });
  }

  private data(chunk: Buffer): void {
    const p = this.pending;
    if (!p) return this.close(); // output nobody asked for: not the protocol guard speaks
    try {
      faultPoint('catfile:reading');
      p.parser.feed(chunk);
    } catch (err) {
      this.pending = null;
      p.reject(err);
      return this.close();
    }
    if (p.parser.results.length < p.count) return p.onProgress?.(p.parser.results);
    this.pending = null;
    p.onProgress?.(p.parser.results);
    p.resolve(p.parser.results);
  }

  private exitError(code: number | null): GuardError {
    const msg = this.stderr.split('\n').find((l) => l.trim()) ?? `exit code ${code ?? 'signal'}`;
    return new GuardError('E_GIT', `git cat-file failed: ${msg.replace(/^(fatal|error): /, '')}`);
  }

  private fail(err: GuardError): void {
    this.dead = true;
    clearTimeout(this.idle);
    const p = this.pending;
    this.pending = null;
    p?.reject(err);
  }

  close(): void {
    if (!this.dead) this.child.kill('SIGKILL');
    this.fail(new GuardError('E_GIT', 'git cat-file stopped early'));
    // (the SIGKILL'd child is reaped by node when it exits: 'close' still fires)
    this.hold(false);
  }
}

const cats = new Map<string, ResidentCat>();

/** What a cat-file reads once and a fresh one would read again: objects, alternates, shallow, grafts, its GIT_* environment. */
async function storePrint(repo: Repo): Promise<string> {
  const objects = path.join(repo.commonDir, 'objects');
  const files = await Promise.all([
    sig(objects),
    sig(path.join(objects, 'info', 'alternates')),
    sig(path.join(repo.commonDir, 'shallow')),
    sig(path.join(repo.commonDir, 'info', 'grafts')),
  ]);
  // (and the environment it was started with)
  return [...files, gitVars()].join('|');
}

/** Has a pack the process may have opened been deleted since? (new packs it finds by itself) */
async function packGone(cat: ResidentCat): Promise<boolean> {
  const now = await sig(cat.packDir, true);
  if (now === cat.packSig) return false;
  const names = await readdir(cat.packDir).catch(() => [] as string[]);
  const packs = new Set(names.filter((n) => n.endsWith('.pack')));
  if ([...cat.packs].some((p) => !packs.has(p))) return true;
  cat.packSig = now;
  for (const p of packs) cat.packs.add(p);
  return false;
}

/** One look-and-start at a time: two reads of one work tree at once share one process. */
let starting: Promise<unknown> = Promise.resolve();

/** The work tree's resident cat-file, after looking again whether it still holds: a new one when there is none or it no longer does. */
function catFor(cwd: string): Promise<ResidentCat> {
  const run = async () => {
    // (one hook call, withCallCatFile: found as every call finds it, from the file system first)
    const repo = await (callDepth > 0 ? openRepo(cwd) : openKept(cwd));
    const print = await storePrint(repo);
    let cat = cats.get(cwd);
    // (openRepo makes a new Repo each time: the same repository is the same folders)
    const other = (r: Repo) =>
      callDepth > 0
        ? r.root !== repo.root || r.gitDir !== repo.gitDir || r.commonDir !== repo.commonDir
        : r !== repo;
    if (cat && (cat.dead || other(cat.repo) || cat.print !== print || (await packGone(cat)))) {
      cat.close();
      cats.delete(cwd);
      cat = undefined;
    }
    if (!cat) {
      cat = new ResidentCat(cwd, repo, print);
      // the packs it may open: listed before it reads anything
      await packGone(cat);
      // the least recently used idle one ends (one reading now is left to finish)
      const idle = [...cats].find(([, c]) => !c.busy);
      if (cats.size >= MAX_CATS && idle) {
        idle[1].close();
        cats.delete(idle[0]);
      }
    }
    cats.delete(cwd);
    cats.set(cwd, cat);
    return cat;
  };
  const p = starting.then(run, run);
  starting = p.catch(() => {});
  return p;
}

/** catFileRead in the plugin. A process that died under a read (killed by the agent's own command) is started again once: reads change nothing. */
async function residentCatFile(
  cwd: string,
  names: readonly string[],
  o: CatFileOptions,
): Promise<CatResult[]> {
  const cat = await catFor(cwd);
  try {
    return await cat.read(names, o);
  } catch (err) {
    if ((err instanceof GuardError && err.code === 'E_TIMEOUT') || !cat.dead) throw err;
    return (await catFor(cwd)).read(names, o);
  }
}
