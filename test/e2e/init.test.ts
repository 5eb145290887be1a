import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, cleanupRepos, lines, makeRepo, type TestRepo } from '../helpers.js';

/**
 * guard init picks the hook from what the project leaves on disk (lockfiles,
 * .yarnrc.yml, .pnp.cjs, packageManager), and takes the global route (a plain
 * git hook, no husky) where there is no package.json. The real package
 * managers run in install.test.ts; here only their traces.
 */
afterEach(cleanupRepos);

function fresh(files: Record<string, string>): TestRepo {
  const repo = makeRepo(files);
  repo.git(['config', '--unset', 'core.hooksPath']);
  return repo;
}

function initJson(repo: TestRepo, args: string[] = [], cwd?: string) {
  const r = repo.guard(['init', ...args, '--json'], cwd ? { cwd } : {});
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as {
    packageManager: string;
    hooksPath: string;
    changed: string[];
    warnings: string[];
  };
}

const PKG = '{ "name": "app", "private": true }\n';

describe('guard init: the package manager, from the project', () => {
  const cases: [string, Record<string, string>, string, string][] = [
    [
      'package-lock.json',
      { 'package.json': PKG, 'package-lock.json': '{}\n' },
      'npm',
      'npm install --save-dev guard-cli',
    ],
    ['package.json alone', { 'package.json': PKG }, 'npm', 'npm install --save-dev guard-cli'],
    [
      'pnpm-lock.yaml',
      { 'package.json': PKG, 'pnpm-lock.yaml': "lockfileVersion: '9.0'\n" },
      'pnpm',
      'pnpm add --save-dev guard-cli',
    ],
    [
      'a pnpm workspace root',
      { 'package.json': PKG, 'pnpm-workspace.yaml': 'packages: ["p/*"]\n' },
      'pnpm',
      'pnpm add --save-dev --workspace-root guard-cli',
    ],
    [
      'yarn classic (yarn.lock, no .yarnrc.yml)',
      { 'package.json': PKG, 'yarn.lock': '# yarn lockfile v1\n' },
      'yarn',
      'yarn add --dev guard-cli',
    ],
    [
      'yarn berry, node-modules linker',
      {
        'package.json': PKG,
        'yarn.lock': '__metadata:\n',
        '.yarnrc.yml': 'nodeLinker: node-modules\n',
      },
      'yarn',
      'yarn add --dev guard-cli',
    ],
    [
      'yarn berry, default linker',
      {
        'package.json': PKG,
        'yarn.lock': '__metadata:\n',
        '.yarnrc.yml': 'enableTelemetry: false\n',
      },
      'yarn-pnp',
      'yarn add --dev guard-cli',
    ],
    [
      'packageManager: yarn@4',
      { 'package.json': '{ "name": "app", "packageManager": "yarn@4.5.0" }\n' },
      'yarn-pnp',
      'yarn add --dev guard-cli',
    ],
    [
      'packageManager: pnpm',
      { 'package.json': '{ "name": "app", "packageManager": "pnpm@9.1.0" }\n' },
      'pnpm',
      'pnpm add --save-dev guard-cli',
    ],
    ['bun.lock', { 'package.json': PKG, 'bun.lock': '{}\n' }, 'bun', 'bun add --dev guard-cli'],
  ];
  for (const [name, files, manager, install] of cases) {
    it(`${name}: ${manager}`, () => {
      const repo = fresh(files);
      const r = initJson(repo);
      expect(r.packageManager).toBe(manager);
      expect(r.hooksPath).toBe('.husky/_');
      const hook = repo.read('.husky/pre-commit');
      expect(hook).toContain(`(${install})`);
      expect(hook).toMatch(manager === 'yarn-pnp' ? /^yarn guard check$/m : /^guard check$/m);
      expect(hook).not.toMatch(/\bnpx\b/);
      expect(r.warnings.some((w) => w.includes("Plug'n'Play"))).toBe(manager === 'yarn-pnp');
      // twice: nothing changes
      expect(initJson(repo).changed).toEqual([]);
    });
  }

  it("doctor on a yarn Plug'n'Play hook looks for yarn, not for node_modules/.bin", () => {
    const repo = fresh({
      'package.json': PKG,
      'yarn.lock': '__metadata:\n',
      '.pnp.cjs': '// pnp\n',
    });
    expect(initJson(repo).packageManager).toBe('yarn-pnp');
    const check = (PATH: string) =>
      (
        JSON.parse(repo.guard(['doctor', '--json'], { env: { PATH } }).stdout).checks as {
          id: string;
          ok: boolean;
          message: string;
        }[]
      ).find((c) => c.id === 'guard-command');
    const without = check('/usr/bin:/bin');
    expect(without?.ok).toBe(false);
    expect(without?.message).toContain('yarn is not on PATH');
    const bin = path.join(repo.dir, 'fake-bin');
    mkdirSync(bin);
    repo.write('fake-bin/yarn', '#!/bin/sh\nexit 0\n');
    chmodSync(path.join(bin, 'yarn'), 0o755);
    expect(check(`${bin}:/usr/bin:/bin`)?.ok).toBe(true);
  });

  it('the nearest project folder between cwd and the top decides, and the hook finds its node_modules/.bin', () => {
    const repo = fresh({
      'big.txt': lines(300),
      'web/package.json': PKG,
      'web/pnpm-lock.yaml': "lockfileVersion: '9.0'\n",
      '.gitignore': 'node_modules/\n',
    });
    mkdirSync(path.join(repo.dir, 'web/node_modules/.bin'), { recursive: true });
    symlinkSync(CLI, path.join(repo.dir, 'web/node_modules/.bin/guard'));
    expect(initJson(repo, [], path.join(repo.dir, 'web')).packageManager).toBe('pnpm');
    expect(repo.read('.husky/pre-commit')).toContain(`export PATH='web'/node_modules/.bin:"$PATH"`);
    repo.git(['add', '-A']);
    expect(repo.gitRun(['commit', '-q', '-m', 'install'], { CI: 'true' }).code).toBe(0);
    repo.git(['rm', '-q', 'big.txt']);
    const blocked = repo.gitRun(['commit', '-q', '-m', 'delete'], { CI: 'true' });
    expect(blocked.code).not.toBe(0);
    expect(blocked.stderr + blocked.stdout).toContain('blocked 1 change');
    // doctor, without guard on PATH, finds the one the hook runs
    const doctor = repo.guard(['doctor', '--json'], { env: { PATH: '/usr/bin:/bin' } });
    expect(JSON.parse(doctor.stdout).active, doctor.stdout).toBe(true);
  });
});

