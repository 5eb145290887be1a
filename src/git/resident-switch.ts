import type { CatFileOptions, CatResult } from './catfile.js';
import type { Repo } from './repo.js';

/**
 * Where the reads that a long-lived process may keep across calls go: set
 * by git/resident.ts when guard runs inside a harness's own process (the
 * plugin, src/plugin). Unset, as in every `guard` command and `guard hook`,
 * each read starts its own git.
 */
export const residentGit: {
  openRepo?: (cwd: string) => Promise<Repo>;
  catFile?: (cwd: string, names: readonly string[], o: CatFileOptions) => Promise<CatResult[]>;
} = {};
