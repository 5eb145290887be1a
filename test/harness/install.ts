/**
 * The real agent harnesses, installed on first use into a cache folder and
 * never into guard's own dependencies (together they weigh ~900 MB; a user's
 * `npm install guard` must stay small).
 *
 * Cache: $GUARD_HARNESS_CACHE, else node_modules/.cache/guard-harnesses. One
 * folder per harness and version, `npm install --prefix FOLDER PKG@VERSION`
 * into a temporary folder that is renamed into place only when the install
 * succeeded, so a killed install never leaves a half cache behind, and two
 * test processes installing at once both end with a whole one.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers.js';

export type HarnessName = 'claude' | 'gemini' | 'codex';
/** Every harness with a real binary driven here (test/clients/harness-real*.test.ts). */
export type RealHarness = HarnessName | 'copilot' | 'qwen' | 'continue' | 'droid';

/** The versions HARNESSES.md describes ("Seen in the real binaries"), and the ones docs/harnesses/ verified. */
export const HARNESS_PACKAGES: Record<
  RealHarness,
  { pkg: string; version: string; bin: string; binPath?: string }
> = {
  claude: { pkg: '@anthropic-ai/claude-code', version: '2.1.330', bin: 'claude' },
  gemini: { pkg: '@google/gemini-cli', version: '0.61.0', bin: 'gemini' },
  codex: { pkg: '@openai/codex', version: '0.169.0', bin: 'codex' },
  // native binary in @github/copilot-linux-x64 (an optional dependency)
  copilot: { pkg: '@github/copilot', version: '1.0.102', bin: 'copilot' },
  qwen: { pkg: '@qwen-code/qwen-code', version: '0.24.4', bin: 'qwen' },
  continue: { pkg: '@continuedev/cli', version: '1.5.47', bin: 'cn' },
  // the platform binary itself: @factory/cli 0.225.1 wants cli-linux-x64 0.225.1, which is not published
  droid: {
    pkg: '@factory/cli-linux-x64',
    version: '0.225.2',
    bin: 'droid',
    binPath: '@factory/cli-linux-x64/bin/droid',
  },
};

/** Where a harness's binary sits inside an install folder. */
function binIn(prefix: string, name: RealHarness): string {
  const { bin, binPath } = HARNESS_PACKAGES[name];
  return binPath
    ? path.join(prefix, 'node_modules', binPath)
    : path.join(prefix, 'node_modules', '.bin', bin);
}

export function harnessCache(): string {
  return (
    process.env.GUARD_HARNESS_CACHE || path.join(ROOT, 'node_modules', '.cache', 'guard-harnesses')
  );
}

function folder(name: RealHarness): string {
  const { pkg, version } = HARNESS_PACKAGES[name];
  return path.join(harnessCache(), `${pkg.replace(/[@/]/g, '_')}@${version}`);
}

/** The harness's bin inside the cache (present or not). */
export function harnessBin(name: RealHarness): string {
  return binIn(folder(name), name);
}

export interface Installed {
  name: RealHarness;
  bin: string;
  /** Seconds the install took; 0 when the cache already had it. */
  installSeconds: number;
  error?: string;
}

function npmInstall(
  prefix: string,
  spec: string,
  timeoutMs: number,
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    // --no-save etc.: the cache folder gets its own package.json; nothing of
    // guard's lockfile is read or written. Scripts run: the harnesses'
    // platform binaries come as optional dependencies, not postinstall
    // downloads, but a future version may need them.
    const child = spawn(
      'npm',
      ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error', spec],
      {
        cwd: prefix,
        env: { ...process.env, npm_config_update_notifier: 'false' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 128, output });
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve({ code: 127, output: String(e) });
    });
  });
}

/** Install one harness into the cache unless it is there already. Never throws. */
export async function ensureHarness(name: RealHarness, timeoutMs = 240_000): Promise<Installed> {
  const bin = harnessBin(name);
  if (existsSync(bin)) return { name, bin, installSeconds: 0 };
  const { pkg, version } = HARNESS_PACKAGES[name];
  const final = folder(name);
  const tmp = `${final}.tmp-${process.pid}`;
  // A cache folder without its bin is what an older, interrupted layout left.
  if (existsSync(final)) rmSync(final, { recursive: true, force: true });
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const started = Date.now();
  const r = await npmInstall(tmp, `${pkg}@${version}`, timeoutMs);
  const installSeconds = (Date.now() - started) / 1000;
  if (r.code !== 0 || !existsSync(binIn(tmp, name))) {
    rmSync(tmp, { recursive: true, force: true });
    return {
      name,
      bin,
      installSeconds,
      error: `npm install ${pkg}@${version} failed (${r.code}): ${r.output.trim().slice(-2000)}`,
    };
  }
  try {
    renameSync(tmp, final);
  } catch {
    // Another process renamed its own install into place first: use that one.
    rmSync(tmp, { recursive: true, force: true });
  }
  return { name, bin, installSeconds };
}

/** All three at once (the installs are network-bound, not CPU-bound). */
export function ensureHarnesses<N extends RealHarness = HarnessName>(
  names: N[] = ['claude', 'gemini', 'codex'] as N[],
): Promise<(Installed & { name: N })[]> {
  return Promise.all(names.map((n) => ensureHarness(n) as Promise<Installed & { name: N }>));
}

/**
 * Any pinned package with a bin, the same way (the plugin harnesses:
 * plugin-run.ts PLUGIN_PACKAGES): one cache folder per package and version,
 * renamed into place only when the install succeeded. Never throws.
 */
export async function ensurePackage(
  spec: { pkg: string; version: string; bin: string },
  timeoutMs = 300_000,
): Promise<{ bin: string; installSeconds: number; error?: string }> {
  const final = path.join(harnessCache(), `${spec.pkg.replace(/[@/]/g, '_')}@${spec.version}`);
  const bin = path.join(final, 'node_modules', '.bin', spec.bin);
  if (existsSync(bin)) return { bin, installSeconds: 0 };
  const tmp = `${final}.tmp-${process.pid}`;
  if (existsSync(final)) rmSync(final, { recursive: true, force: true });
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const started = Date.now();
  const r = await npmInstall(tmp, `${spec.pkg}@${spec.version}`, timeoutMs);
  const installSeconds = (Date.now() - started) / 1000;
  if (r.code !== 0 || !existsSync(path.join(tmp, 'node_modules', '.bin', spec.bin))) {
    rmSync(tmp, { recursive: true, force: true });
    return {
      bin,
      installSeconds,
      error: `npm install ${spec.pkg}@${spec.version} failed (${r.code}): ${r.output.trim().slice(-2000)}`,
    };
  }
  try {
    renameSync(tmp, final);
  } catch {
    rmSync(tmp, { recursive: true, force: true });
  }
  return { bin, installSeconds };
}
