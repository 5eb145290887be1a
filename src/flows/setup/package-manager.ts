import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Which package manager a project uses, read from what it leaves on disk
 * (lockfiles, `.yarnrc.yml`, `.pnp.cjs`, the `packageManager` field), so
 * `guard init` writes a hook that runs guard the way that manager does and
 * names the install line that manager takes. Never `npx` on the hot path:
 * it costs about 250 ms per commit.
 */
export type PackageManager = 'npm' | 'pnpm' | 'yarn' | 'yarn-pnp' | 'bun';

export interface Detected {
  manager: PackageManager;
  /** The folder the answer came from (the work tree root or a folder above cwd). */
  dir: string;
  /** What made us say so, for the message: "pnpm-lock.yaml", "no lockfile". */
  evidence: string;
}

/** The line that installs guard into the project, as each manager spells it. */
export const INSTALL_LINE: Record<PackageManager | 'global', string> = {
  npm: 'npm install --save-dev guard-cli',
  pnpm: 'pnpm add --save-dev guard-cli',
  yarn: 'yarn add --dev guard-cli',
  'yarn-pnp': 'yarn add --dev guard-cli',
  bun: 'bun add --dev guard-cli',
  global: 'npm install --global guard-cli',
};

/** How the hook runs guard: husky puts node_modules/.bin on PATH; PnP has none, so yarn runs it. */
export const HOOK_COMMAND: Record<PackageManager, string> = {
  npm: 'guard check',
  pnpm: 'guard check',
  yarn: 'guard check',
  'yarn-pnp': 'yarn guard check',
  bun: 'guard check',
};

async function readJson(file: string): Promise<Record<string, unknown> | null> {
  try {
    const v: unknown = JSON.parse(await readFile(file, 'utf8'));
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Yarn berry (a `.yarnrc.yml`) uses Plug'n'Play unless `nodeLinker` says otherwise. */
async function yarnManager(dir: string): Promise<PackageManager> {
  if (existsSync(path.join(dir, '.pnp.cjs'))) return 'yarn-pnp';
  let rc = '';
  try {
    rc = await readFile(path.join(dir, '.yarnrc.yml'), 'utf8');
  } catch {
    return existsSync(path.join(dir, 'node_modules')) ? 'yarn' : 'yarn-pnp';
  }
  const linker = /^\s*nodeLinker\s*:\s*["']?([\w-]+)/m.exec(rc)?.[1];
  return linker === undefined || linker === 'pnp' ? 'yarn-pnp' : 'yarn';
}

/** One folder's answer, or null when it has no package.json and no lockfile. */
async function detectIn(dir: string): Promise<Detected | null> {
  const has = (f: string) => existsSync(path.join(dir, f));
  const pkg = await readJson(path.join(dir, 'package.json'));
  // "packageManager": "pnpm@9.1.0" (corepack's field); yarn 1.x is classic, 2+ is berry.
  const [field, version] =
    typeof pkg?.packageManager === 'string' ? pkg.packageManager.split('@') : [];
  const at = (manager: PackageManager, evidence: string): Detected => ({ manager, dir, evidence });
  if (has('pnpm-lock.yaml') || has('pnpm-workspace.yaml'))
    return at('pnpm', has('pnpm-lock.yaml') ? 'pnpm-lock.yaml' : 'pnpm-workspace.yaml');
  if (has('yarn.lock') || has('.yarnrc.yml') || has('.pnp.cjs')) {
    // Yarn classic (1.x) has no .yarnrc.yml and always links node_modules.
    const manager = has('.yarnrc.yml') || has('.pnp.cjs') ? await yarnManager(dir) : 'yarn';
    return at(
      manager,
      has('yarn.lock') ? 'yarn.lock' : has('.pnp.cjs') ? '.pnp.cjs' : '.yarnrc.yml',
    );
  }
  if (has('bun.lockb') || has('bun.lock'))
    return at('bun', has('bun.lock') ? 'bun.lock' : 'bun.lockb');
  if (has('package-lock.json') || has('npm-shrinkwrap.json')) return at('npm', 'package-lock.json');
  if (field === 'pnpm' || field === 'bun' || field === 'npm')
    return at(field, `"packageManager" in package.json`);
  if (field === 'yarn')
    return at(
      version?.startsWith('1.') ? 'yarn' : await yarnManager(dir),
      `"packageManager" in package.json`,
    );
  if (pkg) return at('npm', 'package.json without a lockfile');
  if (has('node_modules')) return at('npm', 'node_modules');
  return null;
}

/**
 * The package manager of the project around `cwd`: the nearest folder from
 * `cwd` up to the work tree `root` with a lockfile or a package.json. Null
 * when there is none (a Python or Go repository): the global route.
 */
export async function detectPackageManager(cwd: string, root: string): Promise<Detected | null> {
  let dir = path.resolve(cwd);
  const top = path.resolve(root);
  for (;;) {
    const found = await detectIn(dir);
    if (found) return found;
    if (dir === top || !dir.startsWith(top + path.sep)) return null;
    dir = path.dirname(dir);
  }
}
