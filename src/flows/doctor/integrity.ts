import { copyFile, lstat, mkdir, readdir, stat, writeFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { packedLookup } from '../../git/packed-refs.js';
import { catFileBatch } from '../../git/catfile.js';
import {
  ensureGuardDir,
  journalCheck,
  journalFile,
  journaledGate,
  noteGate,
  noteGone,
  pinnedProblem,
  restartPinned,
  startJournal,
  readRegular,
  readJournal,
  unjournaledRefs,
  type MovedTip,
  type Tip,
} from '../../git/journal.js';
import { journalSealProblem, resealJournal } from '../../git/journal-seal.js';
import { git } from '../../git/run.js';
import type { Repo } from '../../git/repo.js';
import { isPluginHarness } from '../../harness/types.js';
import { isGuardAskGatedCommand, isGuardHookCommand } from '../setup/hook-command.js';
import { canonical } from './claude-settings.js';
import { randomHex, sha256Hex } from '../../core/digest.js';

/**
 * A net that notices its own removal (DESIGN): on each call of a door (hook,
 * check, doctor, rewind, log) guard compares what it installed and wrote with
 * what is there, with file reads only:
 *
 * - its refs: the newest tips in its journal (git/journal.ts) still in the
 *   ref store;
 * - its git hooks: each file `guard init` installed (`.husky/_/pre-commit`,
 *   `reference-transaction`, ... or the plain hooks folder's) still there
 *   and executable: `git clean -fdX` removes `.husky/_`, which is ignored;
 * - the harness hook configuration `guard init --agent` wrote still runs
 *   guard, and Claude Code's `disableAllHooks` is not set.
 *
 * What it installed is listed in `<commonDir>/guard/gate.json` (written by
 * init, so a repository set up before it is not checked here; doctor's own
 * checks still run). Each problem is said by every door: the hook denies the
 * tool call with the reason (fail closed: the net is down), doctor fails,
 * log, rewind and check warn on stderr. `guard recover` puts the refs back.
 */
export interface IntegrityProblem {
  id: 'refs' | 'hooks' | 'agent';
  message: string;
  hint: string;
  /** Already put right by this call (the hooks, from guard's copy): said once, not a net that is down. */
  healed?: boolean;
}

export interface GateManifest {
  v: 1;
  /** Absolute paths of the git hook files guard installed. */
  hooks: string[];
  /**
   * Harness hook configuration files that run guard (absolute), with the harness, and for a
   * command-hook harness guard's entries there as init wrote them (hookEntries, canonical JSON).
   */
  agents: Array<{
    harness: string;
    file: string;
    entries?: string;
    /** Claude Code: its project settings file whole, and the input-changing hooks that are not guard's (claude-settings.ts). */
    settings?: string;
    foreign?: string[];
  }>;
  /** The hooks folder whose files guard keeps a copy of in <commonDir>/guard/hooks-copy/ (husky's .husky/_, which git clean -X removes). */
  copied?: { dir: string; files: string[] };
}

const COPY = 'hooks-copy';
/** A hooks folder is copied only while it is small (husky's holds about 20 one-line files). */
const COPY_FILES_MAX = 64;
const COPY_BYTES_MAX = 64 << 10;

const MANIFEST = 'gate.json';
/** The hook files of guard's gate, wherever they live (husky's runner `h` with them). */
const HOOK_FILES = ['pre-commit', 'pre-merge-commit', 'reference-transaction', 'h'];

async function readManifest(commonDir: string): Promise<GateManifest | null> {
  return parseManifest(
    (await readRegular(path.join(commonDir, 'guard', MANIFEST)))?.toString('utf8') ?? '',
  );
}

const digest = (text: string) => sha256Hex(text);

/**
 * The gate record as guard wrote it, or what is wrong with it: gone or edited since guard's
 * last `noteGate` (the journal's word), or gone while guard's copy of the hooks says init ran.
 */
async function gateRecord(
  commonDir: string,
): Promise<{ manifest: GateManifest | null; problem?: IntegrityProblem }> {
  const file = path.join(commonDir, 'guard', MANIFEST);
  const [buf, noted, copy] = await Promise.all([
    readRegular(file),
    journaledGate(commonDir),
    stat(path.join(commonDir, 'guard', COPY)).catch(() => null),
  ]);
  const text = buf?.toString('utf8') ?? null;
  const manifest = text === null ? null : parseManifest(text);
  const hint =
    "guard init writes it again; a person should check what changed it and guard's hooks and harness settings";
  if (text === null && (noted || copy))
    return {
      manifest,
      problem: {
        id: 'hooks',
        message: `guard's record of what it installed (.git/guard/${MANIFEST}) was removed outside guard: its git hooks and harness settings are not checked`,
        hint,
      },
    };
  if (text !== null && noted && digest(text) !== noted)
    return {
      manifest,
      problem: {
        id: 'hooks',
        message: `guard's record of what it installed (.git/guard/${MANIFEST}) was edited outside guard: what the net checks against is not what guard init wrote`,
        hint,
      },
    };
  return { manifest };
}

function parseManifest(text: string): GateManifest | null {
  try {
    const m = JSON.parse(text) as Partial<GateManifest>;
    const strings = (v: unknown) =>
      Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
    const agents = Array.isArray(m.agents)
      ? m.agents.filter(
          (a): a is GateManifest['agents'][number] =>
            typeof a?.harness === 'string' &&
            typeof a?.file === 'string' &&
            (a.entries === undefined || typeof a.entries === 'string') &&
            (a.settings === undefined || typeof a.settings === 'string') &&
            (a.foreign === undefined ||
              (Array.isArray(a.foreign) && a.foreign.every((x) => typeof x === 'string'))),
        )
      : [];
    const c = m.copied as { dir?: unknown; files?: unknown } | undefined;
    const copied =
      c && typeof c.dir === 'string'
        ? {
            dir: c.dir,
            files: strings(c.files).filter((f) => !f.includes('/') && f !== '..' && f !== '.'),
          }
        : undefined;
    return { v: 1, hooks: strings(m.hooks), agents, ...(copied ? { copied } : {}) };
  } catch {
    return null;
  }
}

/**
 * Write the manifest of what guard installed: the gate's hook files present
 * in `hooksDir` now, and the harness files given (merged with those already
 * listed). Called by `guard init` at the end of every route.
 */
export async function recordGate(
  commonDir: string,
  hooksDir: string,
  agents: GateManifest['agents'] = [],
  opts: { person?: boolean } = {},
): Promise<string[]> {
  const warnings = opts.person ? [] : await withoutPerson(commonDir, agents);
  const none = async (f: string) => !(await stat(path.join(commonDir, f)).catch(() => null));
  // guard never ran here (no journal, no checkpoint note) yet refs/guard/* are there (fetched from
  // another clone): the journal begins with them, or every door would read it as replaced
  if ((await none('guard/journal')) && (await none('guard-last-checkpoint')))
    startJournal(commonDir, await guardTips(commonDir));
  const dir = await ensureGuardDir(commonDir);
  const present = await Promise.all(
    HOOK_FILES.map((f) =>
      stat(path.join(hooksDir, f)).then(
        (s) => (s.isFile() ? path.join(hooksDir, f) : null),
        () => null,
      ),
    ),
  );
  const old = await readManifest(commonDir);
  const byFile = new Map([...(old?.agents ?? []), ...agents].map((a) => [a.file, a]));
  const copied = await copyHooks(dir, hooksDir);
  const m: GateManifest = {
    v: 1,
    hooks: present.filter((p): p is string => p !== null),
    agents: [...byFile.values()],
    ...(copied ? { copied } : {}),
  };
  const tmp = path.join(dir, `${MANIFEST}.${process.pid}-${randomHex(4)}`);
  try {
    const text = JSON.stringify(m, null, 2) + '\n';
    await writeFile(tmp, text);
    await rename(tmp, path.join(dir, MANIFEST));
    // the journal's word on it: a record removed or edited by hand is noticed (gateRecord)
    noteGate(commonDir, digest(text));
  } catch {
    await rm(tmp, { force: true });
  }
  return warnings;
}

/**
 * `guard init --agent claude` with no person at a terminal (an agent's shell, a script) keeps the
 * net's baseline for what a person must accept: a hook that is not guard's and may change a tool's
 * input, or a copy of guard's own, and a setting guard cannot vouch for. Otherwise an agent could
 * add a rewriting hook and run init in the same command, and the net would take it as the
 * person's. The baseline is the last record guard wrote, or nothing when that record was removed
 * or edited by hand; a first init takes what is there. Changes `agents` in place; what it kept
 * out, as warnings.
 */
async function withoutPerson(commonDir: string, agents: GateManifest['agents']): Promise<string[]> {
  const { manifest, problem } = await gateRecord(commonDir);
  const noted = await journaledGate(commonDir);
  const { unvouchedSettings } = await import('./claude-settings.js');
  const warnings: string[] = [];
  for (const a of agents) {
    if (a.foreign === undefined) continue;
    const old = problem ? undefined : manifest?.agents.find((x) => x.file === a.file);
    // a first init (guard never recorded a gate here, or a record from before these were kept) takes what is there
    if (!problem && (old ? old.foreign === undefined : !noted)) continue;
    const known = new Set(old?.foreign ?? []);
    const added = a.foreign.filter((h) => !known.has(h));
    if (added.length > 0) {
      a.foreign = a.foreign.filter((h) => known.has(h));
      warnings.push(
        `not recorded: ${added.length} hook(s) that are not guard's (or copies of guard's) in Claude Code's settings, which may change a tool's input after guard judged it; the net keeps reporting them until a person runs guard init --agent claude at a terminal`,
      );
    }
    const was = old?.settings ?? '{}';
    const off =
      a.settings && (problem || old?.settings !== undefined)
        ? unvouchedSettings(was, JSON.parse(a.settings) as Record<string, unknown>)
        : [];
    if (off.length > 0) {
      a.settings = was;
      warnings.push(
        `not recorded: ${a.file} settings guard cannot vouch Claude Code still reads (${off.slice(0, 3).join(', ')}); the net keeps reporting them until a person runs guard init --agent claude at a terminal`,
      );
    }
  }
  return warnings;
}

/**
 * Keep a copy of the hooks folder's files inside the git dir, which no
 * `git clean` reaches: husky's `.husky/_` is ignored (its own `.gitignore`
 * says `*`), so `git clean -fdX` takes every hook with it, guard's gate
 * included. husky owns core.hooksPath (its `prepare` script sets it to
 * `.husky/_` on every install), so the hooks stay where husky puts them and
 * guard puts the folder back from this copy at its next door (healHooks).
 */
async function copyHooks(
  guardDir: string,
  hooksDir: string,
): Promise<{ dir: string; files: string[] } | null> {
  const ents = await readdir(hooksDir, { withFileTypes: true }).catch(() => []);
  const files = ents
    .filter((e) => e.isFile())
    .map((e) => e.name)
    .sort();
  if (files.length === 0 || files.length > COPY_FILES_MAX) return null;
  const sizes = await Promise.all(
    files.map((f) =>
      stat(path.join(hooksDir, f)).then(
        (s) => s.size,
        () => Infinity,
      ),
    ),
  );
  if (sizes.reduce((a, b) => a + b, 0) > COPY_BYTES_MAX) return null;
  const to = path.join(guardDir, COPY);
  await rm(to, { recursive: true, force: true });
  await mkdir(to, { recursive: true });
  await Promise.all(files.map((f) => copyFile(path.join(hooksDir, f), path.join(to, f))));
  return { dir: hooksDir, files };
}

/**
 * Put back the gate's hook files that are gone, from guard's copy (the
 * folder as `guard init` left it, every missing file of it, husky's stubs
 * and runner too, each with its mode). Files that are there are never
 * touched. The paths put back; none when there is no copy.
 */
async function healHooks(
  commonDir: string,
  manifest: GateManifest,
  missing: readonly string[],
): Promise<string[]> {
  const c = manifest.copied;
  // husky's generated folder only (git clean -X takes it); a plain hooks folder is in .git/, where a missing hook was removed on purpose
  if (
    !c ||
    path.basename(path.dirname(c.dir)) !== '.husky' ||
    !missing.every((m) => path.dirname(m) === c.dir)
  )
    return [];
  const from = path.join(commonDir, 'guard', COPY);
  const put: string[] = [];
  for (const f of c.files) {
    const dest = path.join(c.dir, f);
    // a link planted where the hook was is not the hook: replaced below (never written through)
    const there = await lstat(dest).catch(() => null);
    if (there && !there.isSymbolicLink()) continue;
    const src = path.join(from, f);
    const st = await stat(src).catch(() => null);
    // (guard's copy itself replaced by a pipe: nothing is put back, never an empty hook)
    const content = st?.isFile() ? await readRegular(src) : null;
    if (!st || !content) return put;
    const { installFiles } = await import('../../apply/apply.js');
    await installFiles([
      {
        op: 'write',
        path: dest,
        content,
        mode: st.mode & 0o777,
        replaceLink: true,
      },
    ]);
    put.push(dest);
  }
  return put;
}

/**
 * Hook files that differ from guard's copy. guard's own branch gate
 * (reference-transaction) must match it exactly; husky's runner and stubs
 * may be rewritten by a newer husky (`npm install` runs it), so for them only
 * a file that no longer looks like husky's counts (the runner reads $HUSKY,
 * a stub sources the runner). Other hooks (a plain pre-commit, the pre-commit
 * framework's, which `pre-commit install` rewrites) are the user's to edit
 * and are left to doctor's probe. File reads only.
 */
async function changedHooks(
  commonDir: string,
  manifest: GateManifest,
  present: readonly string[],
): Promise<string[]> {
  const c = manifest.copied;
  if (!c) return [];
  const from = path.join(commonDir, 'guard', COPY);
  const out: string[] = [];
  await Promise.all(
    present.map(async (h) => {
      if (path.dirname(h) !== c.dir || !c.files.includes(path.basename(h))) return;
      const [now, copy] = await Promise.all([
        readRegular(h).then((b) => b?.toString('utf8') ?? null),
        readRegular(path.join(from, path.basename(h))).then((b) => b?.toString('utf8') ?? null),
      ]);
      if (now === null || copy === null || now === copy) return;
      const name = path.basename(h);
      // guard's branch gate: exactly what init wrote
      if (name === 'reference-transaction' && copy.includes('guard verify-refs')) {
        out.push(h);
        return;
      }
      // husky's runner and stubs: still husky's? (a newer husky's are left alone)
      if (name === 'h' && /\$HUSKY\b/.test(copy)) {
        if (!/\$HUSKY\b/.test(now) || /^\s*exit\b/m.test(now.split('\n').slice(0, 2).join('\n')))
          out.push(h);
        return;
      }
      if (/^\.\s+"[^"]*\/h"\s*$/m.test(copy)) {
        if (
          !(
            /^\.\s+"[^"]*\/h"\s*$/m.test(now) &&
            now.split('\n').filter((l) => l.trim() && !l.startsWith('#')).length === 1
          )
        )
          out.push(h);
        return;
      }
      // anything else (the plain route's pre-commit, the pre-commit framework's, a user's own) is the user's to edit: doctor probes it
    }),
  );
  return out.sort();
}

