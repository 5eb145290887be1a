import { spawnSync } from 'node:child_process';
import { readFileSync, existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLI,
  cleanEnv,
  cleanupRepos,
  fixture,
  lines,
  makeRepo,
  outsideDir,
  startLane,
  laneWrite,
  type TestRepo,
} from '../helpers.js';
import { COMMANDS, COMMON_FLAGS } from '../../src/cli/spec.js';

afterAll(cleanupRepos);

/**
 * Run the built CLI with a module hook that logs every module node loads
 * (https://nodejs.org/api/module.html#customization-hooks), to prove what a
 * command line costs.
 */
function loaded(repo: TestRepo, args: string[], input = ''): { code: number; modules: string[] } {
  const dir = outsideDir();
  const log = path.join(dir, 'modules.log');
  writeFileSync(
    path.join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';\n` +
      `export async function resolve(spec, ctx, next) { const r = await next(spec, ctx); appendFileSync(${JSON.stringify(log)}, r.url + '\\n'); return r; }\n`,
  );
  writeFileSync(
    path.join(dir, 'register.mjs'),
    `import { register } from 'node:module';\nregister(${JSON.stringify(`file://${dir}/hooks.mjs`)});\n`,
  );
  const r = spawnSync(process.execPath, ['--import', `file://${dir}/register.mjs`, CLI, ...args], {
    cwd: repo.dir,
    env: cleanEnv({ CI: 'true' }),
    input,
  });
  const modules = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
  return { code: r.status ?? 128, modules };
}

const yargsIn = (modules: string[]) => modules.filter((m) => m.includes('/node_modules/yargs'));

describe('the command line', () => {
  it('check and write are parsed without loading yargs; --help and a usage error load it', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.write('a.txt', 'b\n');
    repo.git(['add', '-A']);
    const check = loaded(repo, ['check', '--auto', '--timeout', '30', '--limit', '5', '-q']);
    expect(check.code).toBe(0);
    // the hot path is bundled (scripts/bundle.mjs): one file of guard's own, not forty, behind the
    // few lines of main.js that turn on node's compile cache first
    expect(check.modules.filter((m) => m.includes('/dist/'))).toEqual([
      expect.stringMatching(/\/dist\/cli\/main\.js$/),
      expect.stringMatching(/\/dist\/cli\/guard\.js$/),
    ]);
    expect(yargsIn(check.modules)).toEqual([]);
    const write = loaded(repo, ['write', '--auto', '--json', 'b.txt'], 'new\n');
    expect(write.code).toBe(0);
    expect(yargsIn(write.modules)).toEqual([]);
    expect(repo.read('b.txt')).toBe('new\n');

    expect(yargsIn(loaded(repo, ['check', '--help']).modules)).not.toEqual([]);
    const bad = loaded(repo, ['check', '--bogus']);
    expect(bad.code).toBe(2);
    expect(yargsIn(bad.modules)).not.toEqual([]);
  });

  it('every flag of every command is described in --help', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    for (const [name, spec] of Object.entries(COMMANDS)) {
      const r = repo.guard([name, '--help']);
      expect(r.code, name).toBe(0);
      for (const [flag, f] of Object.entries({ ...COMMON_FLAGS, ...spec.flags })) {
        expect(f.describe.length, `${name} --${flag}`).toBeGreaterThan(10);
        const line = r.stdout
          .split('\n')
          .find((l) => new RegExp(`^\\s*(-\\w, )?--${flag}\\s`).test(l));
        expect(line, `${name} --${flag}`).toBeDefined();
        expect(line, `${name} --${flag}`).toContain(f.describe.slice(0, 15));
      }
    }
    expect(repo.guard(['ci', '--help']).stdout).toMatch(/--format\s+text for people/);
  });

  it('the fast parser and yargs agree: --no-color, -q, values after positionals, -- for names and commands', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const w = repo.guardJson(['write', 'x.txt', '--auto', '--cwd', repo.dir], { input: 'x\n' });
    expect([w.code, w.json.files[0].path]).toEqual([0, 'x.txt']);
    expect(repo.guard(['write', '--auto', '--', '-dash.txt'], { input: 'd\n' }).code).toBe(0);
    expect(repo.read('-dash.txt')).toBe('d\n');
    // a spelling only yargs takes still works, through yargs
    expect(repo.guard(['write', '--no-auto', '--auto', 'y.txt'], { input: 'y\n' }).code).toBe(0);
    const usage = repo.guardJson(['ci']);
    expect([usage.code, usage.json.error.code]).toEqual([2, 'E_USAGE']);
    expect(usage.json.error.message).toMatch(/base/);
    const format = repo.guardJson(['ci', '--base', 'main', '--format', 'yaml']);
    expect([format.code, format.json.error.code]).toEqual([2, 'E_USAGE']);
    for (const [flag, value] of [
      ['--limit', 'many'],
      ['--timeout', '0'],
      ['--timeout', 'soon'],
    ]) {
      const r = repo.guardJson(['check', flag!, value!]);
      expect([r.code, r.json.error.code], `${flag} ${value}`).toEqual([2, 'E_USAGE']);
    }
    const cwd = repo.guardJson(['check', '--cwd', path.join(repo.dir, 'nope')]);
    expect(cwd.json.error).toMatchObject({
      code: 'E_USAGE',
      message: expect.stringContaining('no such folder'),
    });
  });

  it('--quiet is honoured by discard: nothing printed when nothing was lost', () => {
    const repo = makeRepo({ 'a.txt': lines(3), 'state.py': fixture('state.py') });
    const lane = startLane(repo, 'agent');
    laneWrite(lane, 'a.txt', lines(4));
    const quiet = repo.guard(['discard', 'agent', '--quiet']);
    expect(quiet).toMatchObject({ code: 0, stdout: '', stderr: '' });
    startLane(repo, 'other');
    const loud = repo.guard(['discard', 'other']);
    expect(loud.stdout).toMatch(/^guard: discarded lane other/);
  });
});
