import type { DecisionRecord } from '../core/record.js';
import { checkpointId, checkpointMessage, type SessionMeta } from '../git/checkpoint.js';
import { faultPoint } from '../runtime/faults.js';
import { REFS, newRef, writeRecords, type RecordCommit } from '../git/records.js';
import { sessionMessage, sessionPrefix } from '../git/session.js';
import type { ApplyPlan, Steps, Taken } from './steps.js';

/**
 * hook, a write tool call: the paths it writes, checkpointed as they are on
 * disk now (the hook read them to judge the call: no work-tree scan), with
 * the session step that makes the checkpoint their session base. The
 * harness writes the files, or does not; guard writes only what keeps them.
 */
export interface PathsTarget {
  kind: 'paths';
  /** Each path as the disk holds it now (content null: absent). */
  files: Array<{ rel: string; content: Buffer | null; mode: string }>;
  /** HEAD: the checkpoint's parent, and the tree the paths are put on. */
  head: string | null;
  lane: string | null;
  reason: string;
  session: SessionMeta & { tool: string };
  /**
   * What the call became. allow and ask leave a session step (ask keeps the
   * person's decisions in it, `asked`, for the post event, which runs only
   * when the person said yes); deny leaves none: a refused call wrote nothing,
   * and rewind puts back only what a session wrote.
   */
  outcome: 'allow' | 'ask' | 'deny';
  asked?: DecisionRecord[];
  /**
   * What the call leaves on disk (content null: deleted), kept with the step (its second parent)
   * while a background command of the session is open: the harness sends no after event of a
   * write, and the background check compares it with what is there at the next call (holes7).
   */
  results?: Array<{ rel: string; content: Buffer | null; mode: string }>;
}

/** The result commit's mark in the paths target's import (the checkpoint is 1). */
const RESULT_MARK = 3;

/**
 * One fast-import: the checkpoint, the step and the plan's records (the
 * decisions), after the step's entry in the session index: killed before
 * the records exist, the entry names a ref that is not there, and the next
 * call rebuilds the index.
 */
export const pathsSteps: Steps<PathsTarget, undefined> = {
  recordsFirst: false,
  changes: () => true,
  checkpoint: (p, t) => checkpointAsRead(p, t),
};

async function checkpointAsRead(p: ApplyPlan<PathsTarget>, t: PathsTarget): Promise<Taken> {
  const { now, repo } = p;
  const s = t.session;
  const cpRef = newRef(REFS.checkpoints, now);
  const cpId = checkpointId(cpRef);
  const paths = t.files.map((f) => f.rel);
  const cpMessage = checkpointMessage(
    { root: repo.root },
    {
      reason: t.reason,
      command: 'hook',
      lane: t.lane,
      paths,
      session: { harness: s.harness, session: s.session, toolCall: s.toolCall },
    },
    { now, head: t.head, index: null, skipped: [] },
  );
  const changes = t.files.map((f): RecordCommit['changes'][number] =>
    f.content === null
      ? { kind: 'delete', path: f.rel }
      : { kind: 'inline', path: f.rel, mode: f.mode, data: f.content },
  );
  // reached from the session's step when steps chain: then no ref of its own (git/session-chain.ts)
  const commits: RecordCommit[] = [
    { ref: cpRef, mark: 1, parent: t.head, message: cpMessage, changes, inChain: true },
  ];
  const step = t.outcome === 'deny' ? null : stepOf(p, t, cpId);
  const { chainOn, stepCommit } = await import('../git/session-chain.js');
  const chained = chainOn();
  const result = step && t.results ? resultCommit(t.results, { cpId, branch: step.ref }) : null;
  if (result) commits.push(result);
  // the step is indexed before it is written, by its ref's name; a chained step has no ref: its
  // entries name its commit once the import told it (killed in between: rebuilt from the chain).
  // The entries it made first, its link witnesses (git/session-index.ts)
  const witness = step ? await noteStep(p, t, step.ref, step) : [];
  if (step)
    commits.push({
      ...{ ref: step.ref, chain: true, parent: ':1', message: step.message, changes: [] },
      ...(result ? { merges: [`:${RESULT_MARK}`] } : {}),
      witness,
    });
  faultPoint('hook:before-record');
  await writeRecords(repo.root, [...commits, ...p.records], now);
  faultPoint('hook:after-record');
  if (step && chained) await settleStep(p, t, { ref: step.ref, commit: stepCommit(step.ref) });
  return { id: cpId, commit: cpRef };
}

/**
 * What the write leaves: the checkpoint's tree with the call's results, the step's second parent
 * (so gc keeps it as long as the step), built on the step's branch (no scratch ref) or, chained,
 * the chain's. The background check reads `STEP^2:PATH`.
 */
function resultCommit(
  results: NonNullable<PathsTarget['results']>,
  x: { cpId: string; branch: string },
): RecordCommit {
  return {
    mark: RESULT_MARK,
    parent: ':1',
    branch: x.branch,
    inChain: true,
    message: `guard: what a hook write leaves, before checkpoint ${x.cpId}\n`,
    changes: results.map((f): RecordCommit['changes'][number] =>
      f.content === null
        ? { kind: 'delete', path: f.rel }
        : { kind: 'inline', path: f.rel, mode: f.mode, data: f.content },
    ),
  };
}

function stepOf(p: ApplyPlan<PathsTarget>, t: PathsTarget, cpId: string) {
  const s = t.session;
  const ref = newRef(sessionPrefix(s.harness, s.session), p.now);
  const message = sessionMessage({
    ...{
      harness: s.harness,
      session: s.session,
      toolCall: s.toolCall,
      tool: s.tool,
      phase: 'pre',
      kind: 'write',
    },
    ...{
      checkpoint: cpId,
      paths: t.files.map((f) => f.rel),
      worktree: p.repo.root,
      time: p.now.toISOString(),
      outcome: t.outcome,
    },
    ...(t.outcome === 'ask' ? { asked: t.asked ?? [] } : {}),
    ...(t.results ? { result: true } : {}),
  });
  return { ref, message, cpId };
}

/** The write's event as the session index keeps it. */
function indexed(p: ApplyPlan<PathsTarget>, t: PathsTarget) {
  const s = t.session;
  return {
    harness: s.harness,
    session: s.session,
    worktree: p.repo.root,
    paths: t.files.map((f) => f.rel),
    kind: 'write' as const,
    phase: 'pre' as const,
    toolCall: s.toolCall,
    tool: s.tool,
    outcome: t.outcome,
  };
}

/** The write's step in the session index (git/session-index.ts): `commit` its commit, or its ref's name. */
async function noteStep(
  p: ApplyPlan<PathsTarget>,
  t: PathsTarget,
  commit: string,
  step: { ref: string; cpId: string },
): Promise<string[]> {
  const { noteEvent } = await import('../git/session-index.js');
  const at = { commit, checkpoint: step.cpId, time: p.now.toISOString(), ref: step.ref };
  return noteEvent(p.repo, indexed(p, t), at, at);
}

/** The chained step's entries name its commit (git/session-index.ts settleEvent). */
async function settleStep(
  p: ApplyPlan<PathsTarget>,
  t: PathsTarget,
  step: { ref: string; commit: string },
): Promise<void> {
  if (step.commit === step.ref) return;
  const { settleEvent } = await import('../git/session-index.js');
  await settleEvent(p.repo, indexed(p, t), step);
}
