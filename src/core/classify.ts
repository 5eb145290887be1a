import path from 'node:path/posix';
import { createRequire } from 'node:module';
import type Picomatch from 'picomatch';

// picomatch is CommonJS: require() loads it in half the time of an ESM import (no
// export scan), and this module is on the path of every commit.
let picomatch: typeof Picomatch | undefined;
const loadPicomatch = (): typeof Picomatch =>
  (picomatch ??= createRequire(import.meta.url)('picomatch') as typeof Picomatch);
import { CONFIG_FILE, isDefaultConfig, type Config } from './config.js';
import { findElisions } from './elision.js';
import { heldText } from './facts.js';
import { MODE } from './modes.js';

/** What git (or guard write) knows about one changed path; no I/O here. */
export interface ChangeFacts {
  path: string;
  /** Set for a rename: where the content came from. */
  oldPath?: string;
  /** git modes as octal strings: "100644", "100755", "120000", "160000"; null when absent. */
  oldMode: string | null;
  newMode: string | null;
  linesAdded: number;
  linesDeleted: number;
  existingLines: number;
  /** Size in bytes of the base version (0 or absent when it did not exist): the byte threshold. */
  existingBytes?: number;
  binary: boolean;
  /** The blobs differ (false for a pure mode change or line-ending-only change of a binary). */
  contentChanged: boolean;
  /** Text of each side when guard read it (bounded by maxFileBytes); used for the placeholder rule. */
  oldText?: string;
  newText?: string;
  /** The side that was too large to read, if any. */
  tooLarge?: { bytes: number };
  /** Both sides exist and differ only in the amount of whitespace (git's `diff -b` finds nothing): nothing is lost. */
  whitespaceOnly?: boolean;
}

export type Status = 'new' | 'modify' | 'replace' | 'delete' | 'rename';

export interface Classification {
  path: string;
  oldPath?: string;
  status: Status;
  existingLines: number;
  /** Size of the base version in bytes, where the gate knew it (`byteThreshold`). */
  existingBytes?: number;
  linesAdded: number;
  linesDeleted: number;
  changeRatio: number;
  binary: boolean;
  symlink: boolean;
  modeOnly: boolean;
  protected: boolean;
  submodule: boolean;
  ignored: boolean;
  /** The change is empty when whitespace is ignored (a reindent): never a replace. */
  whitespaceOnly: boolean;
  needsApproval: boolean;
  /** Why it needs approval, for people: reasons[i] is the text of rules[i]. */
  reasons: string[];
  /** The stable ids of the same reasons, for programs (SARIF, review): never parse `reasons`. */
  rules: Rule[];
}

/**
 * The rules a change can need approval by (DESIGN "needs approval"). The ids
 * are part of the JSON contract (`rules`); the texts may be reworded.
 */
export type Rule =
  | 'delete-large' // deletes a file of lineThreshold+ lines or byteThreshold+ bytes
  | 'replace-large' // replaces changeRatio+ of a file of lineThreshold+ lines or byteThreshold+ bytes
  | 'protected' // a path matching a `protect` glob, or the config itself
  | 'binary-delete' // deletes a binary file
  | 'binary-replace' // changes a binary file
  | 'symlink-outside' // a symlink pointing outside the repository
  | 'symlink-into-git' // a symlink pointing into .git/
  | 'symlink-linebreak' // a symlink target holding a line break
  | 'too-large' // larger than maxFileBytes: not measured
  | 'elision' // a placeholder comment where code stood
  | 'aggregate-loss' // the change as a whole loses lineThreshold+ lines through several files
  | 'not-written' // review: the main tree could not take the file as it is now
  | 'step-by-step' // branch gate: the commits of the day (since the last approval) add up to a change that needs a person
  | 'dropped'; // branch gate: committed work a move drops (kept under refs/guard/dropped/, reported)

export interface Reason {
  rule: Rule;
  text: string;
}

