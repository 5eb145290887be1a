import net from 'node:net';
import { activateResident, closeResident } from '../git/resident.js';
import { PROTOCOL, buildKey, residentDir, socketPath } from '../runtime/resident-place.js';
import {
  bindSocket,
  ensurePrivateDir,
  ownsSocket,
  releaseSocket,
} from '../runtime/resident-socket.js';
import { cleaned } from '../worktree/atomic.js';
import { runCli } from './entry.js';
import { exitOrKill, hookProcess, pendingRead } from './hook.js';

/**
 * The resident hook server: one node process per user and build that runs
 * `guard hook HARNESS` for the small clients (cli/hook-client.ts), so a
 * hook call costs a socket round trip and guard's own work instead of a
 * node start and the bundle's import. It keeps what the plugin keeps
 * between calls (git/resident.ts: each folder's repository, a cat-file per
 * work tree, each looked at again before every use).
 *
 * Each call is run as the hook process would have run it: one call at a
 * time (another asked meanwhile is told "busy" and runs in its own process),
 * in the call's folder, with exactly the call's environment and umask, its
 * payload for stdin, its stdout and stderr captured and sent back with the
 * exit code. A call whose budget runs out is answered as the hook answers
 * it, and then this process ends as the hook process would (nothing half
 * done goes on).
 *
 * It ends after IDLE_MS without a call, when its socket is no longer its
 * own (removed, replaced, its folder gone), and when the build it was
 * started from changed on disk. At most one per socket: the socket is bound
 * under a temporary name and linked into place, which fails when another
 * server holds the name.
 */

const IDLE_MS = Number(process.env.GUARD_RESIDENT_IDLE_MS) || 10 * 60_000;
const WATCH_MS = 2000;

interface Request {
  v: number;
  key: string;
  startBy: number;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  umask: number;
  stdin: string;
}

const own = { env: { ...process.env }, umask: process.umask(), key: buildKey() };
const dir = residentDir(process.env);
if (!dir) process.exit(0);
const sock = socketPath(dir, own.key);

let busy = false;
let idle: NodeJS.Timeout | undefined;
let sockIno: bigint | null = null;

function send(c: net.Socket, m: object): void {
  c.write(JSON.stringify({ v: PROTOCOL, ...m }) + '\n');
}

/** The environment of the call, in place (node's own environment follows process.env's keys). */
function setEnv(env: Record<string, string | undefined>): void {
  for (const k of Object.keys(process.env)) if (!Object.hasOwn(env, k)) delete process.env[k];
  for (const [k, v] of Object.entries(env))
    if (typeof v === 'string' && process.env[k] !== v) process.env[k] = v;
}

/**
 * What a git kept from an earlier call saw of its environment, besides GIT_* (which
 * git/resident.ts compares itself): a call in another environment starts every kept git again.
 */
function envPrint(env: Record<string, string | undefined>): string {
  return Object.keys(env)
    .filter((k) => !/^(GUARD_|CLAUDE_)|^(PWD|OLDPWD|SHLVL|_)$/.test(k))
    .sort()
    .map((k) => `${k}=${env[k]}`)
    .join('\0');
}
let lastEnv = '';

