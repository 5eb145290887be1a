// A month of heavy use (issue 22, item 6): N refs under refs/guard/ made
// with one fast-import and packed, beside a copy of the same repository
// without them. Used by scripts/bench.mjs (the scale rows) and by hand:
//
//   node scripts/scale-refs.mjs DIR [N]     (DIR/with, DIR/without; N = 100000)
//
// Both repositories are scripts/session-sim.mjs's session repository with
// guard init's hooks (its config committed through them), after 10 real hook
// calls (so both hold a few real records and an index of one session);
// `with` then gets N/3 more hook calls: per tool call a checkpoint (parent
// HEAD), the session's step (parent the checkpoint) and a decision record,
// with the messages guard writes, spread over the 30 days before the last hour, 300
// calls a session: as guard writes them now, a link per call on one chain ref per
// session (N/900 refs); with GUARD_SESSION_CHAIN=0 (or `chain: false`), one ref
// each (N refs), as guard wrote them before. The refs go straight into packed-refs (sorted, as `git
// pack-refs --all` and guard's background packing leave them), then `git gc`.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as lib from './lib.mjs';
import * as sim from './session-sim.mjs';

const DAY = 86_400_000;
/** fast-import's one ref; the records' refs are written straight into packed-refs. */
const TMP_REF = 'refs/scale-refs-tmp';

const idOf = (ms, n) =>
  `${new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}-${(n >>> 0).toString(16).padStart(8, '0')}`;

/**
 * The fast-import stream of `count` refs' worth of hook calls (three per call). `chain`: as guard
 * writes them now (git/session-chain.ts): the checkpoint, step and decision record of a call have
 * no ref of their own; a link per call on its session's chain (first parent the previous link, or
 * the chain's root; then the step and the record), one ref per session. Otherwise one ref each,
 * as guard wrote them before. `refs[mark - 1]` is the ref a mark's commit gets (null: none).
 */
function stream(head, worktree, count, now, refs, chain = true) {
  const calls = Math.floor(count / 3);
  const out = [];
  const span = 30 * DAY;
  const tips = new Map();
  for (let i = 0; i < calls; i++) {
    const ms = now - span + Math.floor((span * i) / calls);
    const iso = new Date(ms).toISOString();
    const unix = Math.floor(ms / 1000);
    const session = `month-${Math.floor(i / 300)}`;
    const tool = `toolu_${session}_${i}`;
    const cp = idOf(ms, i * 3 + 1);
    const file = `src/m${i % 40}.py`;
    const commit = (ref, from, subject, body, merges = []) => {
      const msg = `${subject}\n\n${JSON.stringify(body)}\n`;
      refs.push(ref);
      if (from === null) out.push(`reset ${TMP_REF}`, '');
      out.push(
        `commit ${TMP_REF}`,
        `mark :${refs.length}`,
        `author guard <guard@localhost> ${unix} +0000`,
        `committer guard <guard@localhost> ${unix} +0000`,
        `data ${Buffer.byteLength(msg)}`,
        msg,
        ...(from === null ? [] : [`from ${from}`]),
        ...merges.map((m) => `merge ${m}`),
        '',
      );
      return `:${refs.length}`;
    };
    const cpMark = commit(
      chain ? null : `refs/guard/checkpoints/${cp}`,
      head,
      `guard checkpoint: before claude Write ${file}`,
      {
        v: 1,
        kind: 'checkpoint',
        reason: `before claude Write ${file}`,
        command: 'hook',
        lane: null,
        worktree,
        time: iso,
        head,
        harness: 'claude',
        session,
        toolCall: tool,
        paths: [file],
        partial: true,
      },
    );
    const stepName = idOf(ms, i * 3 + 2);
    const step = {
      v: 1,
      harness: 'claude',
      session,
      toolCall: tool,
      tool: 'Write',
      phase: 'pre',
      kind: 'write',
      checkpoint: cp,
      paths: [file],
      worktree,
      time: iso,
      outcome: 'allow',
    };
    const stepMark = commit(
      chain ? null : `refs/guard/sessions/claude/${session}/${stepName}`,
      cpMark,
      `guard session claude ${session}: pre Write`,
      step,
    );
    const decName = idOf(ms, i * 3 + 3);
    const decMark = commit(
      chain ? null : `refs/guard/decisions/${decName}`,
      head,
      'guard hook: 1 allowed',
      {
        v: 1,
        kind: 'decisions',
        command: 'hook',
        lane: null,
        time: iso,
        base: head,
        harness: 'claude',
        session,
        toolCall: tool,
        decisions: [
          {
            path: file,
            status: 'modify',
            existingLines: 60,
            linesAdded: 1,
            linesDeleted: 1,
            changeRatio: 0.0167,
            needsApproval: false,
            reasons: [],
            rules: [],
            decision: 'allowed',
            decider: 'policy',
          },
        ],
      },
    );
    if (!chain) continue;
    const ref = `refs/guard/sessions/claude/${session}/chain`;
    let prev = tips.get(ref);
    if (prev === undefined)
      prev = commit(null, null, 'guard session chain', { v: 1, kind: 'chain' });
    else refs[Number(prev.slice(1)) - 1] = null;
    const link = commit(
      ref,
      prev,
      `guard session claude ${session}: pre Write`,
      { ...step, step: stepName, records: [decName], held: true },
      [stepMark, decMark],
    );
    tips.set(ref, link);
  }
  out.push('done', '');
  return out.join('\n');
}

