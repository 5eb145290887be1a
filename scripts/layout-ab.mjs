// guard's two ref layouts on the same scripted session (docs/performance.md, "One ref per
// session"): .git growth, refs, loose refs and objects, and the pre-hook wall time of the
// session's writes (first 20, last 20), one call in each repository in turn, nothing packed.
//
//   node scripts/layout-ab.mjs [NODE] [CALLS]     (after npm run build; CALLS = 200)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as lib from './lib.mjs';
import * as sim from './session-sim.mjs';
const node = process.argv[2] ?? process.execPath;
const CALLS = Number(process.argv[3] ?? 200);
const cli = lib.DEFAULT_CLI;
const dir = path.join(os.tmpdir(), 'guard-layout-ab');
fs.rmSync(dir, { recursive: true, force: true });
const sides = ['0', '1'].map((chain) => {
  const env = lib.cleanEnv({ GUARD_SESSION_CHAIN: chain, GUARD_NO_AUTO_PACK: '1' });
  const repo = sim.makeSessionRepo(path.join(dir, `chain-${chain}`), env);
  return { chain, env, repo, before: sim.gitDirBytes(repo), pre: [] };
});
for (let i = 0; i < CALLS; i++)
  for (const s of sides) {
    const r = sim.runSession({
      node,
      cli,
      repo: s.repo,
      env: s.env,
      from: i,
      to: i + 1,
      hooks: true,
    });
    s.pre.push(...r.writePre);
  }
const med = (a) => {
  const b = [...a].sort((x, y) => x - y);
  return b[Math.floor(b.length / 2)];
};
for (const s of sides) {
  const refs = spawnSync('git', ['for-each-ref', '--format=x', 'refs/guard/'], {
    cwd: s.repo,
    encoding: 'utf8',
  })
    .stdout.split('\n')
    .filter(Boolean).length;
  const loose = sim.looseCounts(s.repo);
  console.log(
    JSON.stringify({
      layout: s.chain === '1' ? 'chain' : 'a ref each',
      calls: CALLS,
      gitGrowthKB: Math.round((sim.gitDirBytes(s.repo) - s.before) / 1024),
      refsUnderGuard: refs,
      looseRefs: loose.refs,
      looseObjects: loose.objects,
      writePreFirst20ms: med(s.pre.slice(0, 20)),
      writePreLast20ms: med(s.pre.slice(-20)),
    }),
  );
}
