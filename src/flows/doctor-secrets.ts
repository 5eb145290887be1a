import { git } from '../git/run.js';

/**
 * guard's checkpoints keep ignored files (`.env`, `config/local.json`) under
 * refs/guard/ (git/kept.ts): a push that sends refs/guard/* publishes them.
 * Plain `git push`, `--all` and `--tags` never do (branches and tags only);
 * a remote configured to mirror (`remote.NAME.mirror`, what `git remote add
 * --mirror=push` writes) or a push refspec that covers refs/guard/ does, on
 * every push. One git process: the remotes' push configuration.
 */
export async function secretPushProblems(cwd: string): Promise<Array<{ message: string; hint: string }>> {
  // (exit 1: no such keys)
  const r = await git(['config', '--get-regexp', '^remote\\..*\\.(mirror|push)$'], { cwd, okCodes: [1] });
  const out: Array<{ message: string; hint: string }> = [];
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const m = /^remote\.(.+)\.(mirror|push) (.*)$/.exec(line);
    if (!m) continue;
    const [, remote, key, value] = m as unknown as [string, string, string, string];
    const src = value.replace(/^\+/, '').split(':')[0]!;
    const covers = key === 'mirror' ? /^(true|yes|on|1)$/i.test(value) : src === 'refs/*' || src === '*' || src.startsWith('refs/guard') || src === 'refs/guard/*';
    if (!covers) continue;
    out.push({
      message: `remote ${remote} pushes refs/guard/* (${key} = ${value}): guard's checkpoints keep ignored files such as .env there, so every push to ${remote} publishes them`,
      hint: `push branches only (git config --unset remote.${remote}.${key}), or GUARD_KEPT_TOTAL_MAX=0 where guard runs to keep no ignored files (docs/reliability/coverage.md)`,
    });
  }
  return out;
}
