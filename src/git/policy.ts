import { makePolicy, type Policy } from '../core/classify.js';
import { CONFIG_FILE, DEFAULT_CONFIG, parseConfig, type Config } from '../core/config.js';
import { GuardError } from '../core/errors.js';
import { READ_CAP, catFileBatch, type CatResult } from './catfile.js';

/**
 * The policy at a revision: the guard.config.json committed there, never the
 * tree being judged. Every gate reads it here (check and write at HEAD, ci at
 * the merge base, the branch gate at the range's base, lanes at main's HEAD,
 * the hook at HEAD and at each HEAD the session's calls found), in one
 * cat-file that also reads whatever else the caller needs beside it.
 */

/** The config blob at `rev`, as cat-file names it. */
export function configObject(rev: string): string {
  return `${rev}:${CONFIG_FILE}`;
}

/** A committed config parsed; a broken one says that fixing the file is not enough. */
export function configAt(rev: string | null, text: Buffer | undefined): Config {
  const source = configObject(rev ?? 'HEAD');
  try {
    return parseConfig(text?.toString('utf8'), source);
  } catch (err) {
    if (!(err instanceof GuardError)) throw err;
    // Editing the file changes nothing: the policy is the committed one.
    throw new GuardError(
      err.code,
      err.message,
      `guard reads its policy from ${source}, so fixing the file is not enough: commit the fix past the gate ` +
        `(git -c core.hooksPath=/dev/null commit --no-verify guard.config.json), then run guard doctor`,
    );
  }
}

export interface ReadPolicyOptions {
  /** Other objects read in the same cat-file (HEAD, a record): returned in `also`, in this order. */
  also?: readonly string[];
  /** The revision as an error names it (ci: the merge base, shortened); `rev` when left out. */
  shown?: string;
  /** A config that does not parse: thrown (the default), or the defaults used in its place (the branch gate's older tips). */
  broken?: 'throw' | 'defaults';
}

export interface ConfigRead {
  config: Config;
  /** The config blob's object id; null when none is committed at the revision (the defaults: bootstrap). */
  oid: string | null;
  also: CatResult[];
}

/** The committed config at `rev` (the defaults when there is none), and the objects asked `also`: one cat-file. */
export async function readConfig(
  cwd: string,
  rev: string,
  opts: ReadPolicyOptions = {},
): Promise<ConfigRead> {
  const [blob, ...also] = await catFileBatch(
    cwd,
    [configObject(rev), ...(opts.also ?? [])],
    READ_CAP,
  );
  return configFrom(rev, [blob ?? null, ...also], opts);
}

/** readConfig from objects already read: the config blob at `rev` (null: none), then the others asked `also`. */
export function configFrom(
  rev: string,
  [blob, ...also]: readonly CatResult[],
  opts: Pick<ReadPolicyOptions, 'shown' | 'broken'> = {},
): ConfigRead {
  const oid = blob ? blob.oid : null;
  try {
    return { config: configAt(opts.shown ?? rev, blob?.data), oid, also };
  } catch (err) {
    // an older tip's broken config must not lock the branch for good: measure that range under the defaults
    if (opts.broken !== 'defaults' || !(err instanceof GuardError)) throw err;
    return { config: DEFAULT_CONFIG, oid, also };
  }
}

export interface PolicyRead extends ConfigRead {
  policy: Policy;
}

/** A config read (readConfig, configFrom) with what it asks a person about. */
export function policyOf(read: ConfigRead): PolicyRead {
  return { ...read, policy: makePolicy(read.config, { bootstrap: read.oid === null }) };
}

/** The policy at `rev`: its committed config, and what that config asks a person about. */
export async function readPolicy(
  cwd: string,
  rev: string,
  opts: ReadPolicyOptions = {},
): Promise<PolicyRead> {
  return policyOf(await readConfig(cwd, rev, opts));
}