/** The classification with one more reason (rule and text kept together). */
export function withReason<T extends Pick<Classification, 'reasons' | 'rules'>>(
  c: T,
  r: Reason,
): T {
  return { ...c, reasons: [...c.reasons, r.text], rules: [...c.rules, r.rule] };
}

/** The reasons of a classification as data. */
export function reasonsOf(c: Pick<Classification, 'reasons' | 'rules'>): Reason[] {
  return c.rules.map((rule, i) => ({ rule, text: c.reasons[i] ?? rule }));
}

export interface Policy {
  config: Config;
  /**
   * The base has no committed guard.config.json: guard is being installed.
   * The commit that installs it may then add a new `.husky/` hook and a
   * guard.config.json that means exactly the defaults without a person; a
   * config that sets its own thresholds, and every later change, needs one.
   */
  bootstrap: boolean;
  isProtected: (p: string) => boolean;
  isIgnored: (p: string) => boolean;
}

const GLOB_OPTIONS = { dot: true } as const;
const LINE_BREAKS = /[\n\r\u2028\u2029]/;
const LINE_BREAKS_ALL = /[\n\r\u2028\u2029]/g;

export function makePolicy(config: Config, opts: { bootstrap?: boolean } = {}): Policy {
  const matcher = (globs: string[]) => {
    if (globs.length === 0) return () => false;
    // Compiled on the first name that could match (picomatch and its regexes cost ~4 ms
    // per call): a name that starts with none of the globs' literal prefixes cannot.
    const prefixes = literalPrefixes(globs);
    let test: ((p: string) => boolean) | undefined;
    // picomatch's `*` and `**` are regexes whose `.` stops at a line break: a name
    // like ".github/workflows/x\r.yml" slipped past every protect glob. Any
    // character a name may hold must count as one, so line breaks match as `?`.
    return (p: string) => {
      const name = LINE_BREAKS.test(p) ? p.replace(LINE_BREAKS_ALL, '?') : p;
      if (prefixes && !name.startsWith('./') && !prefixes.some((x) => name.startsWith(x)))
        return false; // picomatch reads a name's leading "./" as nothing too
      return (test ??= loadPicomatch()(globs, GLOB_OPTIONS))(name);
    };
  };
  const protect = matcher(config.protect);
  // The config itself is always protected: an agent cannot loosen the rules it is judged by.
  return {
    config,
    bootstrap: opts.bootstrap ?? false,
    isProtected: (p) => p === CONFIG_FILE || protect(p),
    isIgnored: matcher(config.ignore),
  };
}

/**
 * The literal start of every glob (up to its first special character), or
 * null when one has none to offer (it starts with a pattern, negates, or
 * escapes): then every name is tested.
 */
function literalPrefixes(globs: readonly string[]): string[] | null {
  const out: string[] = [];
  for (const glob of globs) {
    // picomatch reads a leading "./" as nothing
    const g = glob.startsWith('./') ? glob.slice(2) : glob;
    if (g.startsWith('./') || g.includes('/./') || g.includes('../')) return null;
    const i = g.search(/[*?[\]{}()!+@\\]/);
    // "dir/**" also matches "dir" itself: the prefix stops before the slash
    const prefix = (i === -1 ? g : g.slice(0, i)).replace(/\/+$/, '');
    if (prefix.length === 0) return null;
    out.push(prefix);
  }
  return out;
}

const SYMLINK = MODE.symlink;
const GITLINK = MODE.gitlink;

/** Does a symlink's target, read relative to the link's folder, leave the repository? */
export function symlinkEscapes(linkPath: string, target: string): boolean {
  if (target.length === 0 || path.isAbsolute(target) || /^[A-Za-z]:[\\/]/.test(target)) return true;
  const resolved = path.normalize(path.join(path.dirname(linkPath), target));
  return resolved === '..' || resolved.startsWith('../');
}

