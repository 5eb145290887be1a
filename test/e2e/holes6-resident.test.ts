import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, claudeRepo, cleanEnv, fixture, outsideDir, type TestRepo } from '../helpers.js';
import {
  DESTROY,
  endServersAfterEachTest,
  hookAsync,
  residentEnv,
  servers,
  until,
  warm,
} from './resident-shared.js';

/**
 * holes6 (docs/reliability/holes6.md): the resident hook's client when something it did not
 * expect happens. Its installed command turns any non-zero exit into a block (`|| exit 2`); a hook
 * entry written by hand has no such fallback, and Claude Code runs the tool on any exit but 2.
 */

endServersAfterEachTest();

const deny = (stdout: string) => {
  try {
    return JSON.parse(stdout).hookSpecificOutput.permissionDecision === 'deny';
  } catch {
    return false;
  }
};

/** The build's server replaced by one that answers each call with `reply` (lines, as written). */
async function fakeServer(
  repo: TestRepo,
  r: ReturnType<typeof residentEnv>,
  reply: (c: net.Socket) => void,
): Promise<net.Server> {
  await warm(repo, r);
  const sock = fs.readdirSync(r.dir).find((f) => f.endsWith('.sock'))!;
  for (const pid of servers(r.dir)) process.kill(pid, 'SIGKILL');
  await until(() => servers(r.dir).length === 0);
  fs.rmSync(path.join(r.dir, sock), { force: true });
  const fake = net.createServer((c) => c.once('data', () => reply(c)));
  await new Promise<void>((res) => fake.listen(path.join(r.dir, sock), res));
  return fake;
}

const line = (m: object) => JSON.stringify({ v: 1, ...m }) + '\n';

describe('holes6: the resident client never lets a call through on a failure of its own', () => {
  it.each([
    ['stdout not text (a number)', { code: 0, out: 123, err: '' }],
    ['an exit code no process has', { code: -1, out: '', err: '' }],
    ['an exit code that is text', { code: '0', out: '', err: '' }],
    ['stdout not base64', { code: 0, out: '{"hookSpecificOutput":{}}', err: '' }],
  ])(
    'a reply it cannot write back (%s): the call is judged here, the destructive Write refused',
    async (_, done) => {
      const repo = claudeRepo({ 'app.py': fixture('state.py') });
      const r = residentEnv();
      const fake = await fakeServer(repo, r, (c) => {
        c.write(line({ t: 'start' }));
        c.end(line({ t: 'done', ...done }));
      });
      try {
        r.reset();
        const y = await hookAsync(repo, DESTROY(repo), r.env);
        // on main: `out: 123` made Buffer.from throw (exit 70, the tool runs under a hand-written
        // entry); a code of -1 or "0" was written back as the exit code, undecided
        expect(deny(y.stdout), `${y.code} ${y.stdout}`).toBe(true);
        expect(r.trace()).toMatch(/^here refused/);
      } finally {
        fake.close();
      }
    },
  );

  it('held: a server that closes mid-answer (the start, half a line): judged here, refused', async () => {
    const repo = claudeRepo({ 'app.py': fixture('state.py') });
    const r = residentEnv();
    const fake = await fakeServer(repo, r, (c) => {
      c.write(line({ t: 'start' }));
      c.end('{"v":1,"t":"do');
    });
    try {
      r.reset();
      const y = await hookAsync(repo, DESTROY(repo), r.env);
      expect(deny(y.stdout), `${y.code} ${y.stdout}`).toBe(true);
    } finally {
      fake.close();
    }
  });

  it('the client itself fails (its stdin a folder it cannot read): exit 2 with a one-line reason, not 70', async () => {
    const repo = claudeRepo({ 'app.py': fixture('state.py') });
    const r = residentEnv();
    const fd = fs.openSync(outsideDir(), 'r');
    try {
      const child = spawn(process.execPath, [CLI, 'hook', 'claude'], {
        cwd: repo.dir,
        env: cleanEnv({ CI: 'true', ...r.env }),
        stdio: [fd, 'pipe', 'pipe'],
      });
      let err = '';
      child.stderr!.on('data', (b: Buffer) => (err += b));
      const code = await new Promise<number | null>((res) => child.on('close', res));
      // on main: exit 70, which Claude Code reads as a non-blocking error: the tool runs
      expect(code, err).toBe(2);
      expect(err).toMatch(
        /^guard: the resident hook client failed, so this call is refused: EISDIR/,
      );
      expect(err.trim().split('\n')).toHaveLength(1);
    } finally {
      fs.closeSync(fd);
    }
  });
});
