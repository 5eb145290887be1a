import { MODE } from '../core/modes.js';
import { git, splitZ } from './run.js';

/**
 * A checkpoint must hold what was on disk, byte for byte. `git add` applies
 * the repository's clean conversions (`* text=auto`, core.autocrlf): a CRLF
 * file an agent wrote would be kept as LF, and restored as LF. For the paths
 * a checkpoint just hashed, this finds those whose working-tree line endings
 * differ from the stored blob's and stores their raw bytes instead, in the
 * same temporary index. Processes: one `ls-files --eol` over those paths
 * (eolConverted); then, only when one was converted, `hash-object
 * --no-filters`, `ls-files -s`, `update-index` (storeRawBytes; the caller
 * writes the tree again).
 *
 * `ls-files --eol` fields: "i/<eol> SP+ w/<eol> SP+ attr/<attrs> SP* TAB <path>".
 * https://git-scm.com/docs/git-ls-files#Documentation/git-ls-files.txt---eol
 * (Paths git had already hashed and found unchanged, stat-clean in the
 * user's index, keep the blob the user staged.)
 */
export async function keepRawBytes(
  cwd: string,
  env: NodeJS.ProcessEnv,
  paths: readonly string[],
): Promise<boolean> {
  const { converted } = await eolConverted(cwd, env, paths);
  return storeRawBytes(cwd, env, converted);
}

/**
 * The paths (of those asked) whose working-tree line endings differ from
 * their blob's in the index, and every path the index holds of those asked
 * (`listed`). Reads the index only: it may run beside a `write-tree` of the
 * same index (which replaces the file by a rename, with the same entries).
 */
export async function eolConverted(
  cwd: string,
  env: NodeJS.ProcessEnv,
  paths: readonly string[],
): Promise<{ converted: string[]; listed: Set<string> }> {
  const listed = new Set<string>();
  const converted: string[] = [];
  if (paths.length === 0) return { converted, listed };
  const r = await git(['ls-files', '--eol', '-z', '--', ...paths.map((p) => `:(literal)${p}`)], {
    cwd,
    env,
  });
  for (const rec of splitZ(r.stdout)) {
    const tab = rec.indexOf('\t');
    const [i, w] = rec.slice(0, tab).trim().split(/\s+/);
    const index = i?.slice(2) ?? '';
    const work = w?.slice(2) ?? '';
    listed.add(rec.slice(tab + 1));
    if (work !== '' && work !== index && work !== '-text') converted.push(rec.slice(tab + 1));
  }
  return { converted, listed };
}

/** Store the bytes on disk of these paths in the index, unconverted; false when there were none (the caller writes the tree again otherwise). */
export async function storeRawBytes(
  cwd: string,
  env: NodeJS.ProcessEnv,
  converted: readonly string[],
): Promise<boolean> {
  if (converted.length === 0) return false;
  // --no-filters: hash the bytes as they are on disk; -w: into the object store
  const hashed = await git(['hash-object', '-w', '--no-filters', '--stdin-paths'], {
    cwd,
    env,
    input: converted.join('\n') + '\n',
  });
  const oids = hashed.stdout.toString('utf8').trim().split('\n');
  // the modes stay as add found them: `ls-files -s` for just these paths
  const staged = await git(
    ['ls-files', '-s', '-z', '--', ...converted.map((p) => `:(literal)${p}`)],
    { cwd, env },
  );
  const modes = new Map(
    splitZ(staged.stdout).map((l) => [l.slice(l.indexOf('\t') + 1), l.split(' ')[0]!]),
  );
  const info = converted.map((p, k) => `${modes.get(p) ?? MODE.file} ${oids[k]}\t${p}`);
  await git(['update-index', '-z', '--index-info'], { cwd, env, input: info.join('\0') + '\0' });
  return true;
}