/** Overwrite rewritten hook files with guard's copy (mode kept). True when all were put back. */
async function putBack(
  commonDir: string,
  manifest: GateManifest,
  files: readonly string[],
): Promise<boolean> {
  const from = path.join(commonDir, 'guard', COPY);
  const { installFiles } = await import('../../apply/apply.js');
  for (const f of files) {
    const src = path.join(from, path.basename(f));
    const st = await stat(src);
    const content = await readRegular(src);
    if (!content) return false;
    // (a link planted where the hook was is replaced, never written through)
    await installFiles([
      {
        op: 'write',
        path: f,
        content,
        mode: st.mode & 0o777,
        replaceLink: true,
      },
    ]);
  }
  return manifest.copied !== undefined;
}

/** A hook entry's command (Copilot's `bash`). */
const commandOf = (h: Record<string, unknown> | undefined): string =>
  String(h?.command ?? h?.bash ?? '');

/** Does a harness's hook configuration still run guard (and not switch every hook off)? */
async function agentProblem(a: GateManifest['agents'][number]): Promise<string | null> {
  const { readSettingsFile } = await import('./claude-settings.js');
  const text = await readSettingsFile(a.file);
  if (text === null) return `${a.file} is not a regular file (a pipe, a device, or over 4 MB)`;
  if (text === '' && !(await stat(a.file).catch(() => null)))
    return `${a.file} (the ${a.harness} hook configuration that runs guard) is gone`;
  // a command hook is guard's exactly as init writes it (setup/hook-command.ts), not a mention of it; a
  // plugin file (Cline, opencode, Kilo) is the one init wrote, which loads guard in process
  const entries = isPluginHarness(a.harness) ? null : hookEntries(text, a.harness, a.file);
  const runsGuard = isPluginHarness(a.harness)
    ? text.includes(`guard init --agent ${a.harness}`) && text.includes('import(GUARD)')
    : (JSON.parse(entries ?? '[]') as unknown[]).length > 0;
  if (!runsGuard)
    return `${a.file} no longer runs guard ${isPluginHarness(a.harness) ? 'in process' : `hook ${a.harness}`}`;
  const changed = a.entries !== undefined ? entriesChanged(a.entries, entries) : null;
  if (changed)
    return `guard's hook in ${a.file} was changed outside guard (${changed}): the harness may run the tool without guard's answer`;
  return a.harness === 'claude' ? claudeProblem(a, text) : null;
}