describe('guard init: the global route', () => {
  it('a repository without package.json gets a plain git hook that runs the guard on PATH', () => {
    const repo = fresh({ 'app.py': 'print(1)\n', 'pyproject.toml': '[project]\nname = "app"\n' });
    const r = initJson(repo);
    expect(r.packageManager).toBe('global');
    expect(r.changed[0]).toContain('no package.json here: the global route');
    const hook = path.join(repo.dir, '.git/hooks/pre-commit');
    expect(readFileSync(hook, 'utf8')).toMatch(/^#!\/bin\/sh$[\s\S]*^\s*exec guard check$/m);
    expect(statSync(hook).mode & 0o111).not.toBe(0);
    expect(repo.git(['config', '--get', 'core.hooksPath'], { allowFail: true })).toBe('');
    for (const f of ['.husky', 'package.json', 'node_modules'])
      expect(existsSync(path.join(repo.dir, f))).toBe(false);
    expect(initJson(repo).changed).toEqual([]);
  });

  it('--global in a JavaScript project too, into the folder core.hooksPath names', () => {
    const repo = fresh({ 'package.json': PKG });
    repo.git(['config', 'core.hooksPath', 'githooks']);
    const r = initJson(repo, ['--global']);
    expect(r.packageManager).toBe('global');
    expect(readFileSync(path.join(repo.dir, 'githooks/pre-commit'), 'utf8')).toContain(
      'exec guard check',
    );
    expect(existsSync(path.join(repo.dir, '.husky'))).toBe(false);
  });

  it('leaves a pre-commit hook it did not write alone, and says what to do (exit 2)', () => {
    const repo = fresh({ 'app.py': 'x\n' });
    repo.write('.git/hooks/pre-commit', '#!/bin/sh\nflake8\n');
    chmodSync(path.join(repo.dir, '.git/hooks/pre-commit'), 0o755);
    const r = repo.guard(['init', '--global']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('.git/hooks/pre-commit already exists and does not run guard');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(repo.read('.git/hooks/pre-commit')).toBe('#!/bin/sh\nflake8\n');

    repo.write(
      '.git/hooks/pre-commit',
      '#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n',
    );
    const framework = repo.guard(['init', '--global']);
    expect(framework.code).toBe(2);
    expect(framework.stderr).toContain("the pre-commit framework's hook");
    expect(framework.stderr).toContain('.pre-commit-config.yaml');
  });

  it('refuses a plain hook where husky owns core.hooksPath (it would never run)', () => {
    const repo = fresh({ 'package.json': PKG });
    expect(initJson(repo).packageManager).toBe('npm');
    const r = repo.guard(['init', '--global']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('core.hooksPath is .husky/_ (husky)');
  });
});