/**
 * Does a symlink's target, read relative to the link's folder, name git's own
 * files: the `.git` folder (or a worktree's `.git` file) at any depth, in any
 * letter case (case-insensitive file systems), with the trailing dots and
 * spaces Windows drops, or its 8.3 short name `GIT~1`.
 */
export function symlinkIntoGit(linkPath: string, target: string): boolean {
  const resolved = path.normalize(path.join(path.dirname(linkPath), target.replace(/\\/g, '/')));
  return resolved.split('/').some((part) => /^\.git[. ]*$/i.test(part) || /^git~\d+$/i.test(part));
}

function percent(r: number): string {
  return `${Math.round(r * 100)}%`;
}

export function classify(f: ChangeFacts, policy: Policy): Classification {
  const { config } = policy;
  const existed = f.oldMode !== null;
  const exists = f.newMode !== null;
  const changeRatio = existed && f.existingLines > 0 ? f.linesDeleted / f.existingLines : 0;
  const symlink = f.newMode === SYMLINK || (f.newMode === null && f.oldMode === SYMLINK);
  const submodule = f.newMode === GITLINK || f.oldMode === GITLINK;
  const modeOnly =
    existed &&
    exists &&
    f.oldMode !== f.newMode &&
    f.linesAdded === 0 &&
    f.linesDeleted === 0 &&
    !f.oldPath;
  const status = statusOf(f, changeRatio, config);

  const paths = f.oldPath !== undefined ? [f.path, f.oldPath] : [f.path];
  const isProtected = paths.some((p) => policy.isProtected(p)) && !installing(f, status, policy);
  const ignored = !isProtected && paths.every((p) => policy.isIgnored(p));
  const found = ignored
    ? []
    : reasonsFor(f, config, { status, changeRatio, symlink, submodule, isProtected });

  const c: Classification = {
    path: f.path,
    status,
    existingLines: f.existingLines,
    linesAdded: f.linesAdded,
    linesDeleted: f.linesDeleted,
    changeRatio: Math.round(changeRatio * 10_000) / 10_000,
    binary: f.binary,
    symlink,
    modeOnly,
    protected: isProtected,
    submodule,
    ignored,
    whitespaceOnly: f.whitespaceOnly === true,
    needsApproval: found.length > 0,
    reasons: found.map((r) => r.text),
    rules: found.map((r) => r.rule),
  };
  if (f.oldPath !== undefined) c.oldPath = f.oldPath;
  if (f.existingBytes !== undefined && existed) c.existingBytes = f.existingBytes;
  return c;
}

function statusOf(f: ChangeFacts, changeRatio: number, config: Config): Status {
  if (f.oldMode === null) return 'new';
  if (f.newMode === null) return 'delete';
  if (f.existingLines > 0 && changeRatio >= config.changeRatio && !f.whitespaceOnly)
    return 'replace';
  if (f.binary && f.contentChanged) return 'replace';
  if (f.oldPath !== undefined) return 'rename';
  return 'modify';
}

/** `guard init` adding the default config or husky's hooks is not a change to a protected path. */
function installing(f: ChangeFacts, status: Status, policy: Policy): boolean {
  return (
    policy.bootstrap &&
    status === 'new' &&
    (f.path === CONFIG_FILE
      ? f.newText !== undefined && isDefaultConfig(f.newText)
      : f.path.startsWith('.husky/'))
  );
}

/** What classify has found about a change before it looks for reasons. */
interface Seen {
  status: Status;
  changeRatio: number;
  symlink: boolean;
  submodule: boolean;
  isProtected: boolean;
}