/**
 * Claude Code reads disableAllHooks, env and hooks from every settings file of the project, and
 * from the person's own and the managed ones, which a shell command can write as well; and it
 * skips a project settings file with a setting of the wrong type, guard's hook with it
 * (claude-settings.ts).
 */
async function claudeProblem(
  a: GateManifest['agents'][number],
  text: string,
): Promise<string | null> {
  const { claudeFiles, newForeignHook, parseSettings, readSettingsFile, unvouchedSettings } =
    await import('./claude-settings.js');
  const files = claudeFiles(a.file);
  const read = await Promise.all(files.map((f) => (f === a.file ? text : readSettingsFile(f))));
  const odd = files.find((_, i) => read[i] === null);
  if (odd)
    return `${odd} is not a regular file (a pipe, a device, or over 4 MB): Claude Code reads it`;
  const texts = read.map((t) => t ?? '');
  for (const [i, f] of files.entries()) {
    const said = claudeSettingsProblem(f, texts[i]!);
    if (said) return said;
  }
  const now = parseSettings(text);
  const off = a.settings !== undefined && now ? unvouchedSettings(a.settings, now) : [];
  if (off.length > 0)
    return `${a.file} changed outside guard in ${off
      .slice(0, 3)
      .map((k) => JSON.stringify(k))
      .join(
        ', ',
      )}, in a way guard cannot vouch Claude Code still reads: it skips a whole settings file in which one setting has the wrong type, guard's hook with it`;
  return a.foreign !== undefined ? await newForeignHook(a.file, texts, a.foreign) : null;
}

