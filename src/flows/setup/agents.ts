import { existsSync, realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { builtPath } from '../../runtime/package.js';
import { GuardError } from '../../core/errors.js';
import {
  HARNESSES,
  isHarness,
  isPluginHarness,
  type HarnessName,
  type PluginHarnessName,
} from '../../harness/types.js';
import {
  ROWS,
  afterTools,
  matcherOf,
  toolsLabel,
  type ClaudeStyleRow,
  type RowName,
} from '../../harness/table.js';
import { installPlugin, pluginChecks } from './plugins.js';
import { askGate, fallback, isGuardAskGatedCommand, isGuardHookCommand } from './hook-command.js';
import { readSettingsFile } from '../doctor/claude-settings.js';

/**
 * `guard init --agent HARNESS...`: each harness's project-level hook
 * configuration, merged into what is there (other hooks and settings are
 * kept), idempotent (a second run changes nothing), and `guard doctor`'s
 * per-harness report. Every installed command turns a guard that dies
 * without answering (killed, not installed, node missing) into the
 * harness's block: the harnesses themselves fail open.
 */

/** The Claude-style harnesses (harness/table.ts): config, matcher and events come from their row. */
const STYLE = ROWS as Readonly<Record<RowName, ClaudeStyleRow>>;
export const styleRow = (h: HarnessName): ClaudeStyleRow | null =>
  Object.hasOwn(STYLE, h) ? STYLE[h as RowName] : null;
const fromRows = <T>(f: (r: ClaudeStyleRow) => T) =>
  Object.fromEntries(Object.entries(STYLE).map(([k, r]) => [k, f(r)])) as Record<RowName, T>;

/** Tools guard gates, per harness (the matchers it installs; Copilot's hook has none: every tool). */
export const MATCHERS: Record<HarnessName, string> = {
  gemini: 'write_file|replace|run_shell_command',
  codex: 'apply_patch|Bash|shell|exec_command',
  cursor: 'Write|StrReplace|Edit|Delete|Shell',
  cline: 'editor|apply_patch|run_commands',
  copilot: 'create|edit|apply_patch|bash',
  ...fromRows(matcherOf),
};

/**
 * Where the after event is installed, for the harnesses of their own shape: none of them can
 * answer `ask` (their payloads cannot say a person is there), so after a write there is nothing
 * to record: the shell tools alone (table.ts afterTools; docs/harnesses/README.md). Copilot's
 * hooks have no matcher (every tool, both events).
 */
const AFTER = {
  gemini: 'run_shell_command',
  codex: 'Bash|shell|exec_command',
  cursor: 'Shell',
} as const;

/** Where each harness reads its project hooks. */
export const CONFIG_FILES: Record<HarnessName, string> = {
  gemini: '.gemini/settings.json',
  codex: '.codex/hooks.json',
  cursor: '.cursor/hooks.json',
  cline: '.cline/plugins/guard.js',
  copilot: '.github/hooks/guard.json',
  ...fromRows((r) => r.config.file),
};

/** Seconds the harness gives the hook; guard answers (fail closed) after 20. */
const TIMEOUT_S = 60;
/** guard's own budget must fit inside the harness's timeout. */
export const MIN_TIMEOUT_S = 25;

function quote(s: string): string {
  return /^[A-Za-z0-9_./@%+=:,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The guard installed in the project (node_modules/.bin/guard, named
 * through the harness's project-folder variable where it has one), or else
 * the guard running now, by absolute path.
 */
export function guardCommand(root: string, projectVar: string | null): string {
  if (existsSync(path.join(root, 'node_modules', '.bin', 'guard'))) {
    return projectVar
      ? `"$${projectVar}"/node_modules/.bin/guard`
      : quote(path.join(root, 'node_modules', '.bin', 'guard'));
  }
  // yarn Plug'n'Play: no node_modules/.bin; yarn starts the project's guard from its zip cache
  if (existsSync(path.join(root, '.pnp.cjs')))
    return `cd ${projectVar ? `"$${projectVar}"` : quote(root)} && yarn guard`;
  const main = realpathSync(builtPath('cli/main.js'));
  return `${quote(process.execPath)} ${quote(main)}`;
}

/** `CMD hook HARNESS`, then on any non-zero exit the harness's block (hook-command.ts fallback). */
function wrapped(cmd: string, harness: HarnessName): string {
  return `${cmd} hook ${harness}${fallback(harness)}`;
}

type Json = Record<string, unknown>;

async function readJson(file: string): Promise<Json> {
  // a FIFO or a device planted there would block or never end (claude-settings.ts)
  const text = await readSettingsFile(file);
  if (text === null)
    throw new GuardError(
      'E_CONFIG',
      `${file} is not a regular file (a pipe, a device, or over 4 MB)`,
      'move it away, then run guard init --agent again',
    );
  if (text.trim() === '') return {};
  try {
    // (a byte order mark first: the harnesses read such a file as JSON)
    const v = JSON.parse(text.replace(/^\uFEFF/, '')) as unknown;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Json;
  } catch {
    /* below */
  }
  throw new GuardError(
    'E_CONFIG',
    `${file} is not a JSON object`,
    'fix it (or move it away), then run guard init --agent again',
  );
}

const commandIn = (h: unknown) =>
  typeof h === 'object' && h !== null ? String((h as Json).command ?? (h as Json).bash ?? '') : '';

/** Is this hook entry guard's hook (doctor: the before event's)? */
function isGuardEntry(h: unknown): boolean {
  return isGuardHookCommand(commandIn(h));
}

/** ... or its after-write form (askGate: never a before event's), which init replaces as well. */
function isAnyGuardEntry(h: unknown): boolean {
  return isGuardEntry(h) || isGuardAskGatedCommand(commandIn(h));
}

/** Put guard's matcher groups into hooks[event], replacing guard's earlier ones and keeping everything else. */
function mergeGroup(settings: Json, event: string, ...groups: Json[]): void {
  const hooks = (
    typeof settings.hooks === 'object' && settings.hooks !== null && !Array.isArray(settings.hooks)
      ? settings.hooks
      : {}
  ) as Json;
  settings.hooks = hooks;
  const list = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
  const kept = list
    .map((g) => {
      if (typeof g !== 'object' || g === null) return g;
      const inner = (g as Json).hooks;
      if (!Array.isArray(inner)) return isAnyGuardEntry(g) ? null : g;
      const rest = inner.filter((h) => !isAnyGuardEntry(h));
      if (rest.length === inner.length) return g;
      return rest.length ? { ...(g as Json), hooks: rest } : null;
    })
    .filter((g) => g !== null);
  hooks[event] = [...kept, ...groups];
}

async function writeIfChanged(file: string, text: string, mode?: number): Promise<boolean> {
  const old = await readFile(file, 'utf8').catch(() => null);
  const { installFiles } = await import('../../apply/apply.js');
  if (old === text) {
    if (mode !== undefined) await installFiles([{ op: 'mode', path: file, mode }]);
    return false;
  }
  await installFiles([
    { op: 'write', path: file, content: text, ...(mode !== undefined ? { mode } : {}) },
  ]);
  return true;
}

/**
 * Other files a Claude-style harness reads hooks from, where guard's hook
 * must also be when they exist. Factory Droid 0.225.2 runs only the hooks of
 * .factory/settings.json (seen: a hook in .factory/hooks.json never ran);
 * its newer docs say hooks.json wins when present.
 */
const EXTRA_FILES: Partial<Record<HarnessName, string[]>> = { droid: ['.factory/hooks.json'] };

/** What `guard init --agent` says after writing a harness's config. */
const INIT_WARNINGS: Partial<Record<HarnessName, string>> = {
  continue:
    'Continue CLI 1.5.47 loads these hooks but was not seen running them for its tools: guard doctor, and docs/harnesses/continue.md',
  crush:
    'Crush: written from its docs, not verified against the real binary (docs/harnesses/crush.md)',
};

/** Write one harness's config; the files changed (relative to root). */
export async function installAgent(
  root: string,
  harness: HarnessName,
): Promise<{ changed: string[]; warnings: string[] }> {
  const row = styleRow(harness);
  // a plugin, not a shell hook (a hook's cancel aborts Cline's whole run): flows/setup/plugins.ts
  if (!row && harness === 'cline') return installPlugin(root, 'cline');
  const changed: string[] = [];
  const file = path.join(root, CONFIG_FILES[harness]);
  const rel = CONFIG_FILES[harness];
  const json: EditJson = async (build, f = file, r = rel) => {
    const s = await readJson(f);
    build(s);
    if (await writeIfChanged(f, JSON.stringify(s, null, 2) + '\n')) changed.push(r);
  };
  const warning = row
    ? await installStyled(root, harness, row, json)
    : await installOwn(root, harness, json);
  return { changed, warnings: warning ? [warning] : [] };
}

/** Edit a harness's JSON settings in place: `f` (default its settings file) is read, built on, written if changed. */
type EditJson = (build: (s: Json) => void, f?: string, r?: string) => Promise<void>;

/** A Claude-style harness: its row says where, which events, which tools. Returns what to tell the person, if anything. */
async function installStyled(
  root: string,
  harness: HarnessName,
  row: NonNullable<ReturnType<typeof styleRow>>,
  json: EditJson,
): Promise<string | undefined> {
  const command = wrapped(guardCommand(root, row.config.projectVar), harness);
  const timeout = row.config.timeoutUnit === 'ms' ? TIMEOUT_S * 1000 : TIMEOUT_S;
  const install = (s: Json) => {
    const hook = {
      type: 'command',
      command,
      timeout,
      ...(row.config.onFailureBlock ? { onFailure: 'block' } : {}),
    };
    const gate = askGate(harness);
    for (const ev of row.config.events) {
      const after = !row.events.pre.includes(ev);
      if (!after) mergeGroup(s, ev, { matcher: matcherOf(row), hooks: [hook] });
      else if (gate === null)
        mergeGroup(s, ev, { matcher: matcherOf(row, afterTools(row)), hooks: [hook] });
      else {
        // after a write, guard only when a person was asked about one (hook-command.ts askGate)
        const writes = afterTools(row).filter((t) => row.tools[t]!.kind !== 'shell');
        const shells = afterTools(row).filter((t) => row.tools[t]!.kind === 'shell');
        mergeGroup(
          s,
          ev,
          { matcher: matcherOf(row, shells), hooks: [hook] },
          { matcher: `^(${writes.join('|')})$`, hooks: [{ ...hook, command: gate + command }] },
        );
      }
    }
  };
  await json(install);
  for (const extra of EXTRA_FILES[harness] ?? []) {
    // a second file the harness may read instead (Droid: hooks.json shadows settings.json in newer builds)
    if (existsSync(path.join(root, extra))) await json(install, path.join(root, extra), extra);
  }
  return INIT_WARNINGS[harness];
}

/** A harness with settings of its own shape (Gemini, Codex, Cursor, Copilot). Returns what to tell the person, if anything. */
async function installOwn(
  root: string,
  harness: HarnessName,
  json: EditJson,
): Promise<string | undefined> {
  switch (harness) {
    case 'gemini': {
      const command = wrapped(guardCommand(root, 'GEMINI_PROJECT_DIR'), 'gemini');
      await json((s) => {
        for (const ev of ['BeforeTool', 'AfterTool'])
          mergeGroup(s, ev, {
            matcher: ev === 'AfterTool' ? AFTER.gemini : MATCHERS.gemini,
            hooks: [{ name: 'guard', type: 'command', command, timeout: TIMEOUT_S * 1000 }],
          });
      });
      return undefined;
    }
    case 'codex': {
      const command = wrapped(guardCommand(root, null), 'codex');
      await json((s) => {
        for (const ev of ['PreToolUse', 'PostToolUse'])
          mergeGroup(s, ev, {
            matcher: ev === 'PostToolUse' ? AFTER.codex : MATCHERS.codex,
            hooks: [{ type: 'command', command, timeout: TIMEOUT_S }],
          });
      });
      return 'Codex runs a new or changed hook only after you trust it: open /hooks in codex (and trust the project), then guard doctor';
    }
    case 'cursor': {
      const command = wrapped(guardCommand(root, null), 'cursor');
      await json((s) => {
        if (s.version === undefined) s.version = 1;
        const hooks = (
          typeof s.hooks === 'object' && s.hooks !== null && !Array.isArray(s.hooks) ? s.hooks : {}
        ) as Json;
        s.hooks = hooks;
        for (const ev of ['preToolUse', 'postToolUse']) {
          const list = (Array.isArray(hooks[ev]) ? (hooks[ev] as unknown[]) : []).filter(
            (h) => !isGuardEntry(h),
          );
          hooks[ev] = [
            ...list,
            {
              command,
              matcher: ev === 'postToolUse' ? AFTER.cursor : MATCHERS.cursor,
              failClosed: true,
              timeout: TIMEOUT_S,
            },
          ];
        }
      });
      return undefined;
    }
    case 'copilot': {
      const bash = wrapped(guardCommand(root, null), 'copilot');
      const entry = { type: 'command', bash, timeoutSec: TIMEOUT_S };
      await json((s) => {
        s.version = 1;
        s.hooks = { preToolUse: [entry], postToolUse: [entry] };
      });
      return 'Copilot CLI runs repository hooks in copilot -p only in a trusted folder, and skips them silently elsewhere: trust this folder once in copilot (or pass --trust-folder), then guard doctor';
    }
  }
  return undefined;
}

/** The harness names of `--agent` (space- or comma-separated); a usage error before anything is written. */
export function agentNames(names: readonly string[]): (HarnessName | PluginHarnessName)[] {
  const list = names
    .flatMap((n) => n.split(','))
    .map((n) => n.trim().toLowerCase())
    .filter(Boolean);
  const all = [...HARNESSES, 'opencode', 'kilo'].join(' ');
  for (const n of list)
    if (!isHarness(n) && !isPluginHarness(n))
      throw new GuardError('E_USAGE', `unknown agent harness "${n}"`, `one or more of: ${all}`);
  if (list.length === 0)
    throw new GuardError('E_USAGE', '--agent needs a harness', `one or more of: ${all}`);
  return [...new Set(list)] as (HarnessName | PluginHarnessName)[];
}

export async function installAgents(
  root: string,
  names: readonly string[],
): Promise<{ changed: string[]; warnings: string[] }> {
  const list = agentNames(names);
  const changed: string[] = [];
  const warnings: string[] = [];
  for (const n of list) {
    const r = isHarness(n) ? await installAgent(root, n) : await installPlugin(root, n);
    changed.push(
      ...r.changed.map((f) =>
        isPluginHarness(n)
          ? `wrote ${f} (${n} runs guard in process, as a plugin)`
          : `wrote ${f} (${n} hooks run guard hook ${n})`,
      ),
    );
    warnings.push(...r.warnings);
  }
  return { changed, warnings };
}

/* ---------------------------------------------------------------- doctor */

export interface AgentCheck {
  harness: HarnessName | PluginHarnessName;
  state:
    | 'ok'
    | 'missing'
    | 'disabled'
    | 'untrusted'
    | 'timeout'
    | 'matcher'
    | 'shadowed'
    | 'absent';
  message: string;
  hint?: string;
}

function groupsOf(s: Json, event: string): Json[] {
  const hooks = s.hooks as Json | undefined;
  const list = hooks && Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
  return list.filter((g): g is Json => typeof g === 'object' && g !== null);
}

function guardHooks(s: Json, event: string): Json[] {
  return groupsOf(s, event).flatMap(
    (g) => (Array.isArray(g.hooks) ? (g.hooks as unknown[]) : [g]).filter(isGuardEntry) as Json[],
  );
}

/**
 * The tools a matcher lets past guard: Claude-style matchers are a tool
 * name or a regex over the whole name; empty or `*` is every tool.
 */
export function missedTools(matcher: unknown, tools: readonly string[]): string[] {
  if (
    matcher === undefined ||
    matcher === null ||
    matcher === '' ||
    matcher === '*' ||
    matcher === '.*'
  )
    return [];
  if (typeof matcher !== 'string') return [...tools];
  let re: RegExp;
  try {
    re = new RegExp(`^(?:${matcher})$`);
  } catch {
    return [...tools];
  }
  return tools.filter((t) => !re.test(t));
}

/** The tools guard must see, per harness whose hooks have matchers. */
function gatedTools(h: HarnessName): string[] | null {
  const row = styleRow(h);
  // an MCP tool stands for its prefix (any mcp__SERVER__TOOL)
  if (row)
    return [...Object.keys(row.tools), ...(row.opaque ? [`${row.opaque.prefix}server__tool`] : [])];
  if (h === 'copilot' || h === 'cline') return null;
  return MATCHERS[h].split('|');
}

/** Settings files where `disableAllHooks: true` turns a harness's hooks off (the first that says so). */
function disableFiles(h: HarnessName, root: string, home: string | undefined): string[] {
  const inHome = (f: string) => (home ? [path.join(home, f)] : []);
  switch (h) {
    case 'claude':
      return [
        '/etc/claude-code/managed-settings.json',
        ...inHome('.claude/settings.json'),
        path.join(root, '.claude/settings.json'),
        path.join(root, '.claude/settings.local.json'),
      ];
    case 'continue':
      // its hook engine reads these six (package source, 1.5.47)
      return [
        ...inHome('.claude/settings.json'),
        ...inHome('.continue/settings.json'),
        ...[
          '.claude/settings.json',
          '.continue/settings.json',
          '.claude/settings.local.json',
          '.continue/settings.local.json',
        ].map((f) => path.join(root, f)),
      ];
    case 'qwen':
      return [...inHome('.qwen/settings.json'), path.join(root, '.qwen/settings.json')];
    case 'droid':
      return [
        ...inHome('.factory/settings.json'),
        path.join(root, '.factory/settings.json'),
        path.join(root, '.factory/settings.local.json'),
      ];
    default:
      return [];
  }
}

/** Is `root` a folder Copilot CLI trusts (repository hooks load in `copilot -p` only then; `trusted_folders` or `trustedFolders` in ~/.copilot/config.json, both seen to work in 1.0.102)? */
async function copilotTrusts(
  root: string,
  home: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<boolean> {
  if (env.COPILOT_ALLOW_ALL === 'true' || env.GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS === 'true')
    return true;
  const dir = env.COPILOT_HOME || (home ? path.join(home, '.copilot') : null);
  if (!dir) return false;
  // config.json starts with `//` comment lines (Copilot writes it so): JSON with comments
  const text = await readFile(path.join(dir, 'config.json'), 'utf8').catch(() => '{}');
  let c: Json = {};
  try {
    c = JSON.parse(text.replace(/^\s*\/\/.*$/gm, '')) as Json;
  } catch {
    /* unreadable: not trusted */
  }
  const list = [c.trusted_folders, c.trustedFolders].flatMap((v) =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [],
  );
  return list.some((f) => {
    const rel = path.relative(path.resolve(f), root);
    return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
  });
}

/**
 * Per harness: is guard's hook there and would it run? Harnesses whose
 * folder does not exist and that have no guard hook are `absent` (not
 * used here), reported only as info.
 */
export async function agentChecks(
  root: string,
  home: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<AgentCheck[]> {
  const out: AgentCheck[] = [];
  for (const h of HARNESSES) {
    if (h === 'cline') out.push(...(await pluginChecks(root, env, ['cline'])));
    else out.push(await harnessCheck(h, root, home, env));
  }
  out.push(...(await pluginChecks(root, env, ['opencode', 'kilo'])));
  return out;
}

/** A harness's settings file that holds guard's hook, as agentChecks read it. */
interface Hooked {
  h: HarnessName;
  /** The settings file, relative to the repository. */
  rel: string;
  settings: Json;
  row: ClaudeStyleRow | null;
  /** The event guard's hook runs before a tool on. */
  preEvent: string;
  /** guard's hook entries under that event. */
  found: Json[];
}

/** The first thing that stops guard's hook from running for this harness, or `ok`. */
async function harnessCheck(
  h: HarnessName,
  root: string,
  home: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<AgentCheck> {
  const rel = CONFIG_FILES[h];
  let settings: Json;
  try {
    settings = await readJson(path.join(root, rel));
  } catch {
    return {
      harness: h,
      state: 'missing',
      message: `${h}: ${rel} is not valid JSON: the harness runs no hook from it`,
      hint: `fix it, then guard init --agent ${h}`,
    };
  }
  const row = styleRow(h);
  const preEvent = row
    ? row.config.events[0]!
    : { gemini: 'BeforeTool', codex: 'PreToolUse', cursor: 'preToolUse', copilot: 'preToolUse' }[
        h as 'gemini' | 'codex' | 'cursor' | 'copilot'
      ];
  const found = guardHooks(settings, preEvent);
  if (found.length === 0) {
    const used = existsSync(path.join(root, rel.split('/')[0]!));
    return {
      harness: h,
      state: used ? 'missing' : 'absent',
      message: `${h}: no guard hook in ${rel} (${preEvent})`,
      hint: `guard init --agent ${h}`,
    };
  }
  const hooked: Hooked = { h, rel, settings, row, preEvent, found };
  return (
    (await hooksDisabled(hooked, root, home)) ??
    matcherGap(hooked) ??
    shortTimeout(hooked) ??
    failsOpen(hooked) ??
    (await shadowedByHooksJson(hooked, root)) ??
    (await notTrusted(hooked, root, home, env)) ?? {
      harness: h,
      state: 'ok',
      message: `${h}: ${rel} runs guard hook ${h} ${whenRun(h, row)}`,
    }
  );
}

/** When guard's hook runs, as doctor says it: before the gated tools, after those whose after event carries something. */
function whenRun(h: HarnessName, row: ClaudeStyleRow | null): string {
  const list = (m: string) => m.split('|').join(', ');
  const before = row ? toolsLabel(row) : list(MATCHERS[h]);
  const after = row
    ? toolsLabel(row, afterTools(row))
    : Object.hasOwn(AFTER, h)
      ? list(AFTER[h as keyof typeof AFTER])
      : before;
  return after === before ? `before and after ${before}` : `before ${before}; after ${after}`;
}

async function hooksDisabled(
  { h, rel, settings, row }: Hooked,
  root: string,
  home: string | undefined,
): Promise<AgentCheck | null> {
  const disabledIn = [];
  for (const f of disableFiles(h, root, home))
    if ((await readJson(f).catch(() => ({}) as Json)).disableAllHooks === true) disabledIn.push(f);
  if (disabledIn.length) {
    return {
      harness: h,
      state: 'disabled',
      message: `${h}: disableAllHooks is true in ${disabledIn.join(', ')}: ${row?.label ?? h} runs no hook, guard's neither`,
      hint: `remove disableAllHooks from ${disabledIn.join(', ')}`,
    };
  }
  if (h === 'gemini' && (settings.hooksConfig as Json | undefined)?.enabled === false) {
    return {
      harness: h,
      state: 'disabled',
      message: `gemini: hooksConfig.enabled is false in ${rel}`,
      hint: 'remove it',
    };
  }
  return null;
}

/** A matcher that lets a write or shell tool past guard. */
function matcherGap({ h, rel, settings, preEvent }: Hooked): AgentCheck | null {
  const tools = gatedTools(h);
  if (!tools) return null;
  const groups = groupsOf(settings, preEvent).filter((g) =>
    (Array.isArray(g.hooks) ? (g.hooks as unknown[]) : [g]).some(isGuardEntry),
  );
  const seen = new Set(tools);
  for (const g of groups)
    for (const t of [...seen]) if (!missedTools(g.matcher, [t]).length) seen.delete(t);
  if (!seen.size) return null;
  return {
    harness: h,
    state: 'matcher',
    message: `${h}: guard's hook in ${rel} does not run for ${[...seen].map((t) => t.replace(/^mcp__server__tool$/, 'mcp__* (MCP tools)')).join(', ')}: those calls write or run commands unchecked`,
    hint: `guard init --agent ${h} (its matcher is ${MATCHERS[h]})`,
  };
}

function shortTimeout({ h, row, found }: Hooked): AgentCheck | null {
  const t = found
    .map((x) => Number(h === 'copilot' ? x.timeoutSec : x.timeout))
    .find((n) => Number.isFinite(n));
  const ms = h === 'gemini' || row?.config.timeoutUnit === 'ms';
  const seconds = t === undefined ? null : ms ? t / 1000 : t;
  if (seconds === null || seconds >= MIN_TIMEOUT_S) return null;
  return {
    harness: h,
    state: 'timeout',
    message: `${h}: guard's hook timeout is ${seconds} s: a slow call would be cut short and the harness would let the tool run`,
    hint: `give it ${TIMEOUT_S} s (guard init --agent ${h} writes that)`,
  };
}

/** A harness that runs the tool when its hook fails unless the hook says `onFailure: "block"` (Claude Code). */
function failsOpen({ h, rel, row, found }: Hooked): AgentCheck | null {
  if (!row?.config.onFailureBlock || found.every((x) => x.onFailure === 'block')) return null;
  return {
    harness: h,
    state: 'timeout',
    message: `${h}: guard's hook in ${rel} has no onFailure: "block": if guard cannot start or answer in time, ${row.label} runs the tool`,
    hint: `guard init --agent ${h} (it writes onFailure: "block")`,
  };
}

async function shadowedByHooksJson(
  { h, preEvent }: Hooked,
  root: string,
): Promise<AgentCheck | null> {
  if (h !== 'droid') return null;
  const shadow = path.join(root, '.factory/hooks.json');
  if (!existsSync(shadow)) return null;
  const hs = await readJson(shadow).catch(() => ({}) as Json);
  if (guardHooks(hs, preEvent).length !== 0) return null;
  return {
    harness: h,
    state: 'shadowed',
    message:
      "droid: .factory/hooks.json exists without guard's hook: Droid builds that read it (its newer docs) run it instead of the hooks in .factory/settings.json, without guard (0.225.2 ignores it)",
    hint: "guard init --agent droid (it writes guard's hook into both)",
  };
}

/** Harnesses that skip a repository's hooks, silently, until a person trusts them. */
async function notTrusted(
  { h, rel }: Hooked,
  root: string,
  home: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<AgentCheck | null> {
  if (h === 'codex') {
    return {
      harness: h,
      state: 'untrusted',
      message: `codex: ${rel} has guard's hook, but Codex skips a new or changed hook until it is trusted, silently`,
      hint: 'in codex, open /hooks and trust it (and trust the project: trust_level = "trusted")',
    };
  }
  if (h === 'copilot' && !(await copilotTrusts(root, home, env))) {
    return {
      harness: h,
      state: 'untrusted',
      message: `copilot: ${rel} has guard's hook, but Copilot CLI loads repository hooks in copilot -p only for a trusted folder, and ${root} is not one: the hook is skipped silently there`,
      hint: 'start copilot here once and trust the folder, or run copilot -p with --trust-folder (or GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true)',
    };
  }
  return null;
}
