import { constants, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import path from 'node:path';
import { isGuardAskGatedCommand, isGuardHookCommand } from '../setup/hook-command.js';

/**
 * What the net checks in Claude Code's settings besides guard's own entries
 * (flows/doctor/integrity.ts), each found by running Claude Code 2.1.330
 * (test/clients/hook-entry-real.test.ts):
 *
 * - Claude Code skips a whole settings file in which one known setting has
 *   the wrong type (`"permissions": 5`, `"cleanupPeriodDays": "x"`,
 *   `"statusLine": 5`, a malformed group of another hook), and guard's hook
 *   goes with it, though guard's entries are untouched. So the project's
 *   settings file is kept whole at init (`settings`, canonical JSON), and a
 *   setting changed since is accepted only when guard can vouch that Claude
 *   Code still reads it (SETTINGS below: the few settings people edit, checked
 *   as strictly as Claude Code checks them or more); any other change is
 *   reported. Removing a setting is never a problem.
 * - A PreToolUse or PermissionRequest hook that is not guard's can answer
 *   `updatedInput`: Claude Code then runs the tool with an input guard never
 *   judged (a Write of a new file turned into one over uncommitted work). Those
 *   present at init in any settings file Claude Code reads (the project's,
 *   its local one, the person's own, the managed ones) are kept (`foreign`),
 *   with any copy of guard's own command outside the project's file (Claude
 *   Code runs one hook per command, so an async copy replaces guard's); one
 *   added since is reported until a person runs `guard init --agent claude`
 *   at a terminal (integrity.ts withoutPerson).
 * - A byte order mark: Claude Code reads such a file as JSON, so guard does.
 */

/** Events whose hooks may change a tool's input (Claude Code: `updatedInput`). */
const INPUT_EVENTS = ['PreToolUse', 'PermissionRequest'];

/** Past this a settings file is not read (Claude Code's are a few KB). */
const SETTINGS_MAX = 4 << 20;

/**
 * A settings file's text, '' when there is none, or null when it is not a regular file of
 * a sane size: a FIFO planted there (`mkfifo .claude/settings.local.json`) would block the
 * read, and with it every door (node cannot exit while a read is blocked), and a link to
 * /dev/zero would never end. Opened without blocking, then checked on the open file.
 */
export async function readSettingsFile(file: string): Promise<string | null> {
  const fh = await open(file, constants.O_RDONLY | constants.O_NONBLOCK).catch(
    (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' || err.code === 'ENOTDIR' ? '' : null),
  );
  if (fh === '' || fh === null) return fh;
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.size > SETTINGS_MAX) return null;
    return await fh.readFile('utf8');
  } catch {
    return null;
  } finally {
    await fh.close();
  }
}

const MANAGED = '/etc/claude-code';

/**
 * Every settings file Claude Code reads for a project whose settings file is `file`: the
 * project's and its local one, the person's own (in `$CLAUDE_CONFIG_DIR`, else `~/.claude`), and
 * the managed ones (`managed-settings.json` and the drop-in folder `managed-settings.d/`, both
 * named in Claude Code 2.1.330's own strings).
 */
export function claudeFiles(file: string): string[] {
  const env = process.env;
  const own = env.CLAUDE_CONFIG_DIR || (env.HOME ? path.join(env.HOME, '.claude') : null);
  let dropIns: string[] = [];
  try {
    dropIns = readdirSync(path.join(MANAGED, 'managed-settings.d'))
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => path.join(MANAGED, 'managed-settings.d', f));
  } catch {
    /* none */
  }
  return [
    file,
    path.join(path.dirname(file), 'settings.local.json'),
    ...(own ? [path.join(own, 'settings.json')] : []),
    path.join(MANAGED, 'managed-settings.json'),
    ...dropIns,
  ];
}

/** Parsed as Claude Code parses a settings file: JSON, after a byte order mark. null when it is not an object. */
export function parseSettings(text: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(text.replace(/^\uFEFF/, '')) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** JSON with every object's keys sorted: reformatting or reordering a settings file is not a change. */
export function canonical(v: unknown): string {
  return JSON.stringify(v, (_, x: unknown) =>
    typeof x === 'object' && x !== null && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1)))
      : x,
  );
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const optional = (v: unknown, t: string) => v === undefined || typeof v === t;
const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');

/** A command hook of the shape Claude Code 2.1.330 reads (other kinds of hook are not vouched for). */
function commandHookOk(h: unknown): boolean {
  if (!isObj(h) || h.type !== 'command' || typeof h.command !== 'string') return false;
  const known: Record<string, string> = {
    timeout: 'number',
    async: 'boolean',
    once: 'boolean',
    if: 'string',
    statusMessage: 'string',
    onFailure: 'string',
  };
  return Object.entries(h).every(
    ([k, v]) => k === 'type' || k === 'command' || (k in known && typeof v === known[k]),
  );
}

