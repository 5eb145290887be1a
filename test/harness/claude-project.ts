/**
 * A Claude Code project as a user makes it, and one run of the real Claude
 * Code in it against the scripted model: what the client tests of guard's
 * hook entry share (hook-entry-real, hook-holes-real, holes3-real).
 */
import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { CLI, makeRepo, type TestRepo } from '../helpers.js';
import { ensureHarnesses, type Installed } from './install.js';
import { startModelServer, type Action, type ModelServer } from './model-server.js';
import { runHarness, type HarnessRun } from './run.js';
import { freshHome } from './scenario.js';

/** The real Claude Code from the harness cache (installed on first use). */
export async function installClaude(): Promise<Installed> {
  const [claude] = await ensureHarnesses(['claude']);
  if (!claude || claude.error) throw new Error(claude?.error ?? 'no claude install');
  return claude;
}

/**
 * A repository holding `files`, with guard linked into node_modules/.bin and
 * installed by `guard init --agent claude`, committed past every hook (the
 * project before the session; the branch gate is not under test).
 */
export function claudeProject(files: Record<string, string>): TestRepo {
  const repo = makeRepo({ ...files, '.gitignore': 'node_modules/\n' });
  mkdirSync(path.join(repo.dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(CLI, path.join(repo.dir, 'node_modules', '.bin', 'guard'));
  const init = repo.guard(['init', '--agent', 'claude']);
  if (init.code !== 0) throw new Error(init.stderr);
  repo.git(['add', '-A']);
  repo.git(['-c', 'core.hooksPath=/dev/null', 'commit', '-q', '--no-verify', '-m', 'hooks']);
  return repo;
}

export interface ClaudePlay {
  run: HarnessRun;
  /** The model's server, closed: its requests stay readable. */
  server: ModelServer;
  /** What the harness sent the model after the last action (its tool result). */
  told: string;
}

/** One Claude Code session in `repo`: the model plays `actions`, then ends with "Done.". */
export async function playClaude(
  installed: Installed,
  repo: TestRepo,
  actions: Action[],
  extraArgs: string[] = [],
): Promise<ClaudePlay> {
  const server = await startModelServer('anthropic', [...actions, { kind: 'end', text: 'Done.' }]);
  try {
    const run = await runHarness('claude', {
      bin: installed.bin,
      projectDir: repo.dir,
      home: freshHome(),
      server,
      extraArgs,
    });
    const last = server.requestAtStep(actions.length);
    return { run, server, told: JSON.stringify(last?.body?.messages?.at(-1) ?? '') };
  } finally {
    await server.close();
  }
}
