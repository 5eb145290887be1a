import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { classify, makePolicy, type Classification, type Policy } from '../core/classify.js';
import { withAggregateLoss } from '../core/aggregate.js';
import { CONFIG_FILE } from '../core/config.js';
import { batchMessage, decisionRecord, parseRecordMessage, rejectedMessage, type Decision, type DecisionRecord, type RecordContext } from '../core/record.js';
import { hasApprovalTrailer } from '../git/approvals.js';
import { READ_CAP, catFileBatch, type CatResult } from '../git/catfile.js';
import { collectFacts } from '../git/changes.js';
import { faultPoint } from '../git/faults.js';
import { stagedDiffSplit, type DiffEntry } from '../git/diff.js';
import { parseCommit } from '../git/commits.js';
import { REFS, newRef, proposalChanges, writeRecords, type RecordCommit } from '../git/records.js';
import { openRepo, type Repo } from '../git/repo.js';
import { indexTree, stageBlobs, unstagePaths, writeBlob, type IndexEntry } from '../git/staging.js';
import { checkProposedConfig, configAt, laneOf, type FlowOptions } from './context.js';

export interface CheckOptions extends FlowOptions {
  auto: boolean;
}

export interface CheckedFile extends Classification {
  decision: Decision;
  decider: DecisionRecord['decider'];
  strategy?: string;
  ref?: string;
  warning?: string;
  /** The content a strategy made (append, insert, extend): written and staged in place of the proposal. */
  merged?: Buffer;
}

export interface CheckResult {
  command: 'check';
  auto: boolean;
  base: string | null;
  lane: string | null;
  files: CheckedFile[];
  blocked: number;
  rejected: number;
  /** Where the decisions of this run are recorded. */
  record: string | null;
  /** Taken before check changed the index (a rejection unstages). */
  checkpoint?: string;
  /** HEAD was committed without this gate and has changes that needed approval. */
  bypassed?: { commit: string; paths: string[] };
}

/** The trees of the last commits check let through, per work tree (local state, not an audit record). */
const CHECKED_FILE = 'guard-checked-trees';
const CHECKED_KEEP = 50;

