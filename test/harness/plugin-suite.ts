import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, checkpointsOf, cleanupRepos, type TestRepo } from '../helpers.js';
import { startChatServer } from './chat-server.js';
import { ensurePackage } from './install.js';
import { PLUGIN_PACKAGES, runPluginHarness, type PluginHarness } from './plugin-run.js';
import {
  BIG,
  CHECKOUT,
  ELISION,
  SMALL,
  SMALL_EDITED,
  SMALL_NEW,
  SMALL_OLD,
  STATE,
  TRUNCATED,
  USER_WORK,
  buildProject,
  freshHome,
} from './scenario.js';

/**
 * The plugin harnesses for real (Cline CLI 3.0.65, opencode 1.18.33, Kilo
 * Code 7.7.7), each against the scripted Chat Completions model on
 * 127.0.0.1, with guard installed in the project as a user has it
 * (node_modules/guard-cli) and the plugin file `guard init --agent NAME`
 * writes. The scenario of harness-real.test.ts: a small edit passes, a
 * truncation of the committed 270-line state.py is refused, kept under
 * refs/guard/rejected/ and the reason is in the model's next request; a
 * `git checkout -- .` over the user's uncommitted work is reported to the
 * model with the command that brings it back, and `guard rewind --to`
 * restores it byte for byte.
 *
 * The binaries install on first use into $GUARD_HARNESS_CACHE (never into
 * guard's dependencies); GUARD_HARNESS_TIMINGS=1 prints the times.
 */
/**
 * The scenario for each of `HARNESSES`, as the tests of one file
 * (test/clients/harness-plugins*.test.ts: one file per harness, so they run at
 * once).
 */
