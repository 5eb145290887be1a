import type { ChangeFacts } from './classify.js';
import { countLines, looksBinary } from './lines.js';

/** One side of a change as it was measured; null where that side does not exist (or was not read). */
export interface Side {
  /** Its size in bytes. */
  bytes: number;
  /**
   * Its content as guard holds it, if it does: sniffed for binary (git's NUL test) whatever
   * its size, and the side's text only when within maxBytes. Absent when it was not read.
   */
  data?: Buffer;
  /** Its lines as git's numstat counts them; counted from `data` when absent (then 0 without data). */
  lines?: number;
}

/** The already-measured values a change's facts are assembled from (see `changeFacts`). */
export interface FactsInput {
  path: string;
  /** Set for a rename: where the content came from. */
  oldPath?: string | undefined;
  oldMode: string | null;
  newMode: string | null;
  old: Side | null;
  new: Side | null;
  /** Lines added and deleted as measured (git's numstat, or the lines of a side that alone exists). */
  added: number;
  deleted: number;
  /** git itself called the change binary (numstat's "-"), whatever the sniff of the sides says. */
  gitBinary: boolean;
  /**
   * Whether a binary change's line counts are reported as 0. guard write and the hook zero them;
   * the diff-based gates (git/changes) keep git's counts, which are non-zero only where a
   * `diff` attribute made git count lines of a file with NULs in it. Kept as each caller had it.
   */
  zeroBinaryCounts: boolean;
  /** The blobs differ (false for a pure mode change). */
  contentChanged: boolean;
  /** Already known to differ only in whitespace (the hook measures it first; the others mark it after). */
  whitespaceOnly?: boolean;
  /** maxFileBytes: a side larger than this is `tooLarge`, and is never text. */
  maxBytes: number;
}

/**
 * The facts classify needs, assembled from values already measured: no I/O. The one place a
 * ChangeFacts is built (git/changes from a diff and cat-file, guard write and the hook from buffers).
 * Binary: git said so, or either side's held content has a NUL in its first 8000 bytes. A binary
 * change has no existing lines and no text; the first side over maxBytes makes it `tooLarge`.
 */
export function changeFacts(input: FactsInput): ChangeFacts {
  const { old, new: next, maxBytes } = input;
  const sniff = (s: Side | null) => s?.data !== undefined && looksBinary(s.data);
  const binary = input.gitBinary || sniff(old) || sniff(next);
  const zero = binary && input.zeroBinaryCounts;
  const f: ChangeFacts = {
    path: input.path,
    oldMode: input.oldMode,
    newMode: input.newMode,
    linesAdded: zero ? 0 : input.added,
    linesDeleted: zero ? 0 : input.deleted,
    existingLines:
      binary || old === null ? 0 : (old.lines ?? (old.data ? countLines(old.data) : 0)),
    ...(old !== null ? { existingBytes: old.bytes } : {}),
    binary,
    contentChanged: input.contentChanged,
  };
  if (input.oldPath !== undefined) f.oldPath = input.oldPath;
  if (input.whitespaceOnly) f.whitespaceOnly = true;
  const big = [old, next].find((s) => s !== null && s.bytes > maxBytes);
  if (big) f.tooLarge = { bytes: big.bytes };
  const held = (s: Side | null) =>
    !binary && s?.data !== undefined && s.data.length <= maxBytes ? s.data : undefined;
  sideText(f, 'oldText', held(old));
  sideText(f, 'newText', held(next));
  return f;
}

/** A small side's text at once (a plain property); a large one's only when it is read. */
function sideText(f: ChangeFacts, key: 'oldText' | 'newText', data: Buffer | undefined): void {
  if (data === undefined) return;
  if (data.length <= LAZY_TEXT_BYTES) {
    f[key] = data.toString('utf8');
    return;
  }
  textOnRead(f, key, data);
  const held = HELD.get(f) ?? { old: undefined, new: undefined };
  held[key === 'oldText' ? 'old' : 'new'] = data;
  HELD.set(f, held);
}

/** From this size a side's text is decoded only when read (below it, decoding costs less than deferring). */
const LAZY_TEXT_BYTES = 1 << 20;

/** The bytes each side's text is decoded from, until it is (classify's placeholder scan reads them in place). */
const HELD = new WeakMap<ChangeFacts, { old: Buffer | undefined; new: Buffer | undefined }>();

/**
 * `oldText` or `newText` as an ordinary property whose value is decoded from
 * `data` the first time it is read, then kept: a 15 MB blob was held as bytes
 * and as a string though most changes never read the string (the placeholder
 * scan reads the bytes; the old side only when the new one has a placeholder).
 */
function textOnRead(f: ChangeFacts, key: 'oldText' | 'newText', data: Buffer): void {
  const settle = (value: string) => {
    Object.defineProperty(f, key, { value, writable: true, enumerable: true, configurable: true });
    const held = HELD.get(f);
    if (held) held[key === 'oldText' ? 'old' : 'new'] = undefined;
    return value;
  };
  Object.defineProperty(f, key, {
    get: () => settle(data.toString('utf8')),
    set: settle,
    enumerable: true,
    configurable: true,
  });
}

/**
 * A side's text as held: its bytes while its text was never read (UTF-8, as the
 * text would be decoded from), else the text; undefined where `oldText` or `newText` is.
 */
export function heldText(f: ChangeFacts, side: 'old' | 'new'): string | Buffer | undefined {
  return HELD.get(f)?.[side] ?? (side === 'old' ? f.oldText : f.newText);
}

/** A side held whole in memory (guard write, the hook): its lines are counted only when needed. */
export function heldSide(content: Buffer | null): Side | null {
  return content === null ? null : { bytes: content.length, data: content };
}
