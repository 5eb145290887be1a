/**
 * Runs a real harness binary headless against the scripted model, the way
 * HARNESSES.md ("Running them offline, for tests") describes: a fresh HOME,
 * the harness's own variables and flags, nothing reaching the network.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cleanEnv } from '../helpers.js';
import type { HarnessName, RealHarness } from './install.js';
import type { ChatVocab, ModelApi, ModelServer } from './model-server.js';

export const HARNESS_API: Record<RealHarness, ModelApi> = {
  claude: 'anthropic',
  gemini: 'gemini',
  codex: 'openai',
  copilot: 'chat',
  qwen: 'chat',
  continue: 'chat',
  droid: 'chat',
};

/** What each harness calls its pre- and post-tool events. */
export const HOOK_EVENTS: Record<RealHarness, { pre: string; post: string }> = {
  claude: { pre: 'PreToolUse', post: 'PostToolUse' },
  gemini: { pre: 'BeforeTool', post: 'AfterTool' },
  codex: { pre: 'PreToolUse', post: 'PostToolUse' },
  copilot: { pre: 'preToolUse', post: 'postToolUse' },
  qwen: { pre: 'PreToolUse', post: 'PostToolUse' },
  continue: { pre: 'PreToolUse', post: 'PostToolUse' },
  droid: { pre: 'PreToolUse', post: 'PostToolUse' },
};

/** The Chat Completions harnesses' tools, as their real binaries offer them (seen in the model requests). */
export const CHAT_VOCAB: Record<'copilot' | 'qwen' | 'continue' | 'droid', ChatVocab> = {
  // Copilot CLI 1.0.102 with a gpt-4.1 model; GPT-5 models get apply_patch instead of create/edit
  copilot: {
    loopTools: ['bash', 'create', 'apply_patch'],
    read: (file) => ({ name: 'view', args: { path: file } }),
    edit: (file, old, now) => ({ name: 'edit', args: { path: file, old_str: old, new_str: now } }),
    write: (file, content) => ({ name: 'create', args: { path: file, file_text: content } }),
    shell: (command, background) => ({
      name: 'bash',
      args: { command, description: 'Scripted command', mode: background ? 'async' : 'sync' },
    }),
    patch: (patch) => ({ name: 'apply_patch', args: patch }),
  },
  qwen: {
    loopTools: ['write_file', 'run_shell_command'],
    read: (file) => ({ name: 'read_file', args: { file_path: file } }),
    edit: (file, old, now) => ({
      name: 'edit',
      args: { file_path: file, old_string: old, new_string: now },
    }),
    write: (file, content) => ({ name: 'write_file', args: { file_path: file, content } }),
    shell: (command) => ({
      name: 'run_shell_command',
      args: { command, description: 'Scripted command' },
    }),
  },
  // Factory Droid 0.225.2 with a custom Chat Completions model
  droid: {
    loopTools: ['Create', 'Execute'],
    read: (file) => ({ name: 'Read', args: { file_path: file } }),
    edit: (file, old, now) => ({
      name: 'Edit',
      args: { file_path: file, old_str: old, new_str: now },
    }),
    write: (file, content) => ({ name: 'Create', args: { file_path: file, content } }),
    shell: (command) => ({ name: 'Execute', args: { command, summary: 'Scripted command' } }),
  },
  // Continue CLI 1.5.47: Write says `filepath`, Edit `file_path`
  continue: {
    loopTools: ['Write', 'Bash'],
    read: (file) => ({ name: 'Read', args: { filepath: file } }),
    edit: (file, old, now) => ({
      name: 'Edit',
      args: { file_path: file, old_string: old, new_string: now },
    }),
    write: (file, content) => ({ name: 'Write', args: { filepath: file, content } }),
    shell: (command) => ({ name: 'Bash', args: { command } }),
  },
};

