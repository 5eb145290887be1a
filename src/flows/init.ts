import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile, writeFile, chmod } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_FILE, renderDefaultConfig } from '../core/config.js';
import { GuardError } from '../core/errors.js';
import { openRepo, type Repo } from '../git/repo.js';
import { git } from '../git/run.js';
import type { FlowOptions } from './context.js';

export interface InitResult {
  root: string;
  hooksPath: string;
  changed: string[];
  warnings: string[];
}

const HUSKY_DIR = '.husky';
export const HOOKS_PATH = `${HUSKY_DIR}/_`;
const HOOK_TEMPLATE = fileURLToPath(new URL('../../hooks/pre-commit', import.meta.url));
const GUARD_LINE = /^\s*(?:npx\s+)?guard\s+check\b/m;

/** Install guard into a repository. Safe to run twice: the second run changes nothing. */
export async function init(opts: FlowOptions): Promise<InitResult> {
  const repo = await openRepo(opts.cwd);
  const changed: string[] = [];
  const warnings: string[] = [];

  const before = await hooksPath(repo);
  if (before !== null && before !== HOOKS_PATH && before !== `${HOOKS_PATH}/`) {
    warnings.push(`core.hooksPath was "${before}", which would skip guard's hook; it now points at ${HOOKS_PATH}`);
  }
  const husky = await installHusky(repo.root);
  if (husky) throw new GuardError('E_USAGE', `husky could not install the hooks: ${husky}`, husky.includes('HUSKY=0') ? 'unset HUSKY and run guard init again' : 'run guard init from the top of the repository');
  if (before !== HOOKS_PATH) changed.push(`set core.hooksPath to ${HOOKS_PATH} (husky)`);

  const hook = path.join(repo.root, HUSKY_DIR, 'pre-commit');
  const template = await readFile(HOOK_TEMPLATE, 'utf8');
  if (!existsSync(hook)) {
    await writeFile(hook, template, { mode: 0o755 });
    changed.push(`wrote ${HUSKY_DIR}/pre-commit (runs guard check)`);
  } else {
    const text = await readFile(hook, 'utf8');
    if (!GUARD_LINE.test(text)) {
      await appendFile(hook, (text.endsWith('\n') || text === '' ? '' : '\n') + '\n' + template);
      changed.push(`added guard check to ${HUSKY_DIR}/pre-commit`);
    }
    await chmod(hook, 0o755);
  }

  // integrity: the gate on every other way a branch moves (reference-transaction, pre-merge-commit)
  changed.push(...(await (await import('./branch-gate.js')).installBranchGate(repo, HUSKY_DIR, HOOKS_PATH)));

  const config = path.join(repo.root, CONFIG_FILE);
  if (!existsSync(config)) {
    await writeFile(config, renderDefaultConfig());
    changed.push(`wrote ${CONFIG_FILE} with the defaults (commit it: guard reads the policy from HEAD)`);
  }

  if (await ensureExcluded(repo)) changed.push('added .guard/ to .git/info/exclude');
  return { root: repo.root, hooksPath: HOOKS_PATH, changed, warnings };
}

async function hooksPath(repo: Repo): Promise<string | null> {
  const r = await git(['config', '--get', 'core.hooksPath'], { cwd: repo.root, okCodes: [1] });
  return r.code === 0 ? r.stdout.toString().trim() : null;
}

/** husky v9 works on the current directory; run it at the top of the work tree. */
async function installHusky(root: string): Promise<string> {
  const { default: husky } = await import('husky');
  const prev = process.cwd();
  process.chdir(root);
  try {
    return husky(HUSKY_DIR) ?? '';
  } finally {
    process.chdir(prev);
  }
}

/** `.guard/` (lanes, feedback) is listed in .git/info/exclude, never in the user's .gitignore. */
export async function ensureExcluded(repo: Repo): Promise<boolean> {
  const file = path.join(repo.commonDir, 'info', 'exclude');
  let text = '';
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (/^\/?\.guard\/?$/m.test(text)) return false;
  await mkdir(path.dirname(file), { recursive: true });
  await appendFile(file, (text === '' || text.endsWith('\n') ? '' : '\n') + '# guard lanes and feedback\n/.guard/\n');
  return true;
}
