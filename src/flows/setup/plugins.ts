import { spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { builtPath } from '../../runtime/package.js';
import { OPENCODE_READS } from '../../harness/opencode.js';
import type { PluginHarnessName } from '../../harness/types.js';

/**
 * The plugin harnesses (Cline CLI, opencode, Kilo Code): `guard init
 * --agent` writes one JS file into the folder each loads plugins from, and
 * `guard doctor` checks that it is there, guard's, and that the guard it
 * imports loads. The file imports guard lazily, on the first gated call,
 * and refuses the gated tools when it cannot (fail closed): a missing or
 * broken guard never turns into a harness that runs unguarded.
 */

/** Where each harness loads project plugins from (every .js there is loaded). */
export const PLUGIN_FILES: Record<PluginHarnessName, string> = {
  // @cline/core: .cline/plugins/*.js in the workspace
  cline: '.cline/plugins/guard.js',
  // opencode: {plugin,plugins}/*.{ts,js} in each .opencode folder from the project up to the worktree root
  opencode: '.opencode/plugins/guard.js',
  // Kilo: the same, in .kilo (or the legacy .kilocode); .opencode is not read
  kilo: '.kilo/plugins/guard.js',
};

/** The tools Cline's plugin hands to guard (the rest pass without loading it); opencode's and Kilo's hand every tool but their own read-only ones (harness/opencode.ts OPENCODE_READS): an MCP server's tool may write. */
export const PLUGIN_TOOLS: Record<PluginHarnessName, readonly string[]> = {
  cline: ['editor', 'apply_patch', 'run_commands'],
  opencode: ['write', 'edit', 'apply_patch', 'bash'],
  kilo: ['write', 'edit', 'apply_patch', 'bash'],
};

const MARK = 'guard init --agent';

/** The module the plugin imports: the project's guard-cli when installed there, else the running guard, by file URL. */
export function pluginModule(root: string): string {
  if (existsSync(path.join(root, 'node_modules', 'guard-cli', 'package.json')))
    return 'guard-cli/plugin';
  return pathToFileURL(realpathSync(builtPath('plugin/index.js'))).href;
}

const FAILED =
  "guard could not be loaded and refused this call (fail closed): ' + String(err && err.message || err) + '. Tell the user; guard doctor shows what is wrong.";

function source(h: PluginHarnessName, spec: string): string {
  const head = `// guard: checks every edit and shell command of ${h === 'cline' ? 'Cline' : h === 'kilo' ? 'Kilo Code' : 'opencode'} before it runs, inside the
// harness (written by ${MARK} ${h}; guard doctor checks it). A write that would
// destroy code is refused and kept under refs/guard/rejected/; what a command
// destroyed is reported to the model with the command that brings it back.
// When guard cannot be loaded, the gated tools are refused (fail closed).
const GUARD = ${JSON.stringify(spec)};
${h === 'cline' ? `const GATED = new Set(${JSON.stringify(PLUGIN_TOOLS[h])});` : `// every tool but opencode's own read-only ones (an MCP server's tool may write)\nconst READS = new Set(${JSON.stringify(OPENCODE_READS)});`}
let loading;
const guard = () => (loading ??= import(GUARD));
const failed = (err) => '${FAILED}';
`;
  if (h === 'cline') {
    return `${head}let setupCtx = {};
const gated = (c) => GATED.has(c?.toolCall?.toolName ?? c?.tool?.name);

export default {
  name: 'guard',
  manifest: { capabilities: ['hooks'] },
  setup(_api, ctx) {
    setupCtx = ctx ?? {};
  },
  hooks: {
    async beforeTool(c) {
      if (!gated(c)) return undefined;
      try {
        return await (await guard()).clineBeforeTool(c, setupCtx);
      } catch (err) {
        return { skip: true, reason: failed(err) };
      }
    },
    async afterTool(c) {
      if (!gated(c)) return undefined;
      try {
        return await (await guard()).clineAfterTool(c, setupCtx);
      } catch (err) {
        return { appendContext: failed(err) };
      }
    },
  },
};
`;
  }
  return `${head}
export const GuardPlugin = async (ctx) => ({
  'tool.execute.before': async (input, output) => {
    if (READS.has(input?.tool)) return;
    let g;
    try {
      g = await guard();
    } catch (err) {
      throw new Error(failed(err));
    }
    await g.opencodeBefore(${JSON.stringify(h)}, input, output, ctx);
  },
  'tool.execute.after': async (input, output) => {
    if (READS.has(input?.tool)) return;
    try {
      await (await guard()).opencodeAfter(${JSON.stringify(h)}, input, output, ctx);
    } catch (err) {
      if (output) output.output = (typeof output.output === 'string' ? output.output + '\\n\\n' : '') + failed(err);
    }
  },
});
`;
}

/** Write the harness's plugin file; the files changed (relative to root). */
export async function installPlugin(
  root: string,
  h: PluginHarnessName,
): Promise<{ changed: string[]; warnings: string[] }> {
  const rel = PLUGIN_FILES[h];
  const file = path.join(root, rel);
  const text = source(h, pluginModule(root));
  const old = await readFile(file, 'utf8').catch(() => null);
  if (old !== null && !old.includes(MARK))
    return {
      changed: [],
      warnings: [
        `${rel} exists and is not guard's: left alone; move it away and run guard init --agent ${h} again`,
      ],
    };
  if (old === text) return { changed: [], warnings: [] };
  const { installFiles } = await import('../../apply/apply.js');
  await installFiles([{ op: 'write', path: file, content: text }]);
  const warnings =
    h === 'cline'
      ? []
      : [
          `${h} reads project plugins unless ${h === 'kilo' ? 'KILO' : 'OPENCODE'}_DISABLE_PROJECT_CONFIG is set; guard doctor says when it is`,
        ];
  return { changed: [rel], warnings };
}

