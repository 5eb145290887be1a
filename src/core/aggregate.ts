import { isHeavy, withReason, type Classification } from './classify.js';
import type { Config } from './config.js';

/**
 * The change-level rule (DESIGN "needs approval": the change as a whole). A
 * change that loses `lineThreshold` lines or more through files it deletes or
 * replaces needs a person, even when each file alone is under the threshold:
 * twelve 40-line files deleted in one commit lose 480 lines.
 *
 * Lines lost: the whole file for a deletion, the deleted lines for a
 * replacement, counted over the files that do NOT reach the threshold on
 * their own (those need a person already, and counting them again would put
 * every small edit beside them to a person too). Ignored, binary and
 * whitespace-only files lose nothing here.
 * Rule id: `aggregate-loss`.
 */
export function linesLost(
  c: Classification,
  lineThreshold = Infinity,
  byteThreshold = Infinity,
): number {
  if (c.existingLines >= lineThreshold || isHeavy(c, { byteThreshold })) return 0;
  if (c.ignored || c.binary || c.submodule || c.symlink || c.whitespaceOnly) return 0;
  if (c.status === 'delete') return c.existingLines;
  if (c.status === 'replace') return c.linesDeleted;
  return 0;
}

/**
 * Bytes lost, the same way (`byteThreshold`): the whole file for a deletion,
 * its share by `changeRatio` for a replacement; 0 where the size is unknown.
 */
export function bytesLost(
  c: Classification,
  lineThreshold = Infinity,
  byteThreshold = Infinity,
): number {
  if (linesLost(c, lineThreshold, byteThreshold) === 0 || c.existingBytes === undefined) return 0;
  return c.status === 'delete' ? c.existingBytes : Math.round(c.existingBytes * c.changeRatio);
}

export interface AggregateLoss {
  lines: number;
  bytes: number;
  /** The files that lose lines, in the order given. */
  paths: string[];
}

type Thresholds = Pick<Config, 'lineThreshold'> & Partial<Pick<Config, 'byteThreshold'>>;

/** What the change as a whole loses through deleted and replaced files; null when under both thresholds. */
export function aggregateLoss(
  files: readonly Classification[],
  config: Thresholds,
): AggregateLoss | null {
  const byteThreshold = config.byteThreshold ?? Infinity;
  let lines = 0;
  let bytes = 0;
  const paths: string[] = [];
  for (const f of files) {
    const n = linesLost(f, config.lineThreshold, byteThreshold);
    if (n === 0) continue;
    lines += n;
    bytes += bytesLost(f, config.lineThreshold, byteThreshold);
    paths.push(f.path);
  }
  if ((lines < config.lineThreshold && bytes < byteThreshold) || paths.length < 2) return null;
  return { lines, bytes, paths };
}

/**
 * The classifications with the change-level rule applied: every file that
 * contributes to an aggregate loss at or over the threshold needs approval,
 * with a reason that says so. New objects; the input is not changed.
 */
export function withAggregateLoss<T extends Classification>(
  files: readonly T[],
  config: Thresholds,
): T[] {
  const loss = aggregateLoss(files, config);
  if (!loss) return [...files];
  const contributing = new Set(loss.paths);
  const reason =
    loss.lines >= config.lineThreshold
      ? `the change as a whole loses ${loss.lines} lines through ${loss.paths.length} deleted or replaced files ` +
        `(${config.lineThreshold}+ lines together need approval)`
      : `the change as a whole loses ${loss.bytes} bytes through ${loss.paths.length} deleted or replaced files ` +
        `(${config.byteThreshold}+ bytes together need approval)`;
  return files.map((f) =>
    contributing.has(f.path) && !f.rules.includes('aggregate-loss')
      ? { ...withReason(f, { rule: 'aggregate-loss', text: reason }), needsApproval: true }
      : f,
  );
}