/**
 * Variables that change what guard's hook runs, besides guard's own: node's (`NODE_OPTIONS:
 * --require x.js` ran code inside guard's hook in the real Claude Code 2.1.330, which then
 * answered nothing and the truncation landed), the loader's, the shell's start file, and git's
 * that choose the repository, index, objects or config guard reads (`GIT_DIR`, `GIT_INDEX_FILE`,
 * `GIT_CONFIG_*`: guard would judge another repository); `GIT_EDITOR` and the like are left alone.
 */
const RUNS_GUARD =
  /^(?:NODE_OPTIONS|NODE_PATH|NODE_REPL_EXTERNAL_MODULE|LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT|DYLD_\w+|BASH_ENV|ENV|GIT_(?:DIR|WORK_TREE|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|COMMON_DIR|CONFIG\w*|EXEC_PATH|NAMESPACE|CEILING_DIRECTORIES|REPLACE_REF_BASE|GRAFT_FILE|SHALLOW_FILE|EXTERNAL_DIFF|DIFF_OPTS|ATTR_\w+))$/i;

/**
 * A Claude Code settings file that switches hooks off or sets guard's own variables for the
 * hooks it runs (`env`: GUARD_HOOK_TIMEOUT, the checkpoint's size cap, a fault to inject).
 * Read as JSON, as Claude Code reads it: `"disable\u0041llHooks": true` is the same key.
 */
function claudeSettingsProblem(f: string, text: string): string | null {
  let s: unknown = null;
  try {
    // Claude Code reads a file that starts with a byte order mark as JSON
    s = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    // not JSON (a comment, a stray comma): the text as it stands
    if (/"disableAllHooks"\s*:\s*true/.test(text))
      return `${f} sets disableAllHooks: Claude Code runs no hook, guard's included`;
  }
  if (typeof s !== 'object' || s === null) return null;
  const { disableAllHooks, env: e } = s as { disableAllHooks?: unknown; env?: unknown };
  if (disableAllHooks === true)
    return `${f} sets disableAllHooks: Claude Code runs no hook, guard's included`;
  const env = typeof e === 'object' && e !== null ? Object.keys(e) : [];
  const ours = env.filter((k) => k.toUpperCase().startsWith('GUARD_') || RUNS_GUARD.test(k));
  if (ours.length)
    return `${f} sets ${ours.slice(0, 3).join(', ')} in env: Claude Code hands it to guard's hook, which it would change`;
  return null;
}

/**
 * guard's entries in a harness's hook settings, as canonical JSON (keys sorted): each event's
 * entries whose command runs `guard hook NAME`, with their group's matcher. Any change a shell
 * can make that weakens them shows here: `async` or `once` added (Claude Code 2.1.330 runs such
 * a hook without waiting, or once), an `if`, a shorter timeout, onFailure taken off, a narrower
 * matcher, an event removed. null when the text is not a JSON object.
 */