/** The settings guard can vouch for, each with a check at least as strict as Claude Code's. */
const SETTINGS: Record<string, (v: unknown) => boolean> = {
  $schema: (v) => typeof v === 'string',
  model: (v) => typeof v === 'string',
  // (a PATH that puts another git or node before guard's is not vouched for; the variables that
  // run code in guard's hook are reported in every file: integrity.ts RUNS_GUARD)
  env: (v) =>
    isObj(v) &&
    Object.entries(v).every(([k, x]) => typeof x === 'string' && k.toUpperCase() !== 'PATH'),
  disableAllHooks: (v) => v === false,
  permissions: (v) =>
    isObj(v) &&
    ['allow', 'deny', 'ask', 'additionalDirectories'].every(
      (k) => v[k] === undefined || strings(v[k]),
    ) &&
    optional(v.defaultMode, 'string') &&
    Object.keys(v).every((k) =>
      ['allow', 'deny', 'ask', 'additionalDirectories', 'defaultMode'].includes(k),
    ),
  hooks: (v) =>
    isObj(v) &&
    Object.values(v).every(
      (groups) =>
        Array.isArray(groups) &&
        groups.every(
          (g) =>
            isObj(g) &&
            optional(g.matcher, 'string') &&
            Array.isArray(g.hooks) &&
            g.hooks.every(commandHookOk) &&
            Object.keys(g).every((k) => k === 'matcher' || k === 'hooks'),
        ),
    ),
};

/** The settings changed since init that guard cannot vouch Claude Code still reads; [] when none. */
export function unvouchedSettings(wrote: string, now: Json): string[] {
  let was: Json;
  try {
    was = JSON.parse(wrote) as Json;
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const [k, v] of Object.entries(now)) {
    if (canonical(v) === canonical(was[k])) continue;
    const ok = Object.hasOwn(SETTINGS, k) && SETTINGS[k]!(v);
    if (!ok) out.push(k);
  }
  return out;
}

/**
 * The hooks of `file` (canonical JSON) the net watches: each hook that is not guard's, of an event
 * that may change a tool's input; and, in a file other than the project's (`project`), any hook
 * that runs one of guard's own commands (`guards`): Claude Code 2.1.330 runs one hook per command,
 * so a copy with `"async": true` in settings.local.json made guard's answer come too late
 * (test/clients/hook-entry-real.test.ts).
 */
export function foreignHooks(
  file: string,
  s: Json | null,
  project: string,
  guards: ReadonlySet<string>,
): string[] {
  const hooks = isObj(s?.hooks) ? s.hooks : {};
  const out: string[] = [];
  for (const [event, groups] of Object.entries(hooks)) {
    for (const g of Array.isArray(groups) ? groups : []) {
      for (const h of isObj(g) && Array.isArray(g.hooks) ? g.hooks : [g]) {
        const command = isObj(h) ? String(h.command ?? '') : '';
        const copy = file !== project && guards.has(command);
        const input =
          INPUT_EVENTS.includes(event) && !isGuardHookCommand(command, 'claude', project);
        if (!copy && !input) continue;
        out.push(
          canonical({ file, event, matcher: isObj(g) ? (g.matcher ?? null) : null, hook: h }),
        );
      }
    }
  }
  return out;
}

/** The commands of guard's own entries in the project's settings. */
function guardCommands(project: string, s: Json | null): Set<string> {
  const out = new Set<string>();
  const hooks = isObj(s?.hooks) ? s.hooks : {};
  for (const groups of Object.values(hooks))
    for (const g of Array.isArray(groups) ? groups : [])
      for (const h of isObj(g) && Array.isArray(g.hooks) ? g.hooks : [])
        if (
          isObj(h) &&
          typeof h.command === 'string' &&
          (isGuardHookCommand(h.command, 'claude', project) ||
            isGuardAskGatedCommand(h.command, 'claude', project))
        )
          out.add(h.command);
  return out;
}

/**
 * Hooks Claude Code 2.1.330 runs from outside its settings files (its own strings: "Plugin hooks
 * (~/.claude/plugins/*\/hooks/hooks.json)"; agents' and skills' frontmatter `hooks:`), each as
 * settings-shaped JSON: a plugin's hooks.json is already; a frontmatter's `hooks:` block with a
 * PreToolUse or PermissionRequest entry becomes one hook whose command is the block's text (guard
 * reads no YAML: the block as written is what init records). Every installed plugin counts,
 * enabled or not (the safe side), and so does every plugin Claude Code loads from elsewhere (see
 * pluginRoots), with the hooks its manifest holds inline or names. Bounded: at most 200 files,
 * each read without blocking.
 */
