/**
 * Running the plugin harnesses (Cline CLI, opencode, Kilo Code) for real,
 * offline, against the Chat Completions scripted model (chat-server.ts):
 * a fresh HOME per run, the provider pointed at 127.0.0.1, updates,
 * telemetry and sharing off. guard reaches each through the plugin file
 * `guard init --agent NAME` wrote into the project.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cleanEnv } from '../helpers.js';

export type PluginHarness = 'cline' | 'opencode' | 'kilo';

/** Pinned: the versions whose plugin API and tools src/harness/cline.ts and opencode.ts were read from. */
export const PLUGIN_PACKAGES: Record<PluginHarness, { pkg: string; version: string; bin: string }> =
  {
    cline: { pkg: 'cline', version: '3.0.65', bin: 'cline' },
    opencode: { pkg: 'opencode-ai', version: '1.18.33', bin: 'opencode' },
    // 7.7.7: the newest version whose @kilocode/cli-linux-x64 is published (7.8.1's is not)
    kilo: { pkg: '@kilocode/cli', version: '7.7.7', bin: 'kilo' },
  };

export const MODEL = 'scripted-model';
export const PROMPT =
  'Make the small change to small.py, then tidy state.py, then reset the working tree.';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

function run(
  bin: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<RunResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(bin, args, {
      cwd: opts.cwd,
      env: opts.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const kill = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    };
    const timer = setTimeout(kill, opts.timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      // a harness may leave a helper (a language server, a sandbox) behind: end the whole group
      kill();
      resolve({ code, stdout, stderr, seconds: (Date.now() - started) / 1000 });
    });
  });
}

function baseEnv(home: string): NodeJS.ProcessEnv {
  // guard's own auto mode is not what is under test: the plugin is in auto mode by itself
  return cleanEnv({
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local/share'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_STATE_HOME: path.join(home, '.local/state'),
    CI: undefined,
    NO_COLOR: '1',
  });
}

export async function runPluginHarness(
  h: PluginHarness,
  bin: string,
  project: string,
  home: string,
  baseUrl: string,
  timeoutMs = 120_000,
): Promise<RunResult> {
  // PWD too: opencode and Kilo take their folder from it, not from the process's working folder
  const env: NodeJS.ProcessEnv = { ...baseEnv(home), PWD: project };
  if (h === 'cline') {
    Object.assign(env, {
      CLINE_SESSION_BACKEND_MODE: 'local',
      CLINE_NO_AUTO_UPDATE: '1',
      CLINE_TELEMETRY_DISABLED: '1',
    });
    // Cline gives a plugin 4 s to load in its sandbox and runs WITHOUT it when that fails (seen on this loaded machine)
    if (process.env.GUARD_CLINE_IMPORT_TIMEOUT_MS !== undefined)
      env.CLINE_PLUGIN_IMPORT_TIMEOUT_MS = process.env.GUARD_CLINE_IMPORT_TIMEOUT_MS;
    else env.CLINE_PLUGIN_IMPORT_TIMEOUT_MS = '30000';
    const auth = await run(
      bin,
      ['auth', '-p', 'openai-compatible', '-k', 'dummy', '-m', MODEL, '-b', baseUrl],
      { cwd: project, env, timeoutMs: 60_000 },
    );
    if (auth.code !== 0) return auth;
    return run(bin, ['--json', '-c', project, PROMPT], { cwd: project, env, timeoutMs });
  }
  // opencode and Kilo: an OpenAI-compatible provider in the user config
  const provider = {
    npm: '@ai-sdk/openai-compatible',
    name: 'Scripted',
    options: { baseURL: baseUrl, apiKey: 'dummy' },
    models: {
      [MODEL]: { name: 'Scripted', tool_call: true, limit: { context: 100000, output: 8000 } },
    },
  };
  const config = {
    $schema: 'https://opencode.ai/config.json',
    model: `scripted/${MODEL}`,
    small_model: `scripted/${MODEL}`,
    provider: { scripted: provider },
    autoupdate: false,
    share: 'disabled',
    permission: { edit: 'allow', bash: 'allow', webfetch: 'deny' },
    lsp: false,
    formatter: false,
  };
  const dir = path.join(home, '.config', h === 'kilo' ? 'kilo' : 'opencode');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, h === 'kilo' ? 'kilo.json' : 'opencode.json'),
    JSON.stringify(config, null, 2),
  );
  const prefix = h === 'kilo' ? 'KILO' : 'OPENCODE';
  Object.assign(env, {
    [`${prefix}_DISABLE_AUTOUPDATE`]: '1',
    [`${prefix}_DISABLE_SHARE`]: '1',
    [`${prefix}_DISABLE_LSP_DOWNLOAD`]: '1',
    [`${prefix}_DISABLE_DEFAULT_PLUGINS`]: '1',
    [`${prefix}_DISABLE_MODELS_FETCH`]: '1',
    [`${prefix}_DISABLE_TELEMETRY`]: '1',
  });
  return run(bin, ['run', '--print-logs', '--format', 'json', '-m', `scripted/${MODEL}`, PROMPT], {
    cwd: project,
    env,
    timeoutMs,
  });
}
