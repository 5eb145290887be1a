import { createRequire } from 'node:module';
import type * as ChildProcess from 'node:child_process';
import type * as Fs from 'node:fs';
import type * as Net from 'node:net';
import type * as Tty from 'node:tty';
import {
  PROTOCOL,
  buildKey,
  privateDir,
  residentDir,
  socketPath,
} from '../runtime/resident-place.js';

/**
 * `guard hook HARNESS` as a small client of the resident server
 * (cli/resident-server.ts): main.js loads this instead of the bundle when
 * the resident hook is on. It reads the payload, hands the server what the
 * hook process would have seen (its arguments, the payload, its folder, its
 * whole environment and umask) and writes back exactly the stdout, stderr
 * and exit code the server's run of the hook produced.
 *
 * Whenever no server answers in full (none, a dead or stale socket, another
 * build, busy with another call, too slow to start, a reply cut short or
 * not understood), this process runs the hook itself, the whole way a
 * process without a server does (the bundle, with the payload handed over),
 * and starts a server in the background for the next call (detached, its
 * stdio on /dev/null: it never holds the harness's pipes). A server that
 * dies under a call therefore never answers for it: the call is judged
 * again here, as a guard killed mid-call is judged by the next one.
 */

const require = createRequire(import.meta.url);
const net: typeof Net = require('node:net');
const fs: typeof Fs = require('node:fs');
const tty: typeof Tty = require('node:tty');

/** How long a server has to take the call before this process runs it itself. */
const START_MS = 1500;

type Reply =
  | { t: 'done'; code: number; killed?: boolean; out: string; err: string }
  | { t: 'busy' | 'late' | 'mismatch' | 'refused' };

/**
 * The payload on stdin, whole, read from fd 0 itself: process.stdin would build a stream for it
 * (~10 ms of CPU on Node 24).
 */
function readStdin(): string {
  const chunks: Buffer[] = [];
  const buf = Buffer.allocUnsafe(1 << 16);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    let n: number;
    try {
      n = fs.readSync(0, buf);
    } catch (e) {
      // a pipe left non-blocking by whoever made it: wait for it as a blocking read would
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      Atomics.wait(pause, 0, 0, 2);
      continue;
    }
    if (n === 0) return Buffer.concat(chunks).toString('utf8');
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
}

/** All of `data` to fd `fd` (stdout, stderr), without building node's stream for it. */
function writeAll(fd: number, data: Buffer): void {
  for (let at = 0; at < data.length;) {
    try {
      at += fs.writeSync(fd, data, at);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
    }
  }
}

/** The hook's time budget, as the hook reads it (--timeout N, GUARD_HOOK_TIMEOUT, 20 s). */
function budgetSeconds(argv: string[]): number {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = a === '--timeout' ? argv[i + 1] : a.startsWith('--timeout=') ? a.slice(10) : null;
    if (v != null && Number(v) > 0) return Number(v);
  }
  return Number(process.env.GUARD_HOOK_TIMEOUT) || 20;
}

/** Why this call is not one for the server (null: it is). */
function notForServer(): string | null {
  if (tty.isatty(0) || tty.isatty(1) || tty.isatty(2)) return 'a terminal';
  // the fault points kill the process they run in: the test means this one
  if (Object.keys(process.env).some((k) => k.startsWith('GUARD_FAULT'))) return 'fault points';
  return null;
}

/** Ask the server at `sock`; null when it cannot be reached at all (none there, or a dead one). */
function ask(sock: string, request: string, budgetMs: number): Promise<Reply | null> {
  // only a socket of this uid's (in a folder of its own): anything else there a server replaces
  const st = fs.lstatSync(sock, { throwIfNoEntry: false });
  if (!st || !st.isSocket() || st.uid !== process.getuid!()) return Promise.resolve(null);
  return new Promise((resolve) => {
    let buf = '';
    let started = false;
    let done = false;
    const c = net.createConnection(sock);
    const finish = (r: Reply | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      c.destroy();
      resolve(r);
    };
    // not taken in time: run it here (the server refuses a call it is handed after startBy)
    let timer = setTimeout(() => finish({ t: 'late' }), START_MS + 250);
    c.on('error', (e: NodeJS.ErrnoException) =>
      finish(e.code === 'ENOENT' || e.code === 'ECONNREFUSED' ? null : { t: 'refused' }),
    );
    c.on('close', () => finish({ t: 'refused' }));
    c.on('connect', () => c.write(request));
    c.setEncoding('utf8');
    c.on('data', (chunk: string) => {
      buf += chunk;
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let m: { t?: unknown; v?: unknown } | null = null;
        try {
          m = JSON.parse(line) as { t?: unknown; v?: unknown };
        } catch {
          return finish({ t: 'refused' });
        }
        if (m?.v !== PROTOCOL) return finish({ t: 'refused' });
        if (m.t === 'start' && !started) {
          started = true;
          // the server answers within the budget (it ends itself after a budget answer)
          clearTimeout(timer);
          timer = setTimeout(() => finish({ t: 'late' }), budgetMs + 5000);
          continue;
        }
        const r = m as Reply;
        if (r.t === 'done' && started && wellFormed(r)) return finish(r);
        return finish(
          r.t === 'busy' || r.t === 'late' || r.t === 'mismatch' ? r : { t: 'refused' },
        );
      }
    });
  });
}