export function hookEntries(text: string, harness: string, file?: string): string | null {
  let hooks: unknown;
  try {
    // (a byte order mark first: Claude Code reads such a file as JSON, so guard does)
    hooks = (JSON.parse(text.replace(/^\uFEFF/, '')) as { hooks?: unknown }).hooks;
  } catch {
    return null;
  }
  const out: unknown[] = [];
  for (const [event, items] of Object.entries(
    typeof hooks === 'object' && hooks !== null ? hooks : {},
  ).sort(([x], [y]) => (x < y ? -1 : 1))) {
    for (const item of Array.isArray(items) ? (items as Array<Record<string, unknown>>) : []) {
      // a group {matcher, hooks: [...]} (Claude, Gemini, Codex) or an entry itself (Cursor, Copilot)
      const inner = Array.isArray(item?.hooks)
        ? (item.hooks as Array<Record<string, unknown>>)
        : [item];
      for (const h of inner)
        if (
          isGuardHookCommand(commandOf(h), harness, file) ||
          isGuardAskGatedCommand(commandOf(h), harness, file)
        )
          out.push({ event, matcher: item.matcher ?? null, hook: h });
    }
  }
  return canonical(out);
}

/** The keys a harness reads guard's hook timeout from (Copilot: timeoutSec). */
const TIMEOUT_KEYS = ['timeout', 'timeoutSec'];
type HookEntry = { event: string; matcher: unknown; hook: Record<string, unknown> };

/**
 * A timeout raised above what init wrote is not a weakening: the harness waits
 * longer, and guard's own budget (20 s) still answers first. Such entries are
 * read as init wrote them; a lowered one (or one that is not a number) stays a change.
 */
function withRaisedTimeouts(was: HookEntry[], is: HookEntry[]): HookEntry[] {
  return is.map((n) => {
    const w = sameEntry(was, n);
    if (!w) return n;
    const hook = { ...n.hook };
    for (const k of TIMEOUT_KEYS) {
      const [before, after] = [w.hook[k], hook[k]];
      if (typeof before === 'number' && typeof after === 'number' && after >= before)
        hook[k] = before;
    }
    return { ...n, hook };
  });
}

/** The entry of `list` for the same event as `e` (with its matcher, where an event has two: Claude Code's after events). */
function sameEntry(list: HookEntry[], e: HookEntry): HookEntry | undefined {
  const m = JSON.stringify(e.matcher);
  return (
    list.find((x) => x.event === e.event && JSON.stringify(x.matcher) === m) ??
    list.find((x) => x.event === e.event)
  );
}

/** What differs between guard's entries as init wrote them and as they are now, in a few words; null when the same (or only a timeout raised). */
function entriesChanged(wrote: string, now: string | null): string | null {
  if (now === wrote) return null;
  if (now === null) return 'it is no longer a JSON object';
  let was: HookEntry[];
  try {
    was = JSON.parse(wrote) as HookEntry[];
    if (!Array.isArray(was)) return 'its entries differ';
  } catch {
    return 'its entries differ';
  }
  const is = withRaisedTimeouts(was, JSON.parse(now) as HookEntry[]);
  if (canonical(is) === wrote) return null;
  const said: string[] = [];
  for (const w of was) {
    const n = sameEntry(is, w);
    if (!n) {
      said.push(`no entry for ${w.event}`);
      continue;
    }
    if (JSON.stringify(n.matcher) !== JSON.stringify(w.matcher))
      said.push(`${w.event} matcher ${JSON.stringify(n.matcher)}`);
    for (const k of new Set([...Object.keys(w.hook), ...Object.keys(n.hook)])) {
      if (JSON.stringify(w.hook[k]) === JSON.stringify(n.hook[k])) continue;
      const lowered =
        TIMEOUT_KEYS.includes(k) && typeof n.hook[k] === 'number' && k in w.hook
          ? ` (lowered from ${JSON.stringify(w.hook[k])})`
          : '';
      said.push(
        `${w.event} ${k} ${k in n.hook ? (k in w.hook ? `${JSON.stringify(n.hook[k])}${lowered}` : `${JSON.stringify(n.hook[k])} added`) : 'removed'}`,
      );
    }
  }
  return [...new Set(said)].slice(0, 4).join(', ') || 'its entries differ';
}

/**
 * What is missing of guard's net, for the repository whose shared git dir is
 * `commonDir`. File reads only, unless `heal`: then hooks that are gone are
 * put back from guard's copy first (the hook door does; doctor only says).
 */
export async function integrityProblems(
  commonDir: string,
  opts: { heal?: boolean; whole?: boolean } = {},
): Promise<IntegrityProblem[]> {
  const [{ gone, moved, odd, cut: linksCut }, { manifest, problem: record }, cut] =
    await Promise.all([
      journalCheck(commonDir, opts.whole ? Number.MAX_SAFE_INTEGER : undefined, opts.whole).catch(
        () => ({
          gone: [] as Tip[],
          moved: [] as MovedTip[],
          odd: undefined,
          cut: undefined,
        }),
      ),
      gateRecord(commonDir),
      historyCutProblem(commonDir, opts.whole === true),
    ]);
  // the journal itself removed with the refs: the last checkpoint this work tree remembers is a second witness
  const noJournal = !(await stat(journalFile(commonDir)).catch(() => null));
  if (gone.length === 0 && noJournal) gone.push(...(await lastCheckpointGone(commonDir)));
  const problems = refProblems(gone, moved);
  if (noJournal) problems.push(...(await journalWiped(commonDir)));
  else if (!odd?.length) problems.push(...journalRewritten(commonDir));
  if (!odd?.length) problems.push(...pinnedRewritten(commonDir));
  if (record) problems.push(record);
  if (cut) problems.push(cut);
  else if (linksCut?.length) problems.push(chainsCut(linksCut.map((t) => t.ref)));
  if (odd?.length)
    problems.push({
      id: 'refs',
      message: `guard's journal is not a regular file (${odd.map((f) => path.basename(f)).join(', ')}: a pipe or a device put in its place): guard cannot tell whether its refs were removed or moved`,
      hint: 'remove it; guard starts a new journal with its next write (guard doctor lists the refs there are)',
    });
  if (manifest) {
    problems.push(...(await hookProblems(commonDir, manifest, opts)));
    for (const a of manifest.agents) {
      const why = await agentProblem(a);
      if (why)
        problems.push({
          id: 'agent',
          message: why,
          hint: `guard init --agent ${a.harness} puts guard's hook back; a person should check what changed it`,
        });
    }
  }
  return problems;
}