/** Why a change needs a person's approval, in the order they are reported; none when it does not. */
function reasonsFor(f: ChangeFacts, config: Config, seen: Seen): Reason[] {
  const found: Reason[] = [...sizeReasons(f, config, seen)];
  if (seen.isProtected)
    found.push({ rule: 'protected', text: `protected path (config "protect")` });
  if (
    f.binary &&
    f.oldMode !== null &&
    !seen.submodule &&
    (seen.status === 'delete' || f.contentChanged)
  ) {
    if (seen.status === 'delete')
      found.push({ rule: 'binary-delete', text: 'deletes a binary file' });
    else found.push({ rule: 'binary-replace', text: 'replaces a binary file' });
  }
  const link =
    seen.symlink && f.newMode !== null && f.newText !== undefined
      ? symlinkReason(f.path, f.newText)
      : null;
  if (link) found.push(link);
  if (f.tooLarge) {
    found.push({
      rule: 'too-large',
      text: `larger than maxFileBytes (${f.tooLarge.bytes} bytes); not measured`,
    });
  }
  // the new side as held (its bytes, unless its text was read); the old text only where a placeholder is found
  const held = seen.symlink || f.binary || f.whitespaceOnly ? undefined : heldText(f, 'new');
  if (held !== undefined && f.linesDeleted > 0) {
    const elisions = findElisions(held, () => f.oldText ?? '', 1, f.path);
    if (elisions[0])
      found.push({
        rule: 'elision',
        text: `elision placeholder where code stood (line ${elisions[0].line}: "${elisions[0].text}")`,
      });
  }
  return found;
}

/** Deleting or mostly replacing a large file: large in lines, or in bytes for a file of few long lines. */
function sizeReasons(f: ChangeFacts, config: Config, { status, changeRatio }: Seen): Reason[] {
  const big = f.existingLines >= config.lineThreshold;
  // a file of few long lines (minified, data, one 500 KB line) is large too: bytes as well as lines
  const heavy = !big && isHeavy(f, config);
  if (!(big || heavy) || f.binary) return [];
  if (status === 'delete') {
    if (big)
      return [
        {
          rule: 'delete-large',
          text: `deletes a ${f.existingLines}-line file (${config.lineThreshold}+ lines need approval)`,
        },
      ];
    return [
      {
        rule: 'delete-large',
        text: `deletes a file of ${f.existingBytes} bytes (${config.byteThreshold}+ bytes need approval)`,
      },
    ];
  }
  if (status !== 'replace') return [];
  const text = big
    ? `replaces ${percent(changeRatio)} of a ${f.existingLines}-line file ` +
      `(${percent(config.changeRatio)} or more of ${config.lineThreshold}+ lines needs approval)`
    : `replaces ${percent(changeRatio)} of a file of ${f.existingBytes} bytes ` +
      `(${percent(config.changeRatio)} or more of ${config.byteThreshold}+ bytes needs approval)`;
  return [{ rule: 'replace-large', text }];
}

/** A new symlink target that leaves the repository, reaches into .git/, or cannot be a target at all. */
function symlinkReason(linkPath: string, target: string): Reason | null {
  if (symlinkEscapes(linkPath, target))
    return {
      rule: 'symlink-outside',
      text: `symlink points outside the repository (-> ${target})`,
    };
  // A tool writing through it edits git's own config, hooks or objects.
  if (symlinkIntoGit(linkPath, target)) {
    return {
      rule: 'symlink-into-git',
      text: `symlink points into .git/ (-> ${target}): writing through it edits git's own files`,
    };
  }
  // `guard write` to a symlink replaces the link: content with line breaks is surely not a target
  if (/[\n\0]/.test(target)) {
    return {
      rule: 'symlink-linebreak',
      text: 'the new symlink target holds a line break: a symlink is written as a link, never through it',
    };
  }
  return null;
}

/** The byte threshold (`byteThreshold`): the base version has that many bytes or more. */
export function isHeavy(
  f: Pick<ChangeFacts, 'existingBytes'>,
  config: Pick<Config, 'byteThreshold'>,
): boolean {
  return f.existingBytes !== undefined && f.existingBytes >= config.byteThreshold;
}