export function pluginSuite(HARNESSES: PluginHarness[]): void {
  afterAll(cleanupRepos);

  const bins = new Map<PluginHarness, { bin: string; error?: string }>();

  beforeAll(async () => {
    const got = await Promise.all(HARNESSES.map((h) => ensurePackage(PLUGIN_PACKAGES[h])));
    got.forEach((g, i) => bins.set(HARNESSES[i]!, g));
    if (process.env.GUARD_HARNESS_TIMINGS)
      for (const [h, g] of bins)
        console.log(`${h}: install ${(g as { installSeconds?: number }).installSeconds ?? 0}s`);
  }, 600_000);

  function project(h: PluginHarness): TestRepo {
    return buildProject((repo) => {
      // guard as the project's dev dependency: the plugin imports guard-cli/plugin
      mkdirSync(path.join(repo.dir, 'node_modules'), { recursive: true });
      symlinkSync(ROOT, path.join(repo.dir, 'node_modules', 'guard-cli'));
      const init = repo.guard(['init', '--agent', h]);
      expect(init.code, init.stderr).toBe(0);
    });
  }

  for (const h of HARNESSES) {
    describe(`${h} ${PLUGIN_PACKAGES[h].version} (real binary, guard in process)`, () => {
      it('refuses the truncation and tells the model; reports the checkout and rewind brings the work back; the edit and reads pass', async () => {
        const b = bins.get(h)!;
        expect(b.error ?? null).toBeNull();
        const repo = project(h);
        expect(
          existsSync(
            path.join(
              repo.dir,
              { cline: '.cline', opencode: '.opencode', kilo: '.kilo' }[h],
              'plugins',
              'guard.js',
            ),
          ),
        ).toBe(true);
        const abs = (f: string) => path.join(repo.dir, f);
        // Cline has no whole-file write for an existing file: its truncation is an editor call replacing all of it
        const truncate =
          h === 'cline'
            ? { kind: 'edit' as const, file: abs('state.py'), old: STATE, new: TRUNCATED }
            : { kind: 'write' as const, file: abs('state.py'), content: TRUNCATED };
        const server = await startChatServer([
          { kind: 'read', file: abs('state.py') },
          { kind: 'edit', file: abs('small.py'), old: SMALL_OLD, new: SMALL_NEW },
          truncate,
          { kind: 'shell', command: CHECKOUT },
          { kind: 'end', text: 'Done.' },
        ]);
        const home = freshHome();
        try {
          const r = await runPluginHarness(h, b.bin, repo.dir, home, server.baseUrl, 240_000);
          const debug = `exit ${r.code} in ${r.seconds}s\nstdout: ${r.stdout.slice(-3000)}\nstderr: ${r.stderr.slice(-3000)}\nrequests: ${server.requests.map((q) => `${q.url} step=${q.step} ${JSON.stringify(q.toolResults).slice(0, 400)}`).join('\n')}`;
          if (process.env.GUARD_HARNESS_TIMINGS) console.log(`${h}: run ${r.seconds}s`);
          if (process.env.GUARD_HARNESS_DEBUG)
            writeFileSync(
              path.join(process.env.GUARD_HARNESS_DEBUG, `${h}.log`),
              `${debug}\n\nFULL STDOUT:\n${r.stdout}\nFULL STDERR:\n${r.stderr}\n\nFULL REQUESTS:\n${JSON.stringify(server.requests, null, 1).slice(0, 400_000)}`,
            );
          // the read passed untouched: the model got the file, and guard was never asked
          const afterRead =
            server
              .requestAtStep(1)
              ?.toolResults.map((t) => t.text)
              .join('\n') ?? '';
          expect(afterRead, debug).toContain(STATE.split('\n')[5]!);
          expect(afterRead).not.toMatch(/guard (refused|could not)|guard:/);
          // the small edit passed (the model read its success; the checkout later took it back with the rest)
          expect(
            server
              .requestAtStep(2)
              ?.toolResults.map((t) => t.text)
              .join('\n') ?? '',
            debug,
          ).not.toMatch(/guard (refused|could not)|guard:/);
          // (a checkpoint holds small.py as it was before the edit; not "the first by name": ref
          // names sort by the second, then a random suffix, so two in one second may sort either way)
          const smallKept = checkpointsOf(repo).map(
            (r) => repo.gitRun(['cat-file', 'blob', `${r}:small.py`]).stdout,
          );
          expect(smallKept, debug).toContain(SMALL);
          // the truncation was refused: the file is whole, the proposal kept, the reason in the next request
          expect(repo.read('state.py'), debug).toBe(STATE);
          const rejected = repo.refs('refs/guard/rejected/');
          expect(rejected, debug).toHaveLength(1);
          expect(repo.git(['show', `${rejected[0]}:state.py`])).toContain(ELISION);
          const afterTruncate = server.requestAtStep(3);
          expect(afterTruncate, debug).toBeDefined();
          const told = afterTruncate!.toolResults.map((t) => t.text).join('\n');
          expect(told, debug).toContain('guard refused this write');
          expect(told).toContain(rejected[0]!);
          // the checkout ran (nothing can refuse it: it is not destructive by its words) and the model was told
          expect(repo.read('big_module.py'), debug).toBe(BIG);
          expect(repo.read('small.py')).toBe(SMALL);
          const afterCheckout = server.requestAtStep(4);
          expect(afterCheckout, debug).toBeDefined();
          const report = afterCheckout!.toolResults.map((t) => t.text).join('\n');
          expect(report, debug).toMatch(
            /guard: the command `git checkout -- \.` deleted or replaced work: big_module\.py/,
          );
          const cp = /guard restore (\S+) -- big_module\.py/.exec(report)![1]!;
          // rewind to the checkpoint before the checkout: the user's work byte for byte
          const rw = repo.guard(['rewind', '--to', cp]);
          expect(rw.code, rw.stderr + rw.stdout).toBe(0);
          expect(repo.read('big_module.py')).toBe(USER_WORK);
          expect(repo.read('small.py')).toBe(SMALL_EDITED);
        } finally {
          await server.close();
        }
      }, 420_000);
    });
  }
}