async function readCheckedTrees(repo: Repo): Promise<string[]> {
  try {
    return (await readFile(path.join(repo.gitDir, CHECKED_FILE), 'utf8')).split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/** The tree about to be committed (the index as check leaves it), remembered for the bypass check. */
async function rememberCheckedTree(repo: Repo, checked: string[]): Promise<void> {
  const tree = await indexTree(repo.root);
  if (!tree || checked.at(-1) === tree) return;
  const next = [...checked.filter((t) => t !== tree), tree].slice(-CHECKED_KEEP);
  await writeFile(path.join(repo.gitDir, CHECKED_FILE), next.join('\n') + '\n').catch(() => {});
}

/**
 * Was HEAD committed past the gate (`--no-verify`, hooks off)? Its tree is not
 * one check let through; then, and only then, its own change is classified
 * (two more git processes) and reported if something in it needed approval.
 * Rebases and cherry-picks also make trees check never saw: the message says so.
 */
async function headBypassed(repo: Repo, head: CatResult | undefined, checked: string[], policy: Policy): Promise<CheckResult['bypassed'] | undefined> {
  if (!head?.data || head.type !== 'commit' || checked.length === 0) return undefined;
  const commit = parseCommit(head.data);
  if (!commit || checked.includes(commit.tree) || commit.parents.length !== 1 || hasApprovalTrailer(commit.message)) return undefined;
  const { treeDiff } = await import('../git/diff.js');
  const entries = await treeDiff(repo.root, commit.parents[0]!, 'HEAD');
  const { facts } = await collectFacts(repo.root, entries, { maxBytes: Math.min(policy.config.maxFileBytes, READ_CAP) });
  const paths = withAggregateLoss(facts.map((f) => classify(f, policy)), policy.config).filter((c) => c.needsApproval).map((c) => c.path);
  if (paths.length === 0) return undefined;
  return { commit: head.oid, paths };
}


/**
 * Gate the staged changes against HEAD. A constant number of git processes
 * however many files are staged: rev-parse, diff --raw and diff --numstat,
 * two cat-file batches, fast-import and write-tree (plus update-index and a
 * checkpoint only when a person rejects or merges).
 */
export async function check(opts: CheckOptions): Promise<CheckResult> {
  const approvedRecord = process.env.GUARD_APPROVED_RECORD;
  // Four processes at once: rev-parse, the two halves of the staged diff (raw
  // and numstat), the config. Paths from `diff` are relative to the top of the
  // work tree wherever it runs; a failure names the first problem.
  const diff = stagedDiffSplit(opts.cwd);
  const [opened, diffed, objects] = await Promise.allSettled([
    openRepo(opts.cwd),
    diff.entries,
    catFileBatch(opts.cwd, ['HEAD', `HEAD:${CONFIG_FILE}`, ...(approvedRecord ? [approvedRecord] : [])], READ_CAP),
  ]);
  for (const r of [opened, diffed, objects]) if (r.status === 'rejected') throw r.reason;
  const repo = (opened as PromiseFulfilledResult<Repo>).value;
  const entries = (diffed as PromiseFulfilledResult<DiffEntry[]>).value;
  const [head, configBlob, approvedBy] = (objects as PromiseFulfilledResult<Awaited<ReturnType<typeof catFileBatch>>>).value;
  const cwd = repo.root;
  const base = head && head.type === 'commit' ? head.oid : null;
  const config = configAt('HEAD', configBlob?.data);
  const policy = makePolicy(config, { bootstrap: configBlob === null });
  const { facts } = await collectFacts(cwd, entries, { maxBytes: Math.min(config.maxFileBytes, READ_CAP), countsReady: diff.counts, whitespace: { range: ['--cached'], changeRatio: config.changeRatio } });
  // A broken config must not get past the gate: once committed, it is the policy.
  checkProposedConfig(facts.find((f) => f.path === CONFIG_FILE && f.newMode !== null)?.newText, 'staged');
  const classified = withAggregateLoss(facts.map((f) => classify(f, policy)), config);
  const lane = laneOf(cwd);
  const checked = await readCheckedTrees(repo);

  const files: CheckedFile[] = classified.map((c) => ({ ...c, decision: 'allowed', decider: 'policy' }));
  const approved = approvalsIn(approvedBy?.data);
  for (const [i, f] of files.entries()) {
    if (f.needsApproval && approved.has(`${f.path}\0${entries[i]!.newOid ?? ''}`)) {
      Object.assign(f, { decision: 'approved', decider: 'person', strategy: 'review' });
    }
  }
  const pending = files.filter((f) => f.needsApproval && f.decision === 'allowed');
  const interactive = !opts.auto && pending.length > 0 ? await openPrompt(opts.color) : null;
  if (interactive) {
    opts.deadline?.disarm(); // --timeout bounds guard's work, not a person's thinking
    try {
      await askEach(interactive, pending, repo, entries, config.preview);
    } finally {
      interactive.close();
    }
  } else {
    for (const f of pending) Object.assign(f, { decision: 'blocked', decider: 'auto' });
  }

  const now = opts.now ?? new Date();
  const ctx: RecordContext = { command: 'check', lane, time: now.toISOString(), base };
  const byPath = new Map(entries.map((e) => [e.path, e]));
  const commits: RecordCommit[] = [];
  const records: DecisionRecord[] = [];
  // Every change refused in this run goes into ONE rejected commit (parent: the base,
  // tree: the base with all refused proposals): N refusals cost one tree, not N trees
  // of the base's size. `git diff REF^ REF -- PATH` shows one of them.
  const refusedRef = files.some((f) => f.decision === 'blocked' || f.decision === 'rejected') ? newRef(REFS.rejected, now) : null;
  const refused: DecisionRecord[] = [];
  const refusedChanges: RecordCommit['changes'] = [];
  for (const f of files) {
    const e = byPath.get(f.path)!;
    const extra: Partial<DecisionRecord> = {};
    if (e.newOid) extra.blob = e.newOid;
    if (f.merged) extra.blob = (await import('../git/merge.js')).blobId(f.merged);
    if (f.strategy) extra.strategy = f.strategy;
    if (refusedRef && (f.decision === 'blocked' || f.decision === 'rejected')) {
      f.ref = extra.ref = refusedRef;
      refused.push(decisionRecord(f, f.decision, f.decider, extra));
      refusedChanges.push(...proposalChanges(e));
    }
    records.push(decisionRecord(f, f.decision, f.decider, extra));
  }
  if (refusedRef) commits.push({ ref: refusedRef, parent: base, message: rejectedMessage(ctx, refused), changes: refusedChanges });
  const record = newRef(REFS.decisions, now);
  opts.deadline?.pointOfNoReturn(); // past this point guard writes: finish, never stop half way
  // The refs first: once they exist nothing the index change below drops is lost.
  commits.push({ ref: record, parent: null, message: batchMessage(ctx, records), changes: [] });
  const unchangedIndex = !files.some((f) => f.decision === 'rejected' || f.merged !== undefined);
  // Nothing else writes the index: remembering the tree can run beside the records.
  const remembered = unchangedIndex && !files.some((f) => f.decision === 'blocked') ? rememberCheckedTree(repo, checked) : null;
  faultPoint('check:before-records');
  // Nothing staged, nothing decided: no record (an empty one per run would only grow refs/guard/).
  await Promise.all([files.length > 0 ? writeRecords(cwd, commits, now) : null, remembered]);
  faultPoint('check:after-records');

  const result: CheckResult = {
    command: 'check',
    auto: !interactive,
    base,
    lane,
    files,
    blocked: files.filter((f) => f.decision === 'blocked').length,
    rejected: files.filter((f) => f.decision === 'rejected').length,
    record: files.length > 0 ? record : null,
  };
  const unstage = files.filter((f) => f.decision === 'rejected').map((f) => byPath.get(f.path)!);
  const rewrite = files.filter((f) => f.merged !== undefined);
  if (unstage.length > 0 || rewrite.length > 0) {
    const { checkpoint } = await import('../git/checkpoint.js');
    const cp = await checkpoint(repo, { reason: 'before guard check changes the index', command: 'check', lane });
    result.checkpoint = cp.id;
    faultPoint('check:before-unstage');
    if (unstage.length > 0) await unstagePaths(cwd, unstage);
    if (rewrite.length > 0) await stageMerged(cwd, rewrite, byPath);
  }
  for (const f of files) delete f.merged;
  if (result.blocked === 0 && !remembered) await rememberCheckedTree(repo, checked);
  const bypassed = await headBypassed(repo, head, checked, policy);
  if (bypassed) result.bypassed = bypassed;
  return result;
}

/**
 * A person approved a change with a strategy (append, insert, extend): the
 * merged content is what gets committed. It is staged as a blob; the file on
 * disk is rewritten only when it still holds exactly what was staged, so an
 * edit made after `git add` is never overwritten (it stays unstaged).
 */
async function stageMerged(cwd: string, files: CheckedFile[], byPath: Map<string, DiffEntry>): Promise<void> {
  const { writeFileAtomic } = await import('../worktree/atomic.js');
  const { blobId } = await import('../git/merge.js');
  const { readCurrent } = await import('../worktree/current.js');
  const index: IndexEntry[] = [];
  for (const f of files) {
    const e = byPath.get(f.path)!;
    const mode = e.newMode ?? '100644';
    const oid = await writeBlob(cwd, f.merged!);
    const onDisk = await readCurrent(cwd, f.path);
    if (onDisk !== null && e.newOid !== null && blobId(onDisk.content) === e.newOid) await writeFileAtomic(cwd, f.path, f.merged!, mode);
    index.push({ mode, oid, path: f.path });
  }
  await stageBlobs(cwd, index);
}

/**
 * `guard review --commit` runs `git commit` with GUARD_APPROVED_RECORD naming
 * the decision record it just wrote, so that the hook does not ask the person
 * a second time about exactly the blobs they approved. Only a person's
 * approvals of those exact blobs count.
 */
function approvalsIn(commit: Buffer | undefined): Set<string> {
  const out = new Set<string>();
  if (!commit) return out;
  const text = commit.toString('utf8');
  const rec = parseRecordMessage(text.slice(text.indexOf('\n\n') + 2));
  if (rec?.kind !== 'decisions' || rec.command !== 'review') return out;
  for (const d of rec.decisions ?? []) {
    if (d.decision === 'approved' && d.decider === 'person') out.add(`${d.path}\0${d.blob ?? ''}`);
  }
  return out;
}

type Prompt = Awaited<ReturnType<typeof import('../ui/approval.js').openApprovalPrompt>>;

async function openPrompt(color: boolean): Promise<NonNullable<Prompt> | null> {
  const { openApprovalPrompt } = await import('../ui/approval.js');
  return openApprovalPrompt(color);
}

async function askEach(
  prompt: NonNullable<Prompt>,
  pending: CheckedFile[],
  repo: Repo,
  entries: DiffEntry[],
  preview: { contextLines: number; maxLines: number },
): Promise<void> {
  const { readPatches } = await import('../git/patch.js');
  const byPath = new Map(entries.map((e) => [e.path, e]));
  const texts = (f: CheckedFile) => async () => {
    const e = byPath.get(f.path)!;
    const [oldObj, newObj] = await catFileBatch(repo.root, [e.oldOid ?? 'HEAD^{tree}', e.newOid ?? 'HEAD^{tree}'], READ_CAP);
    return {
      base: e.oldOid ? oldObj?.data?.toString('utf8') ?? '' : '',
      lane: e.newOid ? newObj?.data?.toString('utf8') ?? '' : '',
    };
  };
  const paths = pending.flatMap((f) => (f.oldPath !== undefined ? [f.oldPath, f.path] : [f.path]));
  const patches = await readPatches(repo.root, 'staged', paths, preview.contextLines);
  let quit = false;
  for (const f of pending) {
    if (quit) {
      Object.assign(f, { decision: 'rejected', decider: 'person' });
      continue;
    }
    const answer = await prompt.ask(f, patches.get(f.path) ?? [], preview.maxLines, texts(f));
    if (answer === 'approve') Object.assign(f, { decision: 'approved', decider: 'person', strategy: 'replace' });
    else if (typeof answer === 'object') {
      const { applyStrategy } = await import('../core/strategies.js');
      const t = await texts(f)();
      const r = await applyStrategy(answer.strategy, t.base, t.lane, { path: f.path, ...(answer.insertAt !== undefined ? { insertAt: answer.insertAt } : {}) });
      Object.assign(f, { decision: 'approved', decider: 'person', strategy: r.strategy, merged: Buffer.from(r.content, 'utf8') });
      if (r.warning) f.warning = r.warning;
    } else {
      Object.assign(f, { decision: 'rejected', decider: 'person' });
      if (answer === 'quit') quit = true;
    }
  }
}