export interface PluginCheck {
  harness: PluginHarnessName;
  state: 'ok' | 'missing' | 'disabled' | 'absent';
  message: string;
  hint?: string;
}

/** What the plugin file imports (its GUARD line), or null. */
function specOf(text: string): string | null {
  const m = /^const GUARD = ("(?:[^"\\]|\\.)*");$/m.exec(text);
  if (!m) return null;
  try {
    return JSON.parse(m[1]!) as string;
  } catch {
    return null;
  }
}

/** Import the module from the plugin's folder in a node child, as the harness would; null when it loads with guard's plugin exports. */
function loadError(dir: string, spec: string): Promise<string | null> {
  const script = `const m = await import(process.argv[1]); for (const f of ['clineBeforeTool', 'clineAfterTool', 'opencodeBefore', 'opencodeAfter']) if (typeof m[f] !== 'function') throw new Error(f + ' is missing: guard is older than the plugin file');`;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, spec], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      const line = err.split('\n').find((l) => /Error/.test(l)) ?? err.trim().split('\n')[0] ?? '';
      resolve(code === 0 ? null : line.trim() || `node exited ${code ?? 'killed'}`);
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve(String(e));
    });
  });
}

/** Per plugin harness: the file is there, is guard's, and the guard it names loads. */
export async function pluginChecks(
  root: string,
  env: NodeJS.ProcessEnv,
  harnesses: readonly PluginHarnessName[],
): Promise<PluginCheck[]> {
  const out: PluginCheck[] = [];
  for (const h of harnesses) {
    const rel = PLUGIN_FILES[h];
    const file = path.join(root, rel);
    const hint = `guard init --agent ${h}`;
    const text = await readFile(file, 'utf8').catch(() => null);
    const used = existsSync(path.join(root, rel.split('/')[0]!));
    if (text === null) {
      out.push({
        harness: h,
        state: used ? 'missing' : 'absent',
        message: `${h}: no guard plugin in ${rel}`,
        hint,
      });
      continue;
    }
    const spec = specOf(text);
    if (!text.includes(MARK) || spec === null) {
      out.push({
        harness: h,
        state: 'missing',
        message: `${h}: ${rel} is not guard's plugin (or was changed by hand)`,
        hint: `move it away, then ${hint}`,
      });
      continue;
    }
    const err = await loadError(path.dirname(file), spec);
    if (err !== null) {
      out.push({
        harness: h,
        state: 'missing',
        message: `${h}: ${rel} cannot load guard (${spec}): ${err}; every edit and command is refused until it can`,
        hint: `install guard in the project (npm i -D guard-cli), then ${hint}`,
      });
      continue;
    }
    const off =
      h === 'kilo'
        ? 'KILO_DISABLE_PROJECT_CONFIG'
        : h === 'opencode'
          ? 'OPENCODE_DISABLE_PROJECT_CONFIG'
          : null;
    if (off && env[off]) {
      out.push({
        harness: h,
        state: 'disabled',
        message: `${h}: ${off} is set: ${h} loads no project plugin, guard's neither`,
        hint: `unset ${off}`,
      });
      continue;
    }
    if (h === 'cline' && !(Number(env.CLINE_PLUGIN_IMPORT_TIMEOUT_MS) >= 15_000)) {
      // Cline 3.0.65 gives a plugin 4 s to load in its sandbox and runs WITHOUT it when that fails, silently
      out.push({
        harness: h,
        state: 'ok',
        message: `${h}: ${rel} runs guard in process before and after ${PLUGIN_TOOLS[h].join(', ')}; but Cline runs without a plugin that takes over 4 s to load (a busy machine), saying nothing`,
        hint: 'export CLINE_PLUGIN_IMPORT_TIMEOUT_MS=30000 where you start cline',
      });
      continue;
    }
    out.push({
      harness: h,
      state: 'ok',
      message: `${h}: ${rel} runs guard in process before and after ${PLUGIN_TOOLS[h].join(', ')}`,
    });
  }
  return out;
}