async function otherHookFiles(file: string): Promise<{ file: string; json: Json | null }[]> {
  const own =
    process.env.CLAUDE_CONFIG_DIR ||
    (process.env.HOME ? path.join(process.env.HOME, '.claude') : null);
  const dirs = [path.dirname(file), ...(own ? [own] : [])];
  const found: string[] = [];
  for (const d of dirs) {
    for (const a of await listDir(path.join(d, 'agents')))
      if (a.endsWith('.md')) found.push(path.join(d, 'agents', a));
    for (const k of await listDir(path.join(d, 'skills')))
      found.push(path.join(d, 'skills', k, 'SKILL.md'));
  }
  for (const root of await pluginRoots(own))
    found.push(path.join(root, 'hooks', 'hooks.json'), path.join(root, MANIFEST));
  const read = async (f: string) => {
    const text = (await readSettingsFile(f)) ?? '';
    if (f.endsWith('.md')) return [{ file: f, json: frontmatterHooks(text) }];
    if (!f.endsWith(MANIFEST)) return [{ file: f, json: parseSettings(text) }];
    // a plugin's manifest: `hooks` inline (an object), or the path(s) of hooks files in the plugin
    const hooks = parseSettings(text)?.hooks;
    if (isObj(hooks)) return [{ file: f, json: { hooks } }];
    const root = path.dirname(path.dirname(f));
    const named = (Array.isArray(hooks) ? hooks : [hooks]).filter(
      (h): h is string => typeof h === 'string',
    );
    return Promise.all(
      named.slice(0, 8).map(async (h) => {
        const at = path.resolve(root, h);
        return { file: at, json: parseSettings((await readSettingsFile(at)) ?? '') };
      }),
    );
  };
  return (await Promise.all(found.slice(0, 200).map(read))).flat();
}

/** A plugin's manifest, in its folder. */
const MANIFEST = path.join('.claude-plugin', 'plugin.json');

const listDir = async (dir: string) => (await readdir(dir).catch(() => [] as string[])).sort();

/**
 * The folders Claude Code 2.1.330 loads plugins from, as read from its binary: every installed
 * plugin (`plugins/installed_plugins.json`'s installPath), the folders named in
 * `CLAUDE_CODE_PLUGIN_DIRS` (set in the environment or in a settings file's `env` block; Claude
 * Code passes its environment to hooks, so the hook door sees it: each a plugin, or a folder of
 * plugins whose every child loads), and the mods under `dev-mods/` in the person's Claude folder
 * (hot-loaded in a session), and those given on Claude Code's command line (`--plugin-dir`, read
 * from /proc: commandLinePluginDirs; docs/reliability/holes5.md).
 */
async function pluginRoots(own: string | null): Promise<string[]> {
  const roots: string[] = [];
  if (own) {
    const installed = parseSettings(
      (await readSettingsFile(path.join(own, 'plugins', 'installed_plugins.json'))) ?? '',
    );
    const plugins = isObj(installed?.plugins) ? Object.values(installed.plugins) : [];
    for (const entries of plugins)
      for (const e of Array.isArray(entries) ? entries : [entries])
        if (isObj(e) && typeof e.installPath === 'string') roots.push(e.installPath);
    for (const m of await listDir(path.join(own, 'dev-mods')))
      roots.push(path.join(own, 'dev-mods', m));
  }
  for (const dir of [...envPluginDirs(), ...commandLinePluginDirs()].slice(0, 20)) {
    roots.push(dir);
    for (const c of (await listDir(dir)).slice(0, 50)) roots.push(path.join(dir, c));
  }
  return roots;
}

/**
 * The folders of `CLAUDE_CODE_PLUGIN_DIRS` as Claude Code 2.1.330 reads them (its own strings:
 * split on the path delimiter, `:` here, each trimmed; one starting with `~` is the home folder's,
 * any other that is not absolute is skipped with a warning).
 */
function envPluginDirs(): string[] {
  const home = process.env.HOME ?? '';
  return (process.env.CLAUDE_CODE_PLUGIN_DIRS ?? '')
    .split(path.delimiter)
    .map((d) => d.trim())
    .map((d) => (home && (d === '~' || d.startsWith('~/')) ? path.join(home, d.slice(1)) : d))
    .filter((d) => d && path.isAbsolute(d));
}

/**
 * The folders given on Claude Code's own command line (`--plugin-dir X`, `--plugin-dir-no-mcp X`,
 * each repeatable, or `--plugin-dir=X`): they reach no file and no variable a hook sees, but Claude
 * Code names its own process to its hooks (`CLAUDE_PID`), so its command line is read from /proc
 * (Linux; else, or with no CLAUDE_PID, the hook's parent and grandparent). A relative folder is
 * its working folder's. One small read per call; none where /proc is not.
 */
