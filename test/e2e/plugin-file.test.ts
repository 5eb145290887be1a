import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv, cleanupRepos, lines, makeRepo, type TestRepo } from '../helpers.js';

/**
 * The plugin files `guard init --agent cline|opencode|kilo` writes, loaded
 * the way the harnesses load them (a node child imports the file and calls
 * its hooks with the shapes Cline 3.0.65 and opencode 1.18.33 pass): guard
 * refuses through them, a read never loads guard, and a guard that cannot
 * be loaded refuses the gated tools (fail closed) and is named by doctor.
 */
afterAll(cleanupRepos);

/** guard init --agent in a test repository (whose hooks are off: init wants them on). */
function init(repo: TestRepo, ...agents: string[]) {
  repo.git(['config', '--unset', 'core.hooksPath'], { allowFail: true });
  const r = repo.guard(['init', '--agent', ...agents]);
  expect(r.code, r.stderr).toBe(0);
  return r;
}

/** Import PLUGIN in a node child and run BODY (plugin in `p`); prints one JSON line. */
function drive(dir: string, plugin: string, body: string) {
  const script = `import(${JSON.stringify(path.join(dir, plugin))}).then(async (p) => { const out = await (async () => { ${body} })(); console.log(JSON.stringify(out ?? null)); }).catch((e) => { console.log(JSON.stringify({ threw: String(e && e.message || e) })); });`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: dir,
    env: cleanEnv(),
  });
  const last = r.stdout.toString().trim().split('\n').pop() ?? '';
  return JSON.parse(last || 'null');
}

const OPENCODE_WRITE = (dir: string, content: string) => `
  const hooks = await p.GuardPlugin({ directory: ${JSON.stringify(dir)}, worktree: ${JSON.stringify(dir)} });
  await hooks['tool.execute.before']({ tool: 'write', sessionID: 'ses_x', callID: 'c1' }, { args: { filePath: 'state.py', content: ${JSON.stringify(content)} } });
  return { ran: true };`;

const OPENCODE_READ = (dir: string) => `
  const hooks = await p.GuardPlugin({ directory: ${JSON.stringify(dir)} });
  await hooks['tool.execute.before']({ tool: 'read', sessionID: 'ses_x', callID: 'c2' }, { args: { filePath: 'state.py' } });
  return { ran: true };`;

describe('plugin files written by guard init --agent', () => {
  it('opencode and kilo: a truncation throws the reason (kept as a ref), a read runs; cline: beforeTool skips with the reason', () => {
    const repo = makeRepo({ 'state.py': lines(270) });
    init(repo, 'cline', 'opencode', 'kilo');
    for (const file of ['.opencode/plugins/guard.js', '.kilo/plugins/guard.js']) {
      const refused = drive(repo.dir, file, OPENCODE_WRITE(repo.dir, 'x\n'));
      expect(refused.threw, file).toMatch(
        /guard refused this write: state\.py would lose 270 of 270 lines[\s\S]*refs\/guard\/rejected\//,
      );
      expect(drive(repo.dir, file, OPENCODE_READ(repo.dir))).toEqual({ ran: true });
    }
    const cline = drive(
      repo.dir,
      '.cline/plugins/guard.js',
      `const x = p.default; x.setup({}, { session: { sessionId: 'cline-s' }, workspaceInfo: { rootPath: ${JSON.stringify(repo.dir)} } });
       const skip = await x.hooks.beforeTool({ toolCall: { toolCallId: 't1', toolName: 'editor', input: { path: 'state.py', old_text: 'line 1\\n', new_text: '' } }, input: { path: 'state.py', old_text: 'line 1\\n', new_text: '' } });
       const read = await x.hooks.beforeTool({ toolCall: { toolCallId: 't2', toolName: 'read_files', input: {} }, input: {} });
       return { name: x.name, manifest: x.manifest, skip, read: read ?? 'none' };`,
    );
    expect(cline).toMatchObject({
      name: 'guard',
      manifest: { capabilities: ['hooks'] },
      read: 'none',
    });
    // a one-line edit is no loss: allowed (undefined), so skip is absent
    expect(cline.skip ?? null).toBeNull();
    expect(repo.read('state.py')).toBe(lines(270));
    expect(repo.refs('refs/guard/rejected/')).toHaveLength(2);
  });

  it('a guard that cannot be loaded refuses the gated tools, lets reads run, and doctor names it', () => {
    const repo = makeRepo({ 'state.py': lines(20) });
    init(repo, 'opencode', 'cline');
    for (const file of ['.opencode/plugins/guard.js', '.cline/plugins/guard.js']) {
      const f = path.join(repo.dir, file);
      writeFileSync(
        f,
        readFileSync(f, 'utf8').replace(
          /^const GUARD = .*$/m,
          'const GUARD = "file:///nonexistent/guard/plugin/index.js";',
        ),
      );
    }
    const refused = drive(
      repo.dir,
      '.opencode/plugins/guard.js',
      OPENCODE_WRITE(repo.dir, 'small\n'),
    );
    expect(refused.threw).toMatch(
      /guard could not be loaded and refused this call \(fail closed\)/,
    );
    expect(drive(repo.dir, '.opencode/plugins/guard.js', OPENCODE_READ(repo.dir))).toEqual({
      ran: true,
    });
    const cline = drive(
      repo.dir,
      '.cline/plugins/guard.js',
      `return p.default.hooks.beforeTool({ toolCall: { toolName: 'run_commands', input: { commands: ['ls'] } }, input: { commands: ['ls'] } });`,
    );
    expect(cline).toMatchObject({ skip: true, reason: expect.stringContaining('fail closed') });
    const doctor = repo.guard(['doctor']);
    expect(doctor.stdout).toMatch(/opencode: \.opencode\/plugins\/guard\.js cannot load guard/);
    expect(doctor.stdout).toMatch(/cline: \.cline\/plugins\/guard\.js cannot load guard/);
  });

  it("doctor: a plugin file changed by hand is not guard's; OPENCODE_DISABLE_PROJECT_CONFIG turns it off", () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    init(repo, 'opencode', 'kilo');
    writeFileSync(
      path.join(repo.dir, '.kilo/plugins/guard.js'),
      'export const GuardPlugin = async () => ({});\n',
    );
    const d = repo.guard(['doctor'], { env: { OPENCODE_DISABLE_PROJECT_CONFIG: '1' } });
    expect(d.stdout).toMatch(/kilo: \.kilo\/plugins\/guard\.js is not guard's plugin/);
    expect(d.stdout).toMatch(/opencode: OPENCODE_DISABLE_PROJECT_CONFIG is set/);
    // Cline runs without a plugin that is slow to load: doctor says how to give it time
    init(repo, 'cline');
    expect(repo.guard(['doctor']).stdout).toMatch(
      /cline: [\s\S]*over 4 s to load[\s\S]*CLINE_PLUGIN_IMPORT_TIMEOUT_MS=30000/,
    );
    expect(
      repo.guard(['doctor'], { env: { CLINE_PLUGIN_IMPORT_TIMEOUT_MS: '30000' } }).stdout,
    ).not.toMatch(/over 4 s to load/);
    // and init leaves a file that is not guard's alone
    const again = repo.guard(['init', '--agent', 'kilo']);
    expect(again.stderr + again.stdout).toMatch(
      /\.kilo\/plugins\/guard\.js exists and is not guard's: left alone/,
    );
  });
});