/**
 * `.git/shallow` naming guard's records, or commits whose history is here (git/history-cut.ts):
 * git reads them as having no parents, and `git gc` deletes what lies behind them while every ref
 * stays where guard left it. Only when the file is there (two git processes).
 */
async function historyCutProblem(
  commonDir: string,
  whole: boolean,
): Promise<IntegrityProblem | null> {
  // (doctor: every session chain read whole, for the cut made and undone in one command)
  const broken = whole
    ? await (await import('../../git/history-cut.js')).brokenChains(commonDir).catch(() => [])
    : [];
  if (broken.length > 0) return chainsCut(broken);
  if (!(await stat(path.join(commonDir, 'shallow')).catch(() => null))) return null;
  const { historyCut } = await import('../../git/history-cut.js');
  const found = await historyCut(commonDir).catch(() => null);
  if (!found) return null;
  const ids = [...new Set([...found.guards, ...found.cut])];
  const named = ids
    .slice(0, 3)
    .map((id) => id.slice(0, 10))
    .join(', ');
  const whose =
    found.guards.length > 0
      ? `${found.guards.length} of them guard's own records (a session's chain, a checkpoint)`
      : 'their history still in the object store';
  return {
    id: 'refs',
    message: `the repository's history was cut outside guard: .git/shallow names ${ids.length} commit(s) (${named}${ids.length > 3 ? ', ...' : ''}), ${whose}, which git now reads as having no parents: git gc deletes what lies behind them (earlier checkpoints and records of guard's, committed work) though every ref stays where it was`,
    hint: `a person: take those lines out of ${path.join(commonDir, 'shallow')} (while git gc has not run, nothing is lost), then guard doctor`,
  };
}

/** Session chains whose commits are gone behind a tip that stayed where guard left it. */
function chainsCut(chains: readonly string[]): IntegrityProblem {
  const named = [...new Set(chains)];
  return {
    id: 'refs',
    message: `${named.length} session chain(s) of guard's cannot be read whole (${named.slice(0, 3).join(', ')}): commits they hold are missing from the object store (history cut, e.g. through .git/shallow, then git gc --prune=now): earlier checkpoints and records of those sessions are lost`,
    hint: 'a person: what gc deleted is gone (unless a clone or a pushed copy of refs/guard/* holds it); guard recover cannot bring it back',
  };
}

/** guard's refs removed, or moved to another commit, outside guard. */
function refProblems(gone: Tip[], moved: MovedTip[]): IntegrityProblem[] {
  const problems: IntegrityProblem[] = [];
  if (gone.length > 0) {
    const named = gone
      .slice(-3)
      .map((t) => t.ref)
      .join(', ');
    problems.push({
      id: 'refs',
      message: `${gone.length} of guard's refs were removed outside guard (${named}${gone.length > 3 ? ', ...' : ''}): checkpoints and records are missing from guard log, restore and rewind`,
      hint: "guard recover puts them back from guard's journal (.git/guard/journal) while git still has their objects",
    });
  }
  if (moved.length > 0) {
    const named = moved
      .slice(-3)
      .map((t) => `${t.ref} -> ${t.now.slice(0, 10)}`)
      .join(', ');
    problems.push({
      id: 'refs',
      message: `${moved.length} of guard's refs were moved to another commit outside guard (${named}${moved.length > 3 ? ', ...' : ''}): what guard log, restore, rewind and the gate read from them is not what guard kept`,
      hint: 'guard recover points them back at what guard wrote (.git/guard/journal)',
    });
  }
  return problems;
}

/** guard's git hooks rewritten or removed outside guard; with `heal`, put back from guard's copy. */
async function hookProblems(
  commonDir: string,
  manifest: GateManifest,
  opts: { heal?: boolean },
): Promise<IntegrityProblem[]> {
  const problems: IntegrityProblem[] = [];
  // (husky's runner `h` is sourced, not run: it need not be executable)
  const hooks = await Promise.all(
    manifest.hooks.map((h) =>
      stat(h).then(
        (s) => s.isFile() && (path.basename(h) === 'h' || (s.mode & 0o111) !== 0),
        () => false,
      ),
    ),
  );
  const missing = manifest.hooks.filter((_, i) => !hooks[i]);
  // there but rewritten (`echo 'exit 0' > .husky/_/reference-transaction` from the shell): compared with guard's copy
  const changed = await changedHooks(
    commonDir,
    manifest,
    manifest.hooks.filter((_, i) => hooks[i]),
  );
  if (changed.length > 0) {
    const back = opts.heal ? await putBack(commonDir, manifest, changed).catch(() => false) : false;
    const named = changed.map(hookName).join(', ');
    problems.push(
      back
        ? {
            id: 'hooks',
            message: `guard's git hooks were rewritten outside guard (${named}) and guard has put its own back from its copy in .git/guard/: a commit or branch move made meanwhile may have passed ungated, and the branch gate measures it again at the branch's next move`,
            hint: 'nothing to run; a person may want to know what changed them',
            healed: true,
          }
        : {
            id: 'hooks',
            message: `guard's git hooks were rewritten outside guard (${named}): commits and branch moves may pass ungated`,
            hint: 'guard init puts them back',
          },
    );
  }
  const healed =
    missing.length > 0 && opts.heal
      ? await healHooks(commonDir, manifest, missing).catch(() => [])
      : [];
  const still =
    healed.length > 0
      ? (
          await Promise.all(
            missing.map((h) =>
              stat(h).then(
                () => null,
                () => h,
              ),
            ),
          )
        ).filter((h): h is string => h !== null)
      : missing;
  if (missing.length > 0 && still.length === 0) {
    problems.push({
      id: 'hooks',
      message: `guard's git hooks were removed outside guard (${missing.map(hookName).join(', ')}; git clean -X removes .husky/_, which is ignored) and guard has put them back from its copy in .git/guard/: a commit or branch move made while they were gone passed ungated, and the branch gate measures it again at the branch's next move`,
      hint: 'nothing to run; a person may want to know what removed them',
      healed: true,
    });
  } else if (missing.length > 0) {
    problems.push({
      id: 'hooks',
      message: `guard's git hooks are gone (${missing.map(hookName).join(', ')}): commits and branch moves pass ungated (git clean -X removes .husky/_, which is ignored)`,
      hint: 'guard init puts them back',
    });
  }
  return problems;
}

