import path from 'node:path';
import { CONFIG_FILE, parseConfig, type Config } from '../core/config.js';

/** Options every flow gets from the CLI. */
export interface FlowOptions {
  cwd: string;
  /** Colour for text guard writes to the terminal (prompts, previews). */
  color: boolean;
  now?: Date;
}

/** The lane a work tree is, from its place under .guard/lanes/; null for the main tree. */
export function laneOf(root: string): string | null {
  const m = /[\\/]\.guard[\\/]lanes[\\/]([^\\/]+)$/.exec(root);
  return m ? m[1]! : null;
}

/** The policy is the committed config of the base: never the tree being judged. */
export function configAt(rev: string | null, text: Buffer | undefined): Config {
  const source = `${rev ?? 'HEAD'}:${CONFIG_FILE}`;
  return parseConfig(text?.toString('utf8'), source);
}

export function shortOid(oid: string | null | undefined): string {
  return oid ? oid.slice(0, 10) : '(none)';
}

export function relativeTo(root: string, p: string): string {
  return path.relative(root, p) || '.';
}
