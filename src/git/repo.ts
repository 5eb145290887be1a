import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { GuardError } from '../core/errors.js';
import { repoFromFiles } from './discover.js';
import { residentGit } from './resident-switch.js';
import { git } from './run.js';

export interface Repo {
  /** The work tree guard acts on (main tree or a lane). */
  root: string;
  /** This work tree's git dir (`.git/worktrees/<name>` in a lane). */
  gitDir: string;
  /** The shared git dir, where refs/guard/ and .git/info/exclude live. */
  commonDir: string;
}

/**
 * Find the work tree around `cwd`: from the file system in the plain case
 * (git/discover.ts), else with one rev-parse; in the plugin, kept per folder
 * while it still holds (git/resident.ts, which rediscovers with rev-parse).
 */
export function openRepo(cwd: string): Promise<Repo> {
  if (residentGit.openRepo) return residentGit.openRepo(cwd);
  const found = repoFromFiles(cwd);
  return found ? Promise.resolve(found) : discoverRepo(cwd);
}

/**
 * openRepo's one rev-parse; also what test/integration/discover.test.ts holds the file system's
 * answer to. https://git-scm.com/docs/git-rev-parse#_options_for_files
 */
export async function discoverRepo(cwd: string): Promise<Repo> {
  let out: string;
  try {
    const r = await git(
      ['rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-common-dir'],
      { cwd },
    );
    out = r.stdout.toString('utf8');
  } catch (err) {
    if (err instanceof GuardError && err.code === 'E_GIT' && /work tree|bare/i.test(err.message)) {
      throw new GuardError(
        'E_NOT_A_REPO',
        `${cwd} is not inside a git work tree`,
        'run guard in a checkout, not in .git or a bare repository',
      );
    }
    if (
      err instanceof GuardError &&
      err.code === 'E_GIT' &&
      /ENOENT|cwd|directory/i.test(err.message)
    ) {
      throw new GuardError(
        'E_NOT_A_REPO',
        `${cwd} is not a git repository`,
        'pass --cwd a folder inside a git work tree',
      );
    }
    throw err;
  }
  const lines = out.replace(/\n$/, '').split('\n');
  const [root, gitDir, common] = lines;
  if (lines.length > 3) {
    // one path per line: a folder named "x\n/elsewhere\n/elsewhere/.git" would answer another repository
    throw new GuardError(
      'E_NOT_A_REPO',
      `${JSON.stringify(cwd)}: a path of this repository has a line break`,
      'rename the folder; guard cannot tell its git folders from what git answers',
    );
  }
  if (!root || !gitDir || !common) {
    throw new GuardError(
      'E_NOT_A_REPO',
      `${cwd} is not inside a git work tree`,
      'run guard in a checkout, not in .git',
    );
  }
  // --git-common-dir is relative to the folder git ran in (its physical path), not the work tree
  const commonDir = path.isAbsolute(common) ? common : path.resolve(await realpath(cwd), common);
  return { root, gitDir, commonDir };
}

/** Is this a shallow clone (history cut off by --depth)? https://git-scm.com/docs/git-rev-parse#_options_for_files */
export async function isShallow(cwd: string): Promise<boolean> {
  return (
    (await git(['rev-parse', '--is-shallow-repository'], { cwd })).stdout
      .toString('utf8')
      .trim() === 'true'
  );
}
