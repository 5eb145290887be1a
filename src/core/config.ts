import { createRequire } from 'node:module';
import type * as Valibot from 'valibot';
import { GuardError } from './errors.js';

/** guard.config.json: every key optional; unknown keys and wrong types are errors. */
export interface Config {
  lineThreshold: number;
  /** Files of at least this many bytes need approval to be replaced or deleted, whatever their line count. */
  byteThreshold: number;
  changeRatio: number;
  protect: string[];
  ignore: string[];
  maxFileBytes: number;
  preview: { contextLines: number; maxLines: number };
  /**
   * What the commit gate judges when a person commits at a terminal: `all`
   * (every change, whoever wrote it), or `agents` (what an agent session
   * wrote through guard's hooks; the person's own changes pass unasked).
   * Without a person (auto mode, or while an agent's shell call runs) every
   * change is judged either way.
   */
  judge: 'all' | 'agents';
}

export const CONFIG_FILE = 'guard.config.json';

export const DEFAULT_CONFIG: Config = {
  lineThreshold: 100,
  byteThreshold: 65_536,
  changeRatio: 0.5,
  protect: ['.husky/**', 'guard.config.json', '.github/workflows/**', '.gitlab-ci.yml'],
  ignore: [],
  maxFileBytes: 52_428_800,
  preview: { contextLines: 3, maxLines: 200 },
  judge: 'all',
};

/**
 * The schema is built on first use, with valibot loaded then (synchronously,
 * through require): a missing config, or one that only repeats the defaults,
 * never pays for it. That is `guard check`'s usual path.
 */
let schema: ReturnType<typeof buildSchema> | null = null;
let v: typeof Valibot;

function buildSchema() {
  v = createRequire(import.meta.url)('valibot') as typeof Valibot;
  const count = v.pipe(v.number(), v.integer(), v.minValue(0));
  const globs = v.array(v.pipe(v.string(), v.minLength(1)));
  return v.strictObject({
    lineThreshold: v.optional(count),
    byteThreshold: v.optional(v.pipe(count, v.minValue(1))),
    changeRatio: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
    protect: v.optional(globs),
    ignore: v.optional(globs),
    maxFileBytes: v.optional(v.pipe(count, v.minValue(1))),
    preview: v.optional(
      v.strictObject({
        contextLines: v.optional(count),
        maxLines: v.optional(v.pipe(count, v.minValue(1))),
      }),
    ),
    judge: v.optional(v.picklist(['all', 'agents'])),
  });
}

/** Every key known and equal to its default (`{}` too): nothing to validate. */
function onlyDefaults(raw: Record<string, unknown>): boolean {
  const defaults = DEFAULT_CONFIG as unknown as Record<string, unknown>;
  // own keys only: `"__proto__" in defaults` is true through the prototype
  return Object.entries(raw).every(
    ([k, val]) => Object.hasOwn(defaults, k) && JSON.stringify(val) === JSON.stringify(defaults[k]),
  );
}

/**
 * Parse the text of guard.config.json. `source` names where it came from
 * (e.g. "HEAD:guard.config.json") for the error message.
 */
export function parseConfig(text: string | undefined, source = CONFIG_FILE): Config {
  if (text === undefined) return DEFAULT_CONFIG;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new GuardError(
      'E_CONFIG',
      `${source} is not valid JSON: ${(err as Error).message}`,
      `fix the file, or delete it to use the defaults`,
    );
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new GuardError(
      'E_CONFIG',
      `${source} must hold a JSON object`,
      `start from {} to use the defaults`,
    );
  }
  if (onlyDefaults(raw as Record<string, unknown>)) return DEFAULT_CONFIG;
  schema ??= buildSchema();
  const result = v.safeParse(schema, raw);
  if (!result.success) {
    const issue = result.issues[0];
    const key = issue ? v.getDotPath(issue) : null;
    const what =
      issue?.type === 'strict_object' && issue.input !== undefined
        ? 'is not a known key'
        : issue?.message;
    throw new GuardError(
      'E_CONFIG',
      key ? `${source}: "${key}" ${what}` : `${source}: ${issue?.message ?? 'invalid config'}`,
      `known keys: ${Object.keys(DEFAULT_CONFIG).join(', ')} (see docs/config.md)`,
    );
  }
  const c = result.output;
  return {
    lineThreshold: c.lineThreshold ?? DEFAULT_CONFIG.lineThreshold,
    byteThreshold: c.byteThreshold ?? DEFAULT_CONFIG.byteThreshold,
    changeRatio: c.changeRatio ?? DEFAULT_CONFIG.changeRatio,
    protect: c.protect ?? DEFAULT_CONFIG.protect,
    ignore: c.ignore ?? DEFAULT_CONFIG.ignore,
    maxFileBytes: c.maxFileBytes ?? DEFAULT_CONFIG.maxFileBytes,
    preview: {
      contextLines: c.preview?.contextLines ?? DEFAULT_CONFIG.preview.contextLines,
      maxLines: c.preview?.maxLines ?? DEFAULT_CONFIG.preview.maxLines,
    },
    judge: c.judge ?? DEFAULT_CONFIG.judge,
  };
}

export function renderDefaultConfig(): string {
  return JSON.stringify(DEFAULT_CONFIG, null, 2) + '\n';
}

/** Does this config text mean exactly the defaults? (`{}` and the file `guard init` writes do.) */
export function isDefaultConfig(text: string): boolean {
  try {
    return JSON.stringify(parseConfig(text)) === JSON.stringify(DEFAULT_CONFIG);
  } catch {
    return false;
  }
}