/**
 * A done reply this process can write back as it is: an exit code a process can have, stdout and
 * stderr as base64 text. Anything else is not understood (a corrupt reply, another program on the
 * socket): the call is run here.
 */
function wellFormed(r: {
  code?: unknown;
  out?: unknown;
  err?: unknown;
  killed?: unknown;
}): boolean {
  const b64 = (v: unknown) => typeof v === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(v);
  return (
    Number.isInteger(r.code) &&
    (r.code as number) >= 0 &&
    (r.code as number) <= 255 &&
    b64(r.out) &&
    b64(r.err) &&
    (r.killed === undefined || typeof r.killed === 'boolean')
  );
}

/** Start a server for the next call: detached, no stdio, not holding this process. */
function startServer(dir: string): void {
  const cp: typeof ChildProcess = require('node:child_process');
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('GUARD_FAULT')) delete env[k];
  env.GUARD_RESIDENT_DIR = dir;
  try {
    cp.spawn(process.execPath, [new URL('./resident-server.js', import.meta.url).pathname], {
      detached: true,
      stdio: 'ignore',
      cwd: '/',
      env,
    }).unref();
  } catch {
    // no server this time: the call was answered here
  }
}

/** GUARD_RESIDENT_TRACE=FILE (tests): one line per call, `served` or `here <why>`. */
function trace(line: string): void {
  const file = process.env.GUARD_RESIDENT_TRACE;
  if (file) fs.appendFileSync(file, line + '\n');
}

/** The hook the whole way, in this process: the bundle, with the payload it cannot read again (null: stdin is still unread). */
async function runHere(text: string | null): Promise<void> {
  if (text !== null) (globalThis as Record<symbol, unknown>)[Symbol.for('guard.hook.stdin')] = text;
  await import('./guard.js' as string);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const why = notForServer();
  if (why) return (trace(`here ${why}`), runHere(null));
  const text = readStdin();
  const dir = residentDir(process.env);
  if (!dir) return (trace('here no folder'), runHere(text));
  let key: string;
  try {
    key = buildKey();
  } catch {
    return (trace('here no build'), runHere(text));
  }
  if (!privateDir(dir)) {
    // a folder that is not the user's own is never used; a missing one the server makes
    const missing = !fs.existsSync(dir);
    trace(missing ? 'here no server' : 'here not a private folder');
    if (missing) startServer(dir);
    return runHere(text);
  }
  const budgetMs = budgetSeconds(argv) * 1000;
  const request =
    JSON.stringify({
      v: PROTOCOL,
      key,
      startBy: Date.now() + START_MS,
      argv,
      cwd: process.cwd(),
      env: process.env,
      umask: process.umask(),
      stdin: text,
    }) + '\n';
  const reply = await ask(socketPath(dir, key), request, budgetMs);
  if (reply?.t === 'done') {
    writeAll(1, Buffer.from(reply.out, 'base64'));
    writeAll(2, Buffer.from(reply.err, 'base64'));
    process.exitCode = reply.code;
    trace('served');
    // the hook process would have killed itself here (a read that never ends): so does this one
    if (reply.killed === true) process.kill(process.pid, 'SIGKILL');
    return;
  }
  trace(`here ${reply?.t ?? 'no server'}`);
  if (reply === null) startServer(dir);
  return runHere(text);
}

await main().catch((e: unknown) => {
  // anything unexpected here, before an answer: exit 2, which every harness guard supports reads as
  // "blocked" with stderr as the reason, so a hook entry written by hand (without the installed
  // command's `|| exit 2` fallback) never lets the tool run on a client that failed (holes6)
  const why = String(e instanceof Error ? e.message : e)
    .replace(/\s+/g, ' ')
    .slice(0, 300);
  try {
    writeAll(
      2,
      Buffer.from(`guard: the resident hook client failed, so this call is refused: ${why}\n`),
    );
  } catch {
    // stderr gone too: the exit code says it
  }
  process.exitCode = 2;
});