/**
 * The project-level hook configuration, exactly as HARNESSES.md gives it:
 * what `guard init --agent HARNESS` is to write. Returns the file written
 * (relative to the project).
 */
export function writeHookConfig(harness: HarnessName, projectDir: string, command: string): string {
  let file: string;
  let config: object;
  if (harness === 'claude') {
    file = '.claude/settings.json';
    const entry = [
      { matcher: 'Write|Edit|MultiEdit|Bash', hooks: [{ type: 'command', command, timeout: 60 }] },
    ];
    config = { hooks: { PreToolUse: entry, PostToolUse: entry } };
  } else if (harness === 'gemini') {
    file = '.gemini/settings.json';
    const entry = [
      {
        matcher: 'write_file|replace|run_shell_command',
        hooks: [{ name: 'guard', type: 'command', command, timeout: 60000 }],
      },
    ];
    config = { hooks: { BeforeTool: entry, AfterTool: entry } };
  } else {
    file = '.codex/hooks.json';
    const entry = [
      { matcher: 'apply_patch|Bash', hooks: [{ type: 'command', command, timeout: 60 }] },
    ];
    config = { hooks: { PreToolUse: entry, PostToolUse: entry } };
  }
  const p = path.join(projectDir, file);
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, `${JSON.stringify(config, null, 2)}\n`);
  return file;
}

/** The user-level configuration a fresh HOME needs to run offline against `server`. */
function prepareHome(
  harness: RealHarness,
  home: string,
  server: ModelServer,
  projectDir: string,
): void {
  mkdirSync(home, { recursive: true });
  if (harness === 'qwen') {
    mkdirSync(path.join(home, '.qwen'), { recursive: true });
    const settings = {
      security: { auth: { selectedType: 'openai' } },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { disableAutoUpdate: true },
    };
    writeFileSync(path.join(home, '.qwen', 'settings.json'), JSON.stringify(settings, null, 2));
  }
  if (harness === 'droid') {
    // a custom model (BYOK) needs no Factory login
    mkdirSync(path.join(home, '.factory'), { recursive: true });
    const settings = {
      customModels: [
        {
          model: 'scripted',
          displayName: 'scripted',
          baseUrl: `${server.origin}/v1`,
          apiKey: 'dummy',
          provider: 'generic-chat-completion-api',
          maxOutputTokens: 4096,
        },
      ],
    };
    writeFileSync(path.join(home, '.factory', 'settings.json'), JSON.stringify(settings, null, 2));
  }
  if (harness === 'continue') {
    mkdirSync(path.join(home, '.continue'), { recursive: true });
    const yaml = [
      'name: scripted',
      'version: 0.0.1',
      'schema: v1',
      'models:',
      '  - name: scripted',
      '    provider: openai',
      '    model: scripted',
      `    apiBase: ${server.origin}/v1`,
      '    apiKey: dummy',
      '    roles: [chat, edit, apply]',
      '    capabilities: [tool_use]',
      '',
    ];
    writeFileSync(path.join(home, '.continue', 'config.yaml'), yaml.join('\n'));
  }
  if (harness === 'gemini') {
    mkdirSync(path.join(home, '.gemini'), { recursive: true });
    // GOOGLE_GEMINI_BASE_URL alone selects the "gateway" auth type, which
    // 0.61.0 then rejects ("Invalid auth method selected."): name the API-key
    // type explicitly; the key itself comes from GEMINI_API_KEY.
    const settings = {
      security: { auth: { selectedType: 'gemini-api-key' } },
      telemetry: { enabled: false },
      privacy: { usageStatisticsEnabled: false },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
    };
    writeFileSync(path.join(home, '.gemini', 'settings.json'), JSON.stringify(settings, null, 2));
  }
  if (harness === 'codex') {
    const codexHome = path.join(home, '.codex');
    mkdirSync(codexHome, { recursive: true });
    const toml = [
      'model = "gpt-5.5"',
      'model_provider = "scripted"',
      'check_for_update_on_startup = false',
      '',
      '[model_providers.scripted]',
      'name = "scripted"',
      `base_url = "${server.origin}/v1"`,
      'wire_api = "responses"',
      'env_key = "SCRIPTED_API_KEY"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
      '[features]',
      '# else it contacts GitHub at start',
      'plugins = false',
      '',
      '[analytics]',
      'enabled = false',
      '',
      '# project hooks load only in a trusted project',
      `[projects.${JSON.stringify(projectDir)}]`,
      'trust_level = "trusted"',
      '',
    ].join('\n');
    writeFileSync(path.join(codexHome, 'config.toml'), toml);
  }
}