/** Run one call as its own process would; the reply's parts. */
async function serve(c: net.Socket, q: Request): Promise<void> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const cap = (into: Buffer[]) =>
    function write(chunk: string | Uint8Array, enc?: unknown, cb?: unknown): boolean {
      into.push(
        typeof chunk === 'string'
          ? Buffer.from(chunk, typeof enc === 'string' ? (enc as BufferEncoding) : 'utf8')
          : Buffer.from(chunk),
      );
      const done = typeof enc === 'function' ? enc : cb;
      if (typeof done === 'function') queueMicrotask(() => (done as () => void)());
      return true;
    };
  const saved = { out: process.stdout.write, err: process.stderr.write };
  let replied = false;
  const reply = (code: number, killed = false) => {
    if (replied) return;
    replied = true;
    send(c, {
      t: 'done',
      code,
      killed,
      out: Buffer.concat(out).toString('base64'),
      err: Buffer.concat(err).toString('base64'),
    });
  };
  // first what can fail (a folder gone since the client ran in it): then nothing was changed
  process.chdir(q.cwd);
  const print = envPrint(q.env);
  if (print !== lastEnv) closeResident();
  lastEnv = print;
  setEnv(q.env);
  process.umask(q.umask);
  process.exitCode = undefined;
  cleaned.clear();
  (globalThis as Record<symbol, unknown>)[Symbol.for('guard.hook.stdin')] = q.stdin;
  process.stdout.write = cap(out) as typeof process.stdout.write;
  process.stderr.write = cap(err) as typeof process.stderr.write;
  // the budget's answer: send it, then end as the hook process ends (nothing half done goes on):
  // exit, or, with a read still blocked a second later (a FIFO), SIGKILL, which the client repeats
  hookProcess.exit = () => {
    const finish = (killed: boolean) => {
      reply(Number(process.exitCode ?? 0), killed);
      const die = () => (killed ? process.kill(process.pid, 'SIGKILL') : exitOrKill());
      c.end(die);
      setTimeout(die, 1000).unref();
    };
    if (!pendingRead()) return finish(false);
    setTimeout(() => finish(pendingRead()), 1000);
  };
  try {
    const code = await runCli(q.argv);
    reply(code);
  } finally {
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
    delete (globalThis as Record<symbol, unknown>)[Symbol.for('guard.hook.stdin')];
    hookProcess.exit = exitOrKill;
    process.exitCode = undefined;
    process.chdir('/');
    process.umask(own.umask);
    setEnv(own.env);
  }
}

function parse(line: string): Request | null {
  try {
    const q = JSON.parse(line) as Request;
    const ok =
      q.v === PROTOCOL &&
      typeof q.key === 'string' &&
      typeof q.startBy === 'number' &&
      Array.isArray(q.argv) &&
      q.argv.every((a) => typeof a === 'string') &&
      q.argv[0] === 'hook' &&
      typeof q.cwd === 'string' &&
      typeof q.env === 'object' &&
      q.env !== null &&
      typeof q.umask === 'number' &&
      typeof q.stdin === 'string';
    return ok ? q : null;
  } catch {
    return null;
  }
}

/** Is this build still the one on disk? */
function sameBuild(): boolean {
  try {
    return buildKey() === own.key;
  } catch {
    return false;
  }
}

function quit(): never {
  releaseSocket(sock, sockIno);
  closeResident();
  process.exit(0);
}

function armIdle(): void {
  clearTimeout(idle);
  idle = setTimeout(() => (busy ? armIdle() : quit()), IDLE_MS);
}

function onConnection(c: net.Socket): void {
  let buf = '';
  c.on('error', () => {});
  c.setEncoding('utf8');
  c.on('data', (chunk: string) => {
    buf += chunk;
    const nl = buf.indexOf('\n');
    if (nl < 0) return;
    const q = parse(buf.slice(0, nl));
    buf = '';
    c.removeAllListeners('data');
    if (!q) return void c.end();
    if (q.key !== own.key || !sameBuild()) {
      send(c, { t: 'mismatch' });
      c.end();
      if (!sameBuild()) quit();
      return;
    }
    // a name no longer its own: whoever is connected did not find this server by it
    if (!ownsSocket(sock, sockIno)) return void (c.destroy(), quit());
    if (busy) return void (send(c, { t: 'busy' }), c.end());
    if (Date.now() > q.startBy || c.destroyed) return void (send(c, { t: 'late' }), c.end());
    busy = true;
    armIdle();
    send(c, { t: 'start' });
    serve(c, q)
      .catch(() => c.destroy())
      .finally(() => {
        busy = false;
        c.end();
        armIdle();
      });
  });
}

async function start(): Promise<void> {
  if (!ensurePrivateDir(dir!)) process.exit(0);
  activateResident();
  const server = net.createServer(onConnection);
  try {
    sockIno = await bindSocket(server, sock);
  } catch {
    process.exit(0);
  }
  armIdle();
  setInterval(() => {
    if (!busy && (!ownsSocket(sock, sockIno) || !sameBuild())) quit();
  }, WATCH_MS).unref();
  process.chdir('/');
}

await start();
