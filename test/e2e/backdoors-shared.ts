/** What backdoors-integrity and backdoors-integrity-moves share. */
import { spawnSync } from 'node:child_process';
import { cleanEnv, installGuard, lines, type TestRepo } from '../helpers.js';

export const BIG = lines(200);
export const AUTO = { CI: 'true' };

export function repoWithBig(): TestRepo {
  return installGuard({ 'big.txt': BIG, 'a.txt': 'a\n' });
}

export const head = (repo: TestRepo, rev = 'HEAD') => repo.git(['rev-parse', rev]).trim();
/** big.txt as committed at REV: what got in. */
export const bigAt = (repo: TestRepo, rev = 'HEAD') =>
  repo.git(['cat-file', 'blob', `${rev}:big.txt`]);
export const drop = (text: string, n: number) => text.split('\n').slice(n).join('\n');

export function laneGit(lane: string, args: string[], env: Record<string, string> = {}) {
  const r = spawnSync('git', args, { cwd: lane, env: cleanEnv({ ...AUTO, ...env }) });
  return { code: r.status ?? 128, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}