export interface HarnessRun {
  harness: RealHarness;
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  seconds: number;
  stdout: string;
  stderr: string;
  /** The harness's session id, read from its JSON event stream. */
  sessionId?: string;
  /** The JSON lines of stdout that parsed. */
  events: any[];
}

function argsFor(harness: RealHarness, prompt: string, home: string): string[] {
  // Copilot: repository hooks load in -p only for a trusted folder (HARNESSES.md)
  if (harness === 'copilot')
    return [
      '-p',
      prompt,
      '--allow-all',
      '--no-ask-user',
      '--no-auto-update',
      '--output-format',
      'json',
      '--trust-folder',
    ];
  if (harness === 'qwen') return ['-p', prompt, '--yolo', '--output-format', 'stream-json'];
  if (harness === 'droid')
    return [
      'exec',
      '-m',
      'custom:scripted',
      '--skip-permissions-unsafe',
      '-o',
      'stream-json',
      prompt,
    ];
  if (harness === 'continue')
    return ['-p', prompt, '--config', path.join(home, '.continue', 'config.yaml'), '--auto'];
  if (harness === 'claude')
    return [
      '-p',
      prompt,
      '--output-format',
      'stream-json',
      '--verbose',
      '--permission-mode',
      'bypassPermissions',
    ];
  // -m: with the default "auto" model, 0.61.0 first asks a classifier model
  // to route the prompt, and retries it for over a minute when the answer is
  // not what it expects.
  if (harness === 'gemini')
    return [
      '-m',
      'gemini-2.5-flash',
      '-p',
      prompt,
      '--approval-mode',
      'yolo',
      '--output-format',
      'stream-json',
    ];
  // Bypass: the workspace-write sandbox keeps .git read-only, and the
  // scripted `git checkout -- .` must really run. Hook trust: an untrusted
  // project hook is skipped silently (HARNESSES.md).
  return [
    'exec',
    '--json',
    '--dangerously-bypass-approvals-and-sandbox',
    '--dangerously-bypass-hook-trust',
    prompt,
  ];
}

