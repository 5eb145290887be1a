import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { classify, makePolicy, type Classification, type Policy } from '../core/classify.js';
import { CONFIG_FILE } from '../core/config.js';
import { batchMessage, decisionRecord, parseRecordMessage, rejectedMessage, type Decision, type DecisionRecord, type RecordContext } from '../core/record.js';
import { READ_CAP, catFileBatch } from '../git/catfile.js';
import { collectFacts } from '../git/changes.js';
import { faultPoint } from '../git/faults.js';
import { stagedDiffSplit, type DiffEntry } from '../git/diff.js';
import { REFS, ZERO_OID, newRef, proposalChanges, writeRecords, type RecordCommit } from '../git/records.js';
import { openRepo, type Repo } from '../git/repo.js';
import { checkDeadline, git, setDeadline } from '../git/run.js';
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
  bypassed?: { commit: string; paths: string[]; base?: string; branch?: string };
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
  const r = await git(['write-tree'], { cwd: repo.root, okCodes: [128] });
  const tree = r.stdout.toString().trim();
  if (r.code !== 0 || !tree || checked.at(-1) === tree) return;
  const next = [...checked.filter((t) => t !== tree), tree].slice(-CHECKED_KEEP);
  await writeFile(path.join(repo.gitDir, CHECKED_FILE), next.join('\n') + '\n').catch(() => {});
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
  const { facts } = await collectFacts(cwd, entries, { maxBytes: Math.min(config.maxFileBytes, READ_CAP), countsReady: diff.counts });
  // A broken config must not get past the gate: once committed, it is the policy.
  checkProposedConfig(facts.find((f) => f.path === CONFIG_FILE && f.newMode !== null)?.newText, 'staged');
  const classified = facts.map((f) => classify(f, policy));
  const lane = laneOf(cwd);
  const checked = await readCheckedTrees(repo);

  const files: CheckedFile[] = classified.map((c) => ({ ...c, decision: 'allowed', decider: 'policy' }));
  // integrity: only a record guard wrote for a review, reachable from refs/guard/decisions/, made after HEAD
  const trusted = approvedRecord ? await (await import('../git/person-approvals.js')).trustedReviewRecord(cwd, approvedBy?.oid ?? '', commitTime(head?.data)) : null;
  const approved = approvalsIn(trusted ? approvedBy?.data : undefined);
  for (const [i, f] of files.entries()) {
    if (f.needsApproval && approved.has(`${f.path}\0${entries[i]!.newOid ?? ''}`)) {
      Object.assign(f, { decision: 'approved', decider: 'person', strategy: 'review' });
    }
  }
  const pending = files.filter((f) => f.needsApproval && f.decision === 'allowed');
  const interactive = !opts.auto && pending.length > 0 ? await openPrompt(opts.color) : null;
  if (interactive) {
    setDeadline(undefined); // --timeout bounds guard's work, not a person's thinking
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
  for (const f of files) {
    const e = byPath.get(f.path)!;
    const extra: Partial<DecisionRecord> = {};
    if (e.newOid) extra.blob = e.newOid;
    if (f.merged) extra.blob = (await import('../git/merge.js')).blobId(f.merged);
    if (f.strategy) extra.strategy = f.strategy;
    if (f.decision === 'blocked' || f.decision === 'rejected') {
      f.ref = newRef(REFS.rejected, now);
      extra.ref = f.ref;
      const rec = decisionRecord(f, f.decision, f.decider, extra);
      commits.push({ ref: f.ref, parent: base, message: rejectedMessage(ctx, rec), changes: proposalChanges(e) });
    }
    records.push(decisionRecord(f, f.decision, f.decider, extra));
  }
  const record = newRef(REFS.decisions, now);
  checkDeadline(); // past this point guard writes: finish, never stop half way
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
  // integrity: measured from the last tip the branch gate verified (refs/guard/verified/), not from a file or a message
  const bypassed = await (await import('./bypass.js')).findBypass(repo, base);
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
  const { writeFileAtomic } = await import('../git/atomic.js');
  const { blobId, readCurrent } = await import('../git/merge.js');
  const index: string[] = [];
  for (const f of files) {
    const e = byPath.get(f.path)!;
    const mode = e.newMode ?? '100644';
    const oid = (await git(['hash-object', '-w', '--stdin'], { cwd, input: f.merged!, write: true })).stdout.toString().trim();
    const onDisk = await readCurrent(cwd, f.path);
    if (onDisk !== null && e.newOid !== null && blobId(onDisk.content) === e.newOid) await writeFileAtomic(cwd, f.path, f.merged!, mode);
    index.push(`${mode} ${oid}\t${f.path}`);
  }
  await git(['update-index', '-z', '--index-info'], { cwd, input: index.join('\0') + '\0', write: true });
}

/**
 * `guard review --commit` runs `git commit` with GUARD_APPROVED_RECORD naming
 * the decision record it just wrote, so that the hook does not ask the person
 * a second time about exactly the blobs they approved. Only a person's
 * approvals of those exact blobs count.
 */
/** The committer time (unix seconds) in a raw commit object; 0 without one. */
function commitTime(commit: Buffer | undefined): number {
  const m = commit ? /^committer .* (\d+) [+-]\d{4}$/m.exec(commit.toString('utf8')) : null;
  return m ? Number(m[1]) : 0;
}

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


/**
 * Put the index entries of rejected paths back as they are in HEAD, in one
 * process; the work tree files are not touched.
 * https://git-scm.com/docs/git-update-index#_using_index_info
 *   "<mode> SP <sha1> TAB <path>"; mode 0 removes the entry.
 */
async function unstagePaths(cwd: string, entries: DiffEntry[]): Promise<void> {
  const lines: string[] = [];
  for (const e of entries) {
    if (e.oldPath !== undefined) {
      lines.push(`0 ${ZERO_OID}\t${e.path}`);
      lines.push(`${e.oldMode} ${e.oldOid}\t${e.oldPath}`);
    } else if (e.oldMode && e.oldOid) lines.push(`${e.oldMode} ${e.oldOid}\t${e.path}`);
    else lines.push(`0 ${ZERO_OID}\t${e.path}`);
  }
  await git(['update-index', '-z', '--index-info'], { cwd, input: lines.join('\0') + '\0', write: true });
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
  const patches = await readPatches(repo.root, ['--cached'], paths, preview.contextLines);
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
