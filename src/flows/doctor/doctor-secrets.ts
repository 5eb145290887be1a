import { readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * guard's checkpoints keep ignored files (`.env`, `config/local.json`) under
 * refs/guard/ (git/kept.ts): a push that sends refs/guard/* publishes them.
 * Plain `git push`, `--all` and `--tags` never do (branches and tags only);
 * a remote configured to mirror (`remote.NAME.mirror`, what `git remote add
 * --mirror=push` writes) or a push refspec that covers refs/guard/ does, on
 * every push. Read from the repository's own config file (no git process;
 * remotes live there: a remote set in an included or the global file is not
 * seen).
 */
export async function secretPushProblems(
  commonDir: string,
): Promise<Array<{ message: string; hint: string }>> {
  const text = await readFile(path.join(commonDir, 'config'), 'utf8').catch(() => '');
  const out: Array<{ message: string; hint: string }> = [];
  let remote: string | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s[#;].*$/, '').trim();
    const section = /^\[\s*([^\s\]"]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]$/.exec(line);
    if (section) {
      remote =
        section[1]!.toLowerCase() === 'remote' && section[2] !== undefined
          ? section[2].replace(/\\(.)/g, '$1')
          : null;
      continue;
    }
    if (remote === null) continue;
    const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (!kv) continue;
    const key = kv[1]!.toLowerCase();
    const value = (kv[2] ?? 'true').replace(/^"(.*)"$/, '$1');
    if (key !== 'mirror' && key !== 'push') continue;
    const src = value.replace(/^\+/, '').split(':')[0]!;
    const covers =
      key === 'mirror'
        ? /^(true|yes|on|1)$/i.test(value)
        : src === 'refs/*' || src === '*' || src.startsWith('refs/guard');
    if (!covers) continue;
    out.push({
      message: `remote ${remote} pushes refs/guard/* (${key} = ${value}): guard's checkpoints keep ignored files such as .env there, so every push to ${remote} publishes them`,
      hint: `push branches only (git config --unset remote.${remote}.${key}), or GUARD_KEPT_TOTAL_MAX=0 where guard runs to keep no ignored files (docs/reliability/coverage.md)`,
    });
  }
  return out;
}
