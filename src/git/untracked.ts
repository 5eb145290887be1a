import { spawn } from 'node:child_process';
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { GuardError } from '../core/errors.js';
import type { SkippedFile } from './checkpoint.js';
import type { Repo } from './repo.js';
import { gitFailure, gitSpawnArgs } from './run.js';

/*
 * The untracked files of a whole-tree checkpoint (git/checkpoint.ts): those
 * under the cap, fed to one `git update-index` a window at a time while the
 * budget lasts; each one left out is said with why.
 */

/**
 * Git's change detection at full strength for guard's own reads of the work
 * tree, whatever the user configured: ctime and inode count (a file rewritten
 * with its size and mtime put back is still seen), no assume-unchanged by
 * config, no file-system monitor daemon to trust.
 */
export const STRICT_STAT = [
  '-c',
  'core.trustctime=true',
  '-c',
  'core.checkStat=default',
  '-c',
  'core.ignoreStat=false',
  '-c',
  'core.fsmonitor=false',
];

/**
 * Add the untracked files that are under the cap to the temporary index, one
 * `git update-index --add --stdin` process fed a few files at a time while
 * the budget lasts; everything left out is returned with why. A name git
 * refuses (`git~1`) is skipped by git ("Ignoring path") and recorded here,
 * not a failure. An unreadable file still fails (E_UNREADABLE), as before.
 */
export async function addUntracked(
  repo: Repo,
  /** The temporary index (GIT_INDEX_FILE) and the trusted environment. */
  gitEnv: NodeJS.ProcessEnv,
  names: readonly string[],
  limits: { maxBytes: number; budgetMs: number },
): Promise<{ skipped: SkippedFile[]; added: string[] }> {
  const { skipped, todo } = await underTheCap(repo.root, names, limits.maxBytes);
  if (todo.length === 0) return { skipped, added: [] };
  const { sent, refused, removed } = await feedUpdateIndex(
    repo.root,
    gitEnv,
    todo,
    limits.budgetMs,
  );
  for (const f of todo.slice(0, sent))
    if (refused.has(f.path)) skipped.push({ path: f.path, reason: 'name', bytes: f.bytes });
  for (const f of todo.slice(sent)) skipped.push({ path: f.path, reason: 'time', bytes: f.bytes });
  const added = todo
    .slice(0, sent)
    .filter((f) => !refused.has(f.path) && !removed.has(f.path))
    .map((f) => f.path);
  return { skipped, added };
}

/** The untracked files to add, with their sizes; the nested repositories (`dir/`) and files over the cap left out. */
async function underTheCap(
  root: string,
  names: readonly string[],
  maxBytes: number,
): Promise<{ skipped: SkippedFile[]; todo: Array<{ path: string; bytes: number }> }> {
  const skipped: SkippedFile[] = [];
  const todo: Array<{ path: string; bytes: number }> = [];
  const sizes = await Promise.all(
    names.map((n) =>
      n.endsWith('/')
        ? Promise.resolve(null)
        : lstat(path.join(root, n)).then(
            (s) => s.size,
            () => 0,
          ),
    ),
  );
  names.forEach((n, i) => {
    const bytes = sizes[i];
    if (bytes === null || bytes === undefined)
      skipped.push({ path: n.replace(/\/$/, ''), reason: 'repository' });
    else if (bytes > maxBytes) skipped.push({ path: n, reason: 'size', bytes });
    else todo.push({ path: n, bytes });
  });
  return { skipped, todo };
}

/** Feed a window of files; more as git reports them added ("add 'P'") or refused ("Ignoring path P"). */
const WINDOW_FILES = 256;
const WINDOW_BYTES = 8 << 20;

/**
 * One `update-index --add --stdin` fed the files a window at a time while the budget lasts: how
 * many were sent, and which git refused (a name it will not hold) or removed (gone since listed).
 */
async function feedUpdateIndex(
  cwd: string,
  gitEnv: NodeJS.ProcessEnv,
  todo: ReadonlyArray<{ path: string; bytes: number }>,
  budgetMs: number,
): Promise<{ sent: number; refused: Set<string>; removed: Set<string> }> {
  const end = Date.now() + budgetMs;
  // --remove: a file deleted since ls-files listed it is nothing to add, not an error
  const child = spawn(
    'git',
    gitSpawnArgs([
      ...STRICT_STAT,
      'update-index',
      '--add',
      '--remove',
      '--verbose',
      '-z',
      '--stdin',
    ]),
    {
      cwd,
      env: { ...process.env, ...gitEnv },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  const feeder = windowFeeder(todo, child.stdin, end);
  let errText = '';
  const refused = new Set<string>();
  const removed = new Set<string>();
  linesOf(child.stdout, (lines) => {
    let n = 0;
    for (const l of lines) {
      if (l.startsWith("add '")) n++;
      else if (l.startsWith("remove '")) {
        removed.add(l.slice(8, -1));
        n++;
      }
    }
    feeder.ack(n);
  });
  const errRest = linesOf(child.stderr, (lines) => {
    let n = 0;
    for (const l of lines) {
      const m = /^Ignoring path (.*)$/.exec(l);
      if (m) {
        refused.add(m[1]!);
        n++;
      } else if (l.trim()) errText += `${l}\n`;
    }
    if (n) feeder.ack(n);
  });
  const timer = setTimeout(() => feeder.pump(), Math.max(0, budgetMs) + 1);
  const code = await new Promise<number>((resolve, reject) => {
    child.on('error', (e) => reject(new GuardError('E_GIT', `could not run git: ${e.message}`)));
    child.stdin.on('error', () => {});
    child.on('close', (c) => resolve(c ?? 128));
    feeder.pump();
  });
  clearTimeout(timer);
  if (code !== 0) throw gitFailure(['update-index'], { stderr: errText + errRest(), code });
  return { sent: feeder.sent(), refused, removed };
}

/** Sends files while fewer than a window are unanswered and the budget lasts; ends stdin when all are sent or time is up. */
function windowFeeder(
  todo: ReadonlyArray<{ path: string; bytes: number }>,
  stdin: Writable,
  end: number,
): { pump(): void; ack(n: number): void; sent(): number } {
  let acked = 0;
  let sent = 0;
  let sentBytes = 0;
  let ackedBytes = 0;
  let ended = false;
  const pump = () => {
    if (ended) return;
    const batch: string[] = [];
    while (
      sent < todo.length &&
      sent - acked < WINDOW_FILES &&
      sentBytes - ackedBytes < WINDOW_BYTES
    ) {
      if (Date.now() >= end) break;
      batch.push(todo[sent]!.path);
      sentBytes += todo[sent]!.bytes;
      sent++;
    }
    if (batch.length > 0) stdin.write(batch.join('\0') + '\0');
    if (sent === todo.length || (Date.now() >= end && acked === sent)) {
      ended = true;
      stdin.end();
    }
  };
  const ack = (n: number) => {
    for (let k = 0; k < n && acked < sent; k++) ackedBytes += todo[acked++]!.bytes;
    pump();
  };
  return { pump, ack, sent: () => sent };
}

/** Calls `each` with the whole lines of a text stream as they arrive; returns a reader of what follows the last LF. */
function linesOf(stream: Readable, each: (lines: string[]) => void): () => string {
  let rest = '';
  stream.setEncoding('utf8').on('data', (s: string) => {
    rest += s;
    const lines = rest.split('\n');
    rest = lines.pop()!;
    each(lines);
  });
  return () => rest;
}
