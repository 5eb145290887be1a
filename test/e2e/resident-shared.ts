/**
 * What the resident hook's test files share (resident, adv4-resident): the
 * resident hook (GUARD_RESIDENT=1) makes `guard hook claude` a small client of
 * a server that keeps guard loaded (src/cli/hook-client.ts,
 * src/cli/resident-server.ts). Each test has its own socket folder; every
 * server a test started is found by that folder in its environment and
 * ended by its pid, and none may be left (endServersAfterEachTest).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, expect } from 'vitest';
import {
  CLI,
  ROOT,
  claudePayload,
  cleanEnv,
  cleanupRepos,
  fixture,
  outsideDir,
  type TestRepo,
} from '../helpers.js';

export const SERVER = path.join(ROOT, 'dist', 'cli', 'resident-server.js');
const dirs: string[] = [];

/** The pids of the resident servers whose socket folder is `dir` (not their git processes, which inherit it). */
export function servers(dir: string): number[] {
  const out: number[] = [];
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (
        fs.readFileSync(`/proc/${pid}/environ`, 'utf8').includes(`GUARD_RESIDENT_DIR=${dir}\0`) &&
        fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('resident-server')
      )
        out.push(Number(pid));
    } catch {
      // gone, or another user's
    }
  }
  return out;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export async function until(what: () => boolean, ms = 8000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) if (what()) return true;
  return what();
}

/** A socket folder for one test, and the env that turns the resident hook on with it. */
export function residentEnv(extra: Record<string, string> = {}) {
  const base = outsideDir();
  const dir = path.join(base, 'sock');
  dirs.push(dir);
  const traceFile = path.join(base, 'trace');
  const env = {
    GUARD_RESIDENT: '1',
    GUARD_RESIDENT_DIR: dir,
    GUARD_RESIDENT_TRACE: traceFile,
    ...extra,
  };
  const trace = () => (fs.existsSync(traceFile) ? fs.readFileSync(traceFile, 'utf8') : '');
  const reset = () => fs.writeFileSync(traceFile, '');
  return { dir, env, trace, reset };
}

/** One hook process, as the harness runs it: the built CLI, the payload on stdin. */
export function hook(repo: TestRepo, payload: string, env: Record<string, string> = {}) {
  const r = repo.guardSpawned(['hook', 'claude'], { input: payload, env });
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}

/** hook, without blocking this process (a fake server in it must answer). */
export function hookAsync(repo: TestRepo, payload: string, env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string }>((resolve) => {
    const child = spawn(process.execPath, [CLI, 'hook', 'claude'], {
      cwd: repo.dir,
      env: cleanEnv({ CI: 'true', ...env }),
    });
    let stdout = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b));
    child.on('close', (code) => resolve({ code, stdout }));
    child.stdin.end(payload);
  });
}

/** A served call: the first call starts the server, so wait until it listens. */
export async function warm(repo: TestRepo, r: ReturnType<typeof residentEnv>): Promise<void> {
  hook(repo, claudePayload(repo, 'warm', 'Bash', { command: 'true' }, 'w0'), r.env);
  const listening = () =>
    fs.existsSync(r.dir) && fs.readdirSync(r.dir).some((f) => f.endsWith('.sock'));
  expect(await until(() => servers(r.dir).length === 1 && listening())).toBe(true);
}

export const DESTROY = (repo: TestRepo) =>
  claudePayload(
    repo,
    's1',
    'Write',
    { file_path: path.join(repo.dir, 'app.py'), content: fixture('state_replacement.py') },
    't1',
  );

/** Every server a test of the calling file started ends after it, and none is left after the file. */
export function endServersAfterEachTest(): void {
  afterEach(async () => {
    for (const d of dirs) for (const pid of servers(d)) process.kill(pid, 'SIGKILL');
    await until(() => dirs.flatMap(servers).length === 0, 3000);
  });

  afterAll(async () => {
    await until(() => dirs.flatMap(servers).length === 0, 3000);
    const left = dirs.flatMap(servers);
    cleanupRepos();
    expect(left).toEqual([]);
  });
}