/** `_/pre-commit`: a hook named by its folder and file. */
function hookName(file: string): string {
  return path.basename(path.dirname(file)) + '/' + path.basename(file);
}

/**
 * Without a journal: the checkpoint named in `guard-last-checkpoint` (the
 * main tree's, git/checkpoint.ts) when its ref is gone. File reads only.
 */
async function lastCheckpointGone(commonDir: string): Promise<Tip[]> {
  try {
    const last = JSON.parse(
      (await readRegular(path.join(commonDir, 'guard-last-checkpoint')))?.toString('utf8') ?? '',
    ) as { ref?: unknown; commit?: unknown };
    if (
      typeof last.ref !== 'string' ||
      typeof last.commit !== 'string' ||
      !last.ref.startsWith('refs/guard/') ||
      last.ref.includes('..')
    )
      return [];
    if (await stat(path.join(commonDir, last.ref)).catch(() => null)) return [];
    const packed = await readRegular(path.join(commonDir, 'packed-refs'));
    if (packed && packedLookup(packed, last.ref) !== null) return [];
    return [{ ref: last.ref, oid: last.commit }];
  } catch {
    return [];
  }
}

/**
 * `.git/guard/` removed whole (`rm -r .git/guard`: the journal, the record of
 * what init installed, guard's copy of the hooks), while what guard keeps
 * outside it survives: its refs (loose under refs/guard/ or in packed-refs),
 * the last checkpoint's note (not the session index: a call that writes no
 * ref, a refused one, makes it too). guard journals every ref it
 * writes, so refs without a journal mean the journal went; without it no
 * door could tell a moved or deleted ref (a session's policy anchors among
 * them: a looser config committed mid-session would then pass) nor a changed
 * hook. File reads only, and only when the journal is missing.
 */
async function journalWiped(commonDir: string): Promise<IntegrityProblem[]> {
  const left: string[] = [];
  const loose = await readdir(path.join(commonDir, 'refs', 'guard'), { recursive: true })
    .then(async (names) => {
      for (const n of names.slice(0, 10_000))
        if ((await lstat(path.join(commonDir, 'refs', 'guard', n)).catch(() => null))?.isFile())
          return true;
      return false;
    })
    .catch(() => false);
  const packed = (await readRegular(path.join(commonDir, 'packed-refs')))?.includes(' refs/guard/');
  if (loose || packed) left.push('its refs under refs/guard/');
  if (await stat(path.join(commonDir, 'guard-last-checkpoint')).catch(() => null))
    left.push('its note of the last checkpoint (.git/guard-last-checkpoint)');
  if (left.length === 0) return [];
  return [
    {
      id: 'refs',
      message: `guard's own records in .git/guard/ (the journal of its refs, the record of what guard init installed, its copy of the hooks) were removed outside guard, while ${left.join(', ')} remain: guard can no longer tell whether its refs (checkpoints, a session's policy anchors) were moved or removed, nor whether its hooks were changed`,
      hint: 'a person: look at guard log, then guard recover (it starts a new journal from the refs there are) and guard init (it records the hooks again)',
    },
  ];
}

/**
 * The journal there, but not the one guard kept: refs under refs/guard/ it has no word on
 * (git/journal.ts unjournaledRefs; every ref guard writes is named in it before it exists). What
 * `rm -r .git/guard` then `: > .git/guard/journal` leaves (adv2): the refs deleted beside it are
 * then in no journal, and no door could tell. File reads only; a journal past 64 KB is not compared.
 */
function journalReplaced(commonDir: string): IntegrityProblem[] {
  const unknown = unjournaledRefs(commonDir);
  if (unknown.length === 0) return [];
  const named = unknown.slice(0, 3).join(', ');
  return [
    {
      id: 'refs',
      message: `guard's journal of its refs (.git/guard/journal) was replaced outside guard: it has no word on ${unknown.length} of guard's refs (${named}${unknown.length > 3 ? ', ...' : ''}), though guard notes every ref before writing it; guard can no longer tell whether its refs (checkpoints, a session's policy anchors) were moved or removed, nor whether its hooks were changed`,
      hint: 'a person: look at guard log, then guard recover (it starts the journal again from the refs there are) and guard init (it records the hooks again)',
    },
  ];
}

/**
 * The journal rewritten since guard last sealed it (git/journal-seal.ts: shorter, or other bytes
 * where the sealed part ends), e.g. written again from `git for-each-ref` after refs were deleted,
 * so that it names only the refs that are left; else journalReplaced. Two small reads.
 */
function journalRewritten(commonDir: string): IntegrityProblem[] {
  const why = journalSealProblem(commonDir, journalFile(commonDir));
  if (!why) return journalReplaced(commonDir);
  return [
    {
      id: 'refs',
      message: `guard's journal of its refs (.git/guard/journal) was rewritten outside guard (${why}): refs deleted beside it would be in no journal, so guard can no longer tell whether its refs (checkpoints, a session's policy anchors) were moved or removed`,
      hint: 'a person: look at guard log, then guard recover (it starts the journal again from the refs there are)',
    },
  ];
}