export function commandLinePluginDirs(): string[] {
  if (process.platform !== 'linux') return [];
  const pid = Number(process.env.CLAUDE_PID);
  const pids = Number.isInteger(pid) && pid > 1 ? [pid] : ancestors(process.ppid, 2);
  for (const p of pids) {
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const dirs: string[] = [];
    argv.forEach((a, i) => {
      const m = /^--plugin-dir(?:-no-mcp)?(?:=(.*))?$/.exec(a);
      const v = m ? (m[1] ?? argv[i + 1]) : undefined;
      if (v) dirs.push(v);
    });
    if (dirs.length === 0) continue;
    const cwd = (() => {
      try {
        return readlinkSync(`/proc/${p}/cwd`);
      } catch {
        return null;
      }
    })();
    const home = process.env.HOME ?? '';
    return dirs
      .map((d) => (home && (d === '~' || d.startsWith('~/')) ? path.join(home, d.slice(1)) : d))
      .flatMap((d) => (path.isAbsolute(d) ? [d] : cwd ? [path.resolve(cwd, d)] : []));
  }
  return [];
}

/** For a hook file inside a plugin given on Claude Code's command line: how a person records it. */
function fromCommandLine(file: string): string {
  const dir = commandLinePluginDirs().find((d) => file.startsWith(d + path.sep));
  return dir
    ? ` (a plugin given to claude with --plugin-dir; a person who means it runs CLAUDE_CODE_PLUGIN_DIRS=${dir} guard init --agent claude at a terminal)`
    : '';
}

/** `pid` and up to `n` of its ancestors (from /proc/PID/stat). */
function ancestors(pid: number, n: number): number[] {
  const out = [pid];
  for (let i = 0; i < n; i++) {
    try {
      const stat = readFileSync(`/proc/${out.at(-1)}/stat`, 'utf8');
      // (the command name in parentheses may hold spaces: the fields after its last ')')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!(ppid > 1)) break;
      out.push(ppid);
    } catch {
      break;
    }
  }
  return out;
}

/** A markdown file's frontmatter `hooks:` block, when it names an event that may change a tool's input. */
export function frontmatterHooks(text: string): Json | null {
  const m = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  if (!m) return null;
  const lines = m[1]!.split(/\r?\n/);
  const at = lines.findIndex((l) => /^hooks\s*:/.test(l));
  if (at === -1) return null;
  const end = lines.findIndex((l, i) => i > at && /^\S/.test(l));
  const block = lines.slice(at, end === -1 ? undefined : end).join('\n');
  const events = INPUT_EVENTS.filter((e) => block.includes(e));
  if (events.length === 0) return null;
  return { hooks: { [events[0]!]: [{ hooks: [{ type: 'frontmatter', command: block }] }] } };
}

/** Every watched hook (foreignHooks) of Claude Code's settings files for the project file `file`, and of its other hook sources. */
async function watchedHooks(file: string, texts: readonly string[]): Promise<string[]> {
  const files = claudeFiles(file);
  const parsed = texts.map(parseSettings);
  const guards = guardCommands(file, parsed[0] ?? null);
  const other = await otherHookFiles(file);
  return [
    ...files.flatMap((f, i) => foreignHooks(f, parsed[i] ?? null, file, guards)),
    ...other.flatMap((o) => foreignHooks(o.file, o.json, file, guards)),
  ];
}

/** What init keeps of Claude Code's settings: the project's file whole, and every watched hook. */
export async function claudeSnapshot(
  file: string,
): Promise<{ settings?: string; foreign: string[] }> {
  const texts = (await Promise.all(claudeFiles(file).map(readSettingsFile))).map((t) => t ?? '');
  const project = parseSettings(texts[0]!);
  return {
    ...(project ? { settings: canonical(project) } : {}),
    foreign: await watchedHooks(file, texts),
  };
}

/** The first watched hook in `texts` (the files of claudeFiles(file)) that init did not see; null when none. */
export async function newForeignHook(
  file: string,
  texts: readonly string[],
  known: readonly string[],
): Promise<string | null> {
  const seen = new Set(known);
  for (const h of await watchedHooks(file, texts)) {
    if (seen.has(h)) continue;
    const {
      file: where,
      event,
      hook,
    } = JSON.parse(h) as { file: string; event: string; hook: Json };
    const what = (typeof hook?.command === 'string' ? hook.command : JSON.stringify(hook)).slice(
      0,
      60,
    );
    return isGuardHookCommand(String(hook?.command ?? ''), 'claude', file) ||
      isGuardAskGatedCommand(String(hook?.command ?? ''), 'claude', file)
      ? `${where} has a ${event} hook that runs guard and that guard init did not write (${JSON.stringify(hook).slice(0, 80)}): Claude Code runs one hook per command, so its settings may replace guard's own`
      : `${where} has a ${event} hook that is not guard's and was not there at guard init (${what}): Claude Code lets such a hook change a tool's input after guard judged it${fromCommandLine(where)}`;
  }
  return null;
}
