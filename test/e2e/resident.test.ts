import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLI,
  ROOT,
  claudePayload,
  cleanEnv,
  claudeRepo,
  fixture,
  type TestRepo,
} from '../helpers.js';
import {
  SERVER,
  servers,
  sleep,
  until,
  residentEnv,
  hook,
  hookAsync,
  warm,
  DESTROY,
  endServersAfterEachTest,
} from './resident-shared.js';

/**
 * The resident hook (GUARD_RESIDENT=1): `guard hook claude` a small client of
 * a server that keeps guard loaded (src/cli/hook-client.ts,
 * src/cli/resident-server.ts). Each test has its own socket folder; every
 * server a test started is found by that folder in its environment and
 * ended by its pid, and none may be left (afterAll).
 */

endServersAfterEachTest();

describe('the resident hook', () => {
  it('answers what a hook process answers: a deny of a destructive Write, an allow, a Bash pre and post', async () => {
    const files = { 'app.py': fixture('state.py') };
    const [a, b] = [claudeRepo(files), claudeRepo(files)];
    const r = residentEnv();
    await warm(b, r);
    r.reset();
    const norm = (s: string, repo: TestRepo) =>
      s.replaceAll(repo.dir, 'REPO').replace(/\d{8}T\d{6}Z-[0-9a-f]{8}/g, 'STAMP');
    const calls = (repo: TestRepo) => [
      DESTROY(repo),
      claudePayload(
        repo,
        's1',
        'Write',
        { file_path: path.join(repo.dir, 'new.txt'), content: 'hello\n' },
        't2',
      ),
      claudePayload(repo, 's1', 'Bash', { command: 'rm app.py' }, 't3'),
      claudePayload(repo, 's1', 'Bash', { command: 'rm app.py' }, 't3', true),
    ];
    const [ca, cb] = [calls(a), calls(b)];
    const outs: string[] = [];
    for (let i = 0; i < ca.length; i++) {
      if (i === 3) {
        fs.rmSync(path.join(a.dir, 'app.py'));
        fs.rmSync(path.join(b.dir, 'app.py'));
      }
      const x = hook(a, ca[i]!);
      const y = hook(b, cb[i]!, r.env);
      expect({ code: y.code, out: norm(y.stdout, b), err: norm(y.stderr, b) }, `call ${i}`).toEqual(
        {
          code: x.code,
          out: norm(x.stdout, a),
          err: norm(x.stderr, a),
        },
      );
      outs.push(y.stdout);
    }
    expect(JSON.parse(outs[0]!).hookSpecificOutput.permissionDecision).toBe('deny');
    expect(outs[1]).not.toMatch(/deny/);
    expect(outs[3]).toMatch(/app\.py/);
    expect(r.trace()).toBe('served\n'.repeat(4));
  });

  it('a server killed in the middle of a call: the client judges the call itself and still refuses it', async () => {
    const repo = claudeRepo({ 'app.py': fixture('state.py') });
    const r = residentEnv();
    fs.mkdirSync(r.dir, { mode: 0o700 });
    // a server that kills itself in the middle of the call it serves, between its refs and its journal
    const child = spawn(process.execPath, [SERVER], {
      env: cleanEnv({ ...r.env, GUARD_FAULT: 'records:before-note' }),
      detached: true,
      stdio: 'ignore',
    });
    child.unref();
    expect(await until(() => fs.readdirSync(r.dir).some((f) => f.endsWith('.sock')))).toBe(true);
    const y = hook(repo, DESTROY(repo), r.env);
    expect(JSON.parse(y.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
    expect(r.trace()).toBe('here refused\n');
    expect(servers(r.dir)).not.toContain(child.pid);
  });

  it('a socket that is not a live server (a file, a dead one, one answering nonsense): judged in the process, then served', async () => {
    const repo = claudeRepo({ 'app.py': fixture('state.py') });
    const r = residentEnv();
    await warm(repo, r);
    const sock = path.join(
      r.dir,
      fs.readdirSync(r.dir).find((f) => f.endsWith('.sock'))!,
    );
    for (const pid of servers(r.dir)) process.kill(pid, 'SIGKILL');
    await until(() => servers(r.dir).length === 0);
    // a dead server's socket is left: refused, judged here, a new server started
    r.reset();
    expect(JSON.parse(hook(repo, DESTROY(repo), r.env).stdout)).toMatchObject({
      hookSpecificOutput: { permissionDecision: 'deny' },
    });
    expect(await until(() => servers(r.dir).length === 1)).toBe(true);
    await until(
      () => hook(repo, DESTROY(repo), r.env).stdout.includes('deny') && /served\n$/.test(r.trace()),
    );
    expect(r.trace()).toMatch(/^here no server\n(here \w+\n)*served\n$/);
    for (const pid of servers(r.dir)) process.kill(pid, 'SIGKILL');
    await until(() => servers(r.dir).length === 0);
    // something else listening there, answering what is not the protocol
    fs.rmSync(sock, { force: true });
    const fake = net.createServer((c) => c.end('{"v":1,"t":"done","code":0,"out":"","err":""}\n'));
    await new Promise<void>((res) => fake.listen(sock, () => res()));
    try {
      const y = await hookAsync(repo, DESTROY(repo), r.env);
      expect(JSON.parse(y.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
      expect(r.trace()).toMatch(/here refused\n$/);
    } finally {
      fake.close();
    }
  });

  it('a repository deleted and made again under a live server: the new one is judged', async () => {
    const repo = claudeRepo({ 'app.py': fixture('state.py') });
    const r = residentEnv();
    await warm(repo, r);
    expect(JSON.parse(hook(repo, DESTROY(repo), r.env).stdout)).toMatchObject({
      hookSpecificOutput: { permissionDecision: 'deny' },
    });
    fs.rmSync(path.join(repo.dir, '.git'), { recursive: true, force: true });
    fs.rmSync(path.join(repo.dir, 'app.py'));
    repo.git(['init', '-q', '-b', 'main']);
    repo.write('app.py', 'x = 1\n');
    repo.commitAll('another');
    const twin = claudeRepo({ 'app.py': 'x = 1\n' });
    fs.rmSync(path.join(twin.dir, '.git'), { recursive: true, force: true });
    twin.git(['init', '-q', '-b', 'main']);
    twin.commitAll('another');
    const p = (t: TestRepo) =>
      claudePayload(
        t,
        's9',
        'Write',
        { file_path: path.join(t.dir, 'app.py'), content: 'y\n' },
        'u',
      );
    const y = hook(repo, p(repo), r.env);
    const x = hook(twin, p(twin));
    expect(y.stdout.replaceAll(repo.dir, 'R')).toBe(x.stdout.replaceAll(twin.dir, 'R'));
    expect(y.code).toBe(x.code);
    expect(r.trace()).toMatch(/served\n$/);
  });

  it('another build on disk: the server ends, and a call of the new build is still answered', async () => {
    // a copy of the build inside node_modules (where its packages are found)
    const copy = fs.mkdtempSync(path.join(ROOT, 'node_modules', '.resident-test-'));
    try {
      fs.cpSync(path.join(ROOT, 'dist'), path.join(copy, 'dist'), { recursive: true });
      const cli = path.join(copy, 'dist', 'cli', 'main.js');
      const repo = claudeRepo({ 'app.py': fixture('state.py') });
      const r = residentEnv();
      const run = () =>
        spawnSync(process.execPath, [cli, 'hook', 'claude'], {
          cwd: repo.dir,
          env: cleanEnv({ CI: 'true', ...r.env }),
          input: DESTROY(repo),
          encoding: 'utf8',
        });
      run();
      expect(await until(() => servers(r.dir).length === 1)).toBe(true);
      const [old] = servers(r.dir);
      expect(run().stdout).toMatch(/"deny"/);
      expect(r.trace()).toMatch(/served\n$/);
      // the build changes under the server (a reinstall, a rebuild)
      const bundle = path.join(copy, 'dist', 'cli', 'guard.js');
      fs.appendFileSync(bundle, '\n');
      expect(run().stdout).toMatch(/"deny"/);
      expect(r.trace()).toMatch(/here no server\n$/);
      expect(await until(() => !servers(r.dir).includes(old!))).toBe(true);
      expect(await until(() => servers(r.dir).length === 1)).toBe(true);
      expect(run().stdout).toMatch(/"deny"/);
      expect(r.trace()).toMatch(/served\n$/);
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });

  it('the hook process ends, its pipes closed, while the server it started lives on; the server ends when idle', async () => {
    const repo = claudeRepo({ 'app.py': fixture('state.py') });
    const r = residentEnv({ GUARD_RESIDENT_IDLE_MS: '3000' });
    const t = Date.now();
    const child = spawn(process.execPath, [CLI, 'hook', 'claude'], {
      cwd: repo.dir,
      env: cleanEnv({ CI: 'true', ...r.env }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b));
    child.stdin.end(DESTROY(repo));
    // 'close': the process exited and every pipe it had is closed (a server holding one would hold this)
    const code = await new Promise<number | null>((res) => child.on('close', res));
    expect(Date.now() - t).toBeLessThan(15000);
    expect(code).toBe(0);
    expect(out).toMatch(/"deny"/);
    expect(await until(() => servers(r.dir).length === 1)).toBe(true);
    // idle: it ends by itself, and takes its socket with it
    expect(await until(() => servers(r.dir).length === 0, 12000)).toBe(true);
    expect(fs.readdirSync(r.dir)).toEqual([]);
  });

  it('a socket folder another user could reach is never used', async () => {
    const repo = claudeRepo({ 'app.py': fixture('state.py') });
    const r = residentEnv();
    fs.mkdirSync(r.dir, { mode: 0o755 });
    fs.chmodSync(r.dir, 0o755);
    expect(JSON.parse(hook(repo, DESTROY(repo), r.env).stdout)).toMatchObject({
      hookSpecificOutput: { permissionDecision: 'deny' },
    });
    expect(r.trace()).toBe('here not a private folder\n');
    await sleep(500);
    expect(servers(r.dir)).toEqual([]);
  });
});
