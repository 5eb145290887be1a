/** What the branch-gate test files share (branch-gate, -steps, -drops). */
import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { CLI, lines, outsideDir, type TestRepo } from '../helpers.js';

export const AUTO = { CI: 'true' };
export const BIG = lines(200);
export const head = (repo: TestRepo, rev = 'HEAD') => repo.git(['rev-parse', rev]).trim();
export const has = (repo: TestRepo, rev: string, file: string) =>
  repo.gitRun(['cat-file', '-e', `${rev}:${file}`]).code === 0;

/** A folder with a `guard` program (the built CLI): the global install, for PATH. */
export function globalBin(): string {
  const bin = outsideDir();
  symlinkSync(CLI, path.join(bin, 'guard'));
  return bin;
}
export const withPath = (bin: string, extra: Record<string, string> = {}) => ({
  PATH: `${bin}${path.delimiter}${process.env.PATH}`,
  ...extra,
});