/** Note `tips` ({oid, ref}) in the journal of `commonDir` with the build's own journal.js (sealed). */
function noteInJournal(node, cli, commonDir, tips) {
  const journal = path.join(path.dirname(path.dirname(cli)), 'git', 'journal.js');
  const code = `import { startJournal } from ${JSON.stringify(journal)};
    import fs from 'node:fs';
    startJournal(process.argv[1], JSON.parse(fs.readFileSync(0, 'utf8')));`;
  const r = spawnSync(node, ['--input-type=module', '-e', code, commonDir], {
    input: JSON.stringify(tips),
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`noting the chains in the journal: ${r.stderr}`);
}

/** The session index of `sessions` sessions month-0... as the hook builds it (the build's own session-index.js). */
function indexSessions(node, cli, repo, sessions) {
  const index = path.join(path.dirname(path.dirname(cli)), 'git', 'session-index.js');
  const code = `import { build } from ${JSON.stringify(index)};
    const [root, n] = process.argv.slice(1);
    const repo = { root, commonDir: root + '/.git' };
    for (let i = 0; i < Number(n); i++) await build(repo, 'claude', 'month-' + i);`;
  const r = spawnSync(node, ['--input-type=module', '-e', code, repo, String(sessions)], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`indexing the sessions: ${r.stderr}`);
}

/**
 * DIR/without and DIR/with (N more refs, packed); `node`/`cli` run the 10
 * real hook calls both start with. Returns both paths and the env whose PATH
 * has DIR/bin/guard (this build) for the hooks.
 */
export function makeScaleRepos(dir, { env: baseEnv, node, cli, count = 100_000, chain = true }) {
  fs.mkdirSync(dir, { recursive: true });
  // the hooks run `guard`: this build, on PATH (returned as `env` for the commit row)
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(path.join(bin, 'guard'), `#!/bin/sh\nexec "${node}" "${cli}" "$@"\n`, {
    mode: 0o755,
  });
  const env = { ...baseEnv, PATH: `${bin}${path.delimiter}${baseEnv.PATH}` };
  const without = path.join(dir, 'without');
  const withRefs = path.join(dir, 'with');
  // the same 10 real hook calls in each (a copy would keep the first one's path in its records)
  for (const repo of [without, withRefs]) {
    sim.makeSessionRepo(repo, env);
    // guard's hooks, its config committed through them (the commit row commits through them too)
    const init = spawnSync(node, [cli, 'init'], { cwd: repo, env, encoding: 'utf8' });
    if (init.status !== 0) throw new Error(`guard init: ${init.stderr}`);
    lib.git(repo, ['add', 'guard.config.json'], { env });
    lib.git(repo, ['commit', '-q', '-m', 'guard config'], { env });
    sim.runSession({ node, cli, repo, env, to: 10, hooks: true, session: 'scale' });
  }
  const head = lib.git(withRefs, ['rev-parse', 'HEAD'], { env }).trim();
  // the commits with one fast-import (marks, one temporary ref), then their refs written
  // straight into packed-refs, sorted, as `git pack-refs` leaves them: 100,000 loose ref
  // files and their pruning took minutes on a loaded machine
  const refs = [];
  const marks = path.join(dir, 'marks');
  const r = spawnSync(
    'git',
    [
      '-c',
      'core.hooksPath=/dev/null',
      'fast-import',
      '--quiet',
      '--done',
      `--export-marks=${marks}`,
    ],
    {
      cwd: withRefs,
      env,
      input: stream(head, withRefs, count, Date.now() - DAY / 24, refs, chain),
      maxBuffer: 64 << 20,
    },
  );
  if (r.status !== 0) throw new Error(`fast-import: ${r.stderr}`);
  lib.git(withRefs, ['-c', 'core.hooksPath=/dev/null', 'update-ref', '-d', TMP_REF], { env });
  lib.git(withRefs, ['pack-refs', '--all', '--prune'], { env });
  const packedFile = path.join(withRefs, '.git', 'packed-refs');
  const lines = fs
    .readFileSync(packedFile, 'utf8')
    .split('\n')
    .filter((l) => l && !l.startsWith('#'));
  const noted = [];
  for (const l of fs.readFileSync(marks, 'utf8').split('\n')) {
    const m = /^:(\d+) ([0-9a-f]+)$/.exec(l);
    if (m && refs[Number(m[1]) - 1]) lines.push(`${m[2]} ${refs[Number(m[1]) - 1]}`);
    if (m && refs[Number(m[1]) - 1]) noted.push({ oid: m[2], ref: refs[Number(m[1]) - 1] });
  }
  // the chains in guard's journal, as guard notes each ref it writes (a journal with no word on
  // most refs under refs/guard/ is one put back in place of guard's: every door would say so),
  // through guard's own note (the journal is sealed: lines appended by hand are not guard's word,
  // and provenance would not see the chains)
  if (chain) noteInJournal(node, cli, path.join(withRefs, '.git'), noted);
  // git's byte order (the names are ASCII) and a ref's peeled line stays after it
  const entries = [];
  for (const l of lines) {
    if (l.startsWith('^')) entries[entries.length - 1].push(l);
    else entries.push([l]);
  }
  entries.sort((a, b) => {
    const x = a[0].slice(a[0].indexOf(' ') + 1);
    const y = b[0].slice(b[0].indexOf(' ') + 1);
    return x < y ? -1 : x > y ? 1 : 0;
  });
  fs.writeFileSync(
    packedFile,
    `# pack-refs with: peeled fully-peeled sorted \n${entries.flat().join('\n')}\n`,
  );
  // and each session's index, as its hook calls leave it (git/session-index.ts)
  if (chain) indexSessions(node, cli, withRefs, Math.ceil(Math.floor(count / 3) / 300));
  for (const repo of [without, withRefs]) lib.git(repo, ['gc', '--quiet'], { env });
  return { without, with: withRefs, env };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = path.resolve(process.argv[2] ?? 'scale-refs');
  const count = Number(process.argv[3] ?? 100_000);
  // GUARD_SESSION_CHAIN=0: one ref per record, as guard wrote them before the chains
  const chain = process.env.GUARD_SESSION_CHAIN !== '0';
  const env = lib.cleanEnv({
    GIT_AUTHOR_NAME: 'Scale',
    GIT_AUTHOR_EMAIL: 'scale@guard.invalid',
    GIT_COMMITTER_NAME: 'Scale',
    GIT_COMMITTER_EMAIL: 'scale@guard.invalid',
  });
  const t = Date.now();
  const r = makeScaleRepos(dir, {
    env,
    node: process.execPath,
    cli: lib.DEFAULT_CLI,
    count,
    chain,
  });
  console.log(
    `${r.with} (${count} more refs) and ${r.without}, ${((Date.now() - t) / 1000).toFixed(0)} s`,
  );
}