/**
 * The pinned file (lane bases, `.git/guard/journal-pinned`) rewritten, removed or added to since
 * guard last sealed it (holes6): a lane base removed by hand with a `- REF` written there, or the
 * file emptied, would be in no word a door reads. Two small reads.
 */
function pinnedRewritten(commonDir: string): IntegrityProblem[] {
  const why = pinnedProblem(commonDir);
  if (!why) return [];
  return [
    {
      id: 'refs',
      message: `guard's list of the refs it keeps for long (.git/guard/journal-pinned: lane bases) was changed outside guard (${why}): a lane base removed beside it would be in no list guard reads`,
      hint: 'a person: look at guard log and git for-each-ref refs/guard/lanes/, then guard recover (it starts the list again from the lane refs there are)',
    },
  ];
}

/** One paragraph for a hook's answer or a warning line. */
export function integritySentence(problems: readonly IntegrityProblem[]): string {
  return `guard's safety net was changed outside guard: ${problems.map((p) => `${p.message} (${p.hint})`).join('; ')}.`;
}

/** The reason a tool call is refused before it runs while the net is down, or once after guard put it back itself. */
export function integrityDenial(problems: readonly IntegrityProblem[]): string {
  const said = integritySentence(problems);
  if (problems.every((p) => p.healed))
    return `${said} guard refused this one call so that this is read: tell the user, then carry on.`;
  return `${said} guard blocks tool calls until a person has looked: tell the user to run guard doctor, then guard recover (or guard init).`;
}

export interface RecoverResult {
  command: 'recover';
  /** Refs put back from the journal. */
  restored: Tip[];
  /** Refs whose objects git no longer has (pruned): named, then forgotten by the journal. */
  lost: Tip[];
  /** What still needs a person (hooks, harness configuration). */
  remaining: IntegrityProblem[];
}

/** Every ref under refs/guard/ and its commit, as the ref store has them now (one for-each-ref). */
async function guardTips(cwd: string): Promise<Tip[]> {
  return (
    await git(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/guard/'], { cwd })
  ).stdout
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => ({ oid: l.slice(0, l.indexOf(' ')), ref: l.slice(l.indexOf(' ') + 1) }));
}

/**
 * `guard recover`: every ref in guard's journal that is missing from the ref
 * store is created again where git still has its commit (one for-each-ref,
 * one cat-file, one update-ref transaction); the others are named as lost
 * and forgotten, so the doors stop saying so. Hooks and harness
 * configuration are not rewritten here: `guard init` does that.
 */
export async function recover(repo: Repo): Promise<RecoverResult> {
  const journal = await readJournal(repo.commonDir);
  const hadJournal = (await stat(journalFile(repo.commonDir)).catch(() => null)) !== null;
  // (no journal at all: the last checkpoint's ref is what can be put back)
  const tips = journal.length > 0 ? journal : await lastCheckpointGone(repo.commonDir);
  const have = new Set(
    (await git(['for-each-ref', '--format=%(refname)', 'refs/guard/'], { cwd: repo.root })).stdout
      .toString('utf8')
      .split('\n')
      .filter(Boolean),
  );
  const missing = tips.filter((t) => !have.has(t.ref));
  // refs moved to another commit outside guard: pointed back, each only if it still holds what the check saw
  const moved =
    journal.length > 0
      ? (await journalCheck(repo.commonDir, Number.MAX_SAFE_INTEGER)).moved.filter((t) =>
          have.has(t.ref),
        )
      : [];
  const objects = missing.length
    ? await catFileBatch(
        repo.root,
        missing.map((t) => t.oid),
        0,
        () => true,
      )
    : [];
  const restored = missing.filter((_, i) => objects[i]?.type === 'commit');
  const lost = missing.filter((_, i) => objects[i]?.type !== 'commit');
  const movedBack = moved.length
    ? await catFileBatch(
        repo.root,
        moved.map((t) => t.oid),
        0,
        () => true,
      )
    : [];
  const back = moved.filter((_, i) => movedBack[i]?.type === 'commit');
  const { apply } = await import('../../apply/apply.js');
  await apply({
    gate: 'recover',
    repo,
    now: new Date(),
    records: [],
    target: { kind: 'refs', create: restored, update: back },
  });
  const movedLost = moved.filter((_, i) => movedBack[i]?.type !== 'commit');
  // no journal (.git/guard removed whole): a new one from the refs there are, a person's call (journalWiped)
  // or one put back in its place (journalReplaced): the same, from the refs there are
  // or rewritten since guard sealed it (journal-seal.ts): the same, and sealed as it now is
  const rewritten = journalSealProblem(repo.commonDir, journalFile(repo.commonDir)) !== null;
  if (!hadJournal || rewritten || unjournaledRefs(repo.commonDir).length > 0) {
    startJournal(repo.commonDir, await guardTips(repo.root));
    resealJournal(repo.commonDir, journalFile(repo.commonDir));
  }
  if (pinnedProblem(repo.commonDir)) restartPinned(repo.commonDir, await guardTips(repo.root));
  noteGone(
    repo.commonDir,
    [...lost, ...movedLost].map((t) => t.ref),
  );
  return {
    command: 'recover',
    restored: [...restored, ...back.map(({ ref, oid }) => ({ ref, oid }))],
    lost: [...lost, ...movedLost.map(({ ref, oid }) => ({ ref, oid }))],
    remaining: (await integrityProblems(repo.commonDir)).filter((p) => p.id !== 'refs'),
  };
}