function envFor(
  harness: RealHarness,
  home: string,
  server: ModelServer,
  model?: string,
): NodeJS.ProcessEnv {
  // Only what the harness needs, built from nothing: the runner's CI
  // variables (CI, GITHUB_ACTIONS, ...) would change how the harnesses
  // behave, and guard would read CI=true as auto mode by itself (the test
  // wants guard to see the harness, not the runner); no user git config
  // (cleanEnv's GIT_ variables), no credentials, no proxies.
  // TMPDIR inside HOME: what the harness leaves in its temp folder (Gemini
  // writes error reports there) goes when HOME goes.
  mkdirSync(path.join(home, 'tmp'), { recursive: true });
  const git = Object.fromEntries(Object.entries(cleanEnv()).filter(([k]) => k.startsWith('GIT_')));
  const env: NodeJS.ProcessEnv = {
    ...git,
    PATH: process.env.PATH,
    HOME: home,
    TMPDIR: path.join(home, 'tmp'),
    LANG: 'C.UTF-8',
    TERM: 'dumb',
  };
  if (harness === 'claude') {
    Object.assign(env, {
      ANTHROPIC_BASE_URL: server.origin,
      ANTHROPIC_API_KEY: 'dummy',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      // bypassPermissions is refused to root unless it says it is sandboxed.
      IS_SANDBOX: '1',
    });
  } else if (harness === 'gemini') {
    Object.assign(env, {
      GEMINI_API_KEY: 'dummy',
      GOOGLE_GEMINI_BASE_URL: server.origin,
      // Without it 0.61.0 exits 55 before any request (untrusted folder).
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
      GEMINI_TELEMETRY_ENABLED: 'false',
    });
  } else if (harness === 'copilot') {
    Object.assign(env, {
      COPILOT_OFFLINE: 'true',
      COPILOT_PROVIDER_BASE_URL: `${server.origin}/v1`,
      COPILOT_PROVIDER_API_KEY: 'dummy',
      // gpt-4.1 gets create/edit; a GPT-5 model gets apply_patch with the raw patch as toolArgs
      COPILOT_MODEL: model ?? 'gpt-4.1',
      COPILOT_AUTO_UPDATE: 'false',
    });
  } else if (harness === 'qwen') {
    Object.assign(env, {
      OPENAI_API_KEY: 'dummy',
      OPENAI_BASE_URL: `${server.origin}/v1`,
      OPENAI_MODEL: model ?? 'scripted',
    });
  } else if (harness === 'continue') {
    Object.assign(env, { CONTINUE_GLOBAL_DIR: path.join(home, '.continue') });
  } else {
    Object.assign(env, {
      CODEX_HOME: path.join(home, '.codex'),
      SCRIPTED_API_KEY: 'dummy',
      RUST_LOG: 'error',
    });
  }
  return env;
}

function sessionOf(harness: RealHarness, events: any[]): string | undefined {
  for (const e of events) {
    if (harness === 'copilot' && e.type === 'result' && e.sessionId) return e.sessionId;
    if ((harness === 'qwen' || harness === 'droid') && e.session_id) return e.session_id;
    if (harness === 'claude' && e.type === 'system' && e.session_id) return e.session_id;
    if (harness === 'gemini' && e.type === 'init' && e.session_id) return e.session_id;
    if (harness === 'codex' && e.type === 'thread.started' && e.thread_id) return e.thread_id;
  }
  return undefined;
}

export interface RunOptions {
  bin: string;
  projectDir: string;
  home: string;
  server: ModelServer;
  prompt?: string;
  timeoutMs?: number;
  /** Extra environment for the harness, and so for its hooks (e.g. GUARD_FAULT). */
  env?: Record<string, string>;
  /** The model name the harness is told to use (Copilot: gpt-5.x offers apply_patch). */
  model?: string;
  /** Arguments added after the harness's own (Claude: --mcp-config FILE). */
  extraArgs?: string[];
}

/** Run one harness to the end of the script (or the timeout, which kills its whole process group). */
export function runHarness(harness: RealHarness, opts: RunOptions): Promise<HarnessRun> {
  prepareHome(harness, opts.home, opts.server, opts.projectDir);
  const prompt = opts.prompt ?? 'Tidy up this project.';
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(
      opts.bin,
      [...argsFor(harness, prompt, opts.home), ...(opts.extraArgs ?? [])],
      {
        cwd: opts.projectDir,
        env: { ...envFor(harness, opts.home, opts.server, opts.model), ...opts.env },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, opts.timeoutMs ?? 90_000);
    const done = (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(timer);
      const events: any[] = [];
      for (const line of stdout.split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          events.push(JSON.parse(line));
        } catch {
          // not one of the JSON lines
        }
      }
      resolve({
        harness,
        code,
        signal,
        timedOut,
        seconds: (Date.now() - started) / 1000,
        stdout,
        stderr,
        events,
        sessionId: sessionOf(harness, events),
      });
    };
    child.on('close', done);
    child.on('error', (e) => {
      stderr += String(e);
      done(127, null);
    });
  });
}
