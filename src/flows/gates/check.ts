import { classify, type ChangeFacts, type Classification } from '../../core/classify.js';
import { withAggregateLoss } from '../../core/aggregate.js';
import { CONFIG_FILE } from '../../core/config.js';
import { MODE } from '../../core/modes.js';
import {
  everythingRefused,
  decisionRecords,
  plan,
  type Answer,
  type FileOutcome,
  type Plan,
  type PlanFile,
} from '../../core/plan.js';
import {
  approvalKey,
  parseRecordMessage,
  type Decision,
  type DecisionRecord,
  type RecordContext,
} from '../../core/record.js';
import { READ_CAP, catFileBatch, catFileRounds } from '../../git/catfile.js';
import { collectFacts, type FactOptions } from '../../git/changes.js';
import { stagedDiffSplit, type DiffEntry } from '../../git/diff.js';
import {
  REFS,
  decisionBatch,
  newRef,
  proposalChanges,
  rejectedCommit,
  type RecordCommit,
} from '../../git/records.js';
import { openRepo, type Repo } from '../../git/repo.js';
import { leaveTrailers } from '../../git/approval-trailers.js';
import {
  agentTrailers,
  describeOrigin,
  readProvenance,
  stagedOffDisk,
  trailIntact,
  writtenWhileAtWork,
  type Origin,
  type Provenance,
  type Staged,
} from '../../git/provenance.js';
import { findBypass, readVerifiedTip } from './bypass.js';
import { apply, type IndexWrite } from '../../apply/apply.js';
import { checkProposedConfig, laneOf, type FlowOptions } from '../context.js';
import { configFrom, configObject, policyOf, type PolicyRead } from '../../git/policy.js';
import { blobId } from '../../git/blob-id.js';

export interface CheckOptions extends FlowOptions {
  auto: boolean;
}

export interface CheckedFile extends Classification {
  decision: Decision;
  decider: DecisionRecord['decider'];
  strategy?: string;
  /** Ids of the hunks taken, when the person took only some. */
  taken?: string[];
  ref?: string;
  warning?: string;
  /** The agent sessions that wrote this path through guard's hooks (git/provenance); absent: none known. */
  writtenBy?: Origin[];
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
  /** A person refused every staged change: the commit must not be made (it would be empty). */
  refusedAll: boolean;
  /** HEAD was committed without this gate and has changes that needed approval. */
  bypassed?: { commit: string; paths: string[]; base?: string; branch?: string };
}

/**
 * Gate the staged changes against HEAD. A constant number of git processes
 * however many files are staged: rev-parse, diff --raw and diff --numstat,
 * two cat-file batches, fast-import and the branch gate's verified tip (none when the journaled
 * tip is HEAD, the usual case; plus update-index and a
 * checkpoint only when a person rejects or merges).
 */
export async function check(opts: CheckOptions): Promise<CheckResult> {
  const approvedRecord = process.env.GUARD_APPROVED_RECORD;
  const reading = readStaged(opts.cwd, approvedRecord);
  // the blobs first: cat-file is the longest step, the reads below run while it works
  const classifying = startClassifying(reading);
  const { repo, entries, config, head, approvedBy } = await reading.all;
  const cwd = repo.root;
  const base = head && head.type === 'commit' ? head.oid : null;
  // integrity: the branch gate's last verified tip, read beside the gate (a read leaves nothing behind)
  // (HEAD's commit was read: no process when the journaled tip is HEAD)
  const tip = base ? readVerifiedTip(repo, base) : Promise.resolve(null);
  tip.catch(() => {});
  // which agent session wrote each staged path: read beside the measuring (one for-each-ref)
  const staged = stagedPaths(entries);
  const now = opts.now ?? new Date();
  const provenance = readProvenance(repo, staged, now);
  provenance.catch(() => {});
  const classified = await classifying;
  const lane = laneOf(cwd);

  // Answers: a person's approvals made in `guard review --commit`, then the person at the terminal.
  const answers = await reviewAnswers(cwd, {
    record: approvedRecord ? approvedBy : undefined,
    head,
    classified,
    entries,
  });
  const pending = classified.filter((c) => c.needsApproval && !answers.has(c.path));
  // Contents and hunks are read only for the files a person is asked about (askAtCommit fills them in).
  const planFiles = classified.map((c, i): PlanFile => ({
    c,
    hunks: [],
    base: null,
    proposed: null,
    baseMode: entries[i]!.oldMode,
    proposedMode: entries[i]!.newMode,
  }));
  const { own, prov } = !opts.auto
    ? await ownChanges(repo, {
        judge: config.judge,
        pending,
        recent: await provenance,
        staged,
        now,
      })
    : { own: [], prov: await provenance };
  const asked =
    !opts.auto && pending.length > 0
      ? await askAtCommit(repo, {
          entries,
          files: planFiles,
          pending,
          own,
          prov,
          contextLines: config.preview.contextLines,
          color: opts.color,
          answers,
          disarm: () => opts.deadline?.disarm(),
        })
      : false;

  const planned = await plan('check', planFiles, answers);
  const result = await applyCheck(opts, {
    repo,
    base,
    lane,
    entries,
    classified,
    planned,
    asked,
    prov,
  });
  // integrity: measured from the last tip the branch gate verified (refs/guard/verified/), not from a
  // file or a message. Judged after the gate, never beside it: it may record a verified tip, and a
  // check that stops (a timeout, Ctrl-C) must leave no ref behind.
  const bypassed = await findBypass(repo, base, await tip);
  if (bypassed) result.bypassed = bypassed;
  return result;
}

/**
 * The staged changes classified, started once the staged list and the top of the work tree are
 * known: cat-file reads the blobs while the policy is still being read.
 */
function startClassifying(reading: ReturnType<typeof readStaged>): Promise<Classification[]> {
  const classifying = Promise.all([reading.entries, reading.repo]).then(([entries, repo]) =>
    classifyStaged(repo.root, {
      entries,
      counts: reading.diff.counts,
      policy: reading.all.then(({ config, policy }) => ({ config, policy })),
      read: reading.blobs,
    }),
  );
  // a failure is reported by `reading.all`, awaited first
  classifying.catch(() => {});
  return classifying;
}

/** Each staged path with the blob staged for it; a rename's old path with none. */
function stagedPaths(entries: DiffEntry[]): Array<{ path: string; oid: string | null }> {
  return entries.flatMap((e) => [
    { path: e.path, oid: e.newOid },
    ...(e.oldPath !== undefined && e.oldPath !== e.path ? [{ path: e.oldPath, oid: null }] : []),
  ]);
}

/** The staged changes measured and classified; a staged config that would not load is refused here. */
async function classifyStaged(
  cwd: string,
  {
    entries,
    counts,
    policy: reading,
    read,
  }: {
    entries: DiffEntry[];
    counts: ReturnType<typeof stagedDiffSplit>['counts'];
    /** The policy at HEAD, read while cat-file already reads the blobs. */
    policy: Promise<Pick<PolicyRead, 'config' | 'policy'>>;
    /** The blobs' read: the second round of the policy's cat-file (readStaged). */
    read: FactOptions['read'];
  },
): Promise<Classification[]> {
  // classified as each file's blobs are read, while cat-file still reads the others
  const early: Classification[] = [];
  const settings = reading.then(({ config, policy }) => ({
    maxBytes: Math.min(config.maxFileBytes, READ_CAP),
    whitespace: { range: ['--cached'], changeRatio: config.changeRatio },
    early: (f: ChangeFacts, i: number) => (early[i] = classify(f, policy)),
  }));
  // (until the config is read, objects are held up to READ_CAP: the most guard holds before it knows maxFileBytes)
  const { facts } = await collectFacts(
    cwd,
    entries,
    { maxBytes: READ_CAP, countsReady: counts, read },
    settings,
  );
  const { config, policy } = await reading;
  // A broken config must not get past the gate: once committed, it is the policy.
  checkProposedConfig(
    facts.find((f) => f.path === CONFIG_FILE && f.newMode !== null)?.newText,
    'staged',
  );
  return withAggregateLoss(
    facts.map((f, i) => early[i] ?? classify(f, policy)),
    config,
  );
}

/**
 * Three processes at once: the two halves of the staged diff (raw and numstat), and one cat-file
 * that reads the config (with HEAD and the review's record) at once and the staged blobs once
 * the raw diff names them (`blobs`, catFileRounds). Paths from `diff` are relative to the top of
 * the work tree wherever it runs; a failure names the first problem (`all`).
 */
function readStaged(cwd: string, approvedRecord: string | undefined) {
  const diff = stagedDiffSplit(cwd);
  const repo = openRepo(cwd);
  const cat = catFileRounds(
    cwd,
    [configObject('HEAD'), 'HEAD', ...(approvedRecord ? [approvedRecord] : [])],
    READ_CAP,
  );
  // no blobs to read when the staged list or the work tree cannot be read: cat-file is let go
  Promise.all([diff.entries, repo]).catch(() => cat.none());
  const policy = cat.first.then((read) => policyOf(configFrom('HEAD', read)));
  for (const p of [repo, diff.entries, policy]) p.catch(() => {});
  const all = Promise.allSettled([repo, diff.entries, policy]).then(([opened, diffed, objects]) => {
    for (const r of [opened, diffed, objects]) if (r.status === 'rejected') throw r.reason;
    const {
      config,
      policy,
      also: [head, approvedBy],
    } = (objects as PromiseFulfilledResult<PolicyRead>).value;
    return {
      repo: (opened as PromiseFulfilledResult<Repo>).value,
      entries: (diffed as PromiseFulfilledResult<DiffEntry[]>).value,
      config,
      policy,
      head,
      approvedBy,
    };
  });
  return { diff, repo, entries: diff.entries, all, blobs: cat.rest };
}

/** The approvals a person made in `guard review --commit` (its decision record), as answers by path. */
async function reviewAnswers(
  cwd: string,
  {
    record,
    head,
    classified,
    entries,
  }: {
    record: PolicyRead['also'][number] | undefined;
    head: PolicyRead['also'][number] | undefined;
    classified: Classification[];
    entries: DiffEntry[];
  },
): Promise<Map<string, Answer>> {
  const answers = new Map<string, Answer>();
  // integrity: only a record guard wrote for a review, reachable from refs/guard/decisions/, made after HEAD
  const trusted = record
    ? await (
        await import('../../git/person-approvals.js')
      ).trustedReviewRecord(cwd, record.oid ?? '', commitTime(head?.data))
    : null;
  const approved = approvalsIn(trusted ? record?.data : undefined);
  classified.forEach((c, i) => {
    if (
      c.needsApproval &&
      approved.has(approvalKey(c.path, entries[i]!.newOid, entries[i]!.newMode))
    )
      answers.set(c.path, { take: 'all', via: 'review' });
  });
  return answers;
}

interface Checked {
  repo: Repo;
  base: string | null;
  lane: string | null;
  entries: DiffEntry[];
  classified: Classification[];
  planned: Plan;
  asked: boolean;
  prov: Provenance;
}

interface OwnChangesInput {
  judge: 'all' | 'agents';
  pending: readonly Classification[];
  recent: Provenance;
  staged: readonly Staged[];
  now: Date;
}

/**
 * With `judge: agents`, the changes a person committing at the terminal
 * made themselves: no hooked agent session wrote the path (nor the old
 * path of a rename), no agent's shell call is running now (the commit may be
 * that call), the sessions' trail is whole (no session ref removed or moved
 * behind guard's back: its journal says) and guard's net reports no problem,
 * no merge, cherry-pick, revert, rebase or squash is bringing commits from
 * elsewhere, what is staged is what is on disk (an index-only change is
 * out of every shell call's sight), and the path is not protected (a
 * routine edit, not the gate's own files or a workflow). They pass unasked
 * once a terminal opens; without one, they are judged like everything else.
 */
async function ownChanges(
  repo: Repo,
  { judge, pending, recent, staged, now }: OwnChangesInput,
): Promise<{ own: Classification[]; prov: Provenance }> {
  const candidates = (p: Provenance) =>
    p.agentRunning
      ? []
      : pending.filter(
          (c) =>
            !c.protected &&
            !p.origins.has(c.path) &&
            !(c.oldPath !== undefined && p.origins.has(c.oldPath)),
        );
  if (judge !== 'agents' || candidates(recent).length === 0) return { own: [], prov: recent };
  // the whole trail, not only the recent days: an agent's write of a month ago may be what is staged
  const prov = await readProvenance(repo, staged, now, null);
  const own = candidates(prov);
  if (own.length === 0) return { own, prov };
  const { integrityProblems } = await import('../doctor/integrity.js');
  const stagedOid = new Map(staged.map((s) => [s.path, s.oid]));
  const onDisk = own.flatMap((c) => [
    { path: c.path, oid: stagedOid.get(c.path) ?? null },
    ...(c.oldPath !== undefined && c.oldPath !== c.path ? [{ path: c.oldPath, oid: null }] : []),
  ]);
  const [intact, problems, bringing, off, atWork] = await Promise.all([
    trailIntact(repo.commonDir, prov, now),
    integrityProblems(repo.commonDir),
    bringsCommits(repo.gitDir),
    stagedOffDisk(repo.root, onDisk),
    writtenWhileAtWork(
      repo.root,
      own.map((c) => c.path),
      prov.spans,
    ),
  ]);
  // guard's net changed outside guard (refs, hooks, an agent's hook settings): an agent may have written unseen
  if (!intact || problems.length > 0 || bringing) return { own: [], prov };
  // written while a session was at work (between two of its write calls, by a tool guard does not see): the prompt says whose
  for (const [p, o] of atWork) prov.origins.set(p, [...(prov.origins.get(p) ?? []), o]);
  // staged but not on disk: made in the index, where no shell call's window looks (git apply --cached)
  return {
    own: own.filter(
      (c) =>
        !atWork.has(c.path) && !off.has(c.path) && !(c.oldPath !== undefined && off.has(c.oldPath)),
    ),
    prov,
  };
}

/** A merge, cherry-pick, revert or rebase in progress, or a squash merge's message: the index holds commits from elsewhere, not the person's own edits. */
async function bringsCommits(gitDir: string): Promise<boolean> {
  const { stat } = await import('node:fs/promises');
  const names = [
    'MERGE_HEAD',
    'CHERRY_PICK_HEAD',
    'REVERT_HEAD',
    'SQUASH_MSG',
    'rebase-merge',
    'rebase-apply',
  ];
  const found = await Promise.all(
    names.map((n) =>
      stat(`${gitDir}/${n}`).then(
        () => true,
        () => false,
      ),
    ),
  );
  return found.some(Boolean);
}

/**
 * Past the plan: keep the refusals and the record, then (only when a person
 * rejected or merged something) checkpoint and change the index. All of it
 * through apply, the one place that passes the point of no return.
 */
async function applyCheck(
  opts: CheckOptions,
  { repo, base, lane, entries, classified, planned, asked, prov }: Checked,
): Promise<CheckResult> {
  const files: CheckedFile[] = planned.files.map((o, i) =>
    toChecked(classified[i]!, o, writtenBy(prov, classified[i]!)),
  );
  const now = opts.now ?? new Date();
  const ctx: RecordContext = { command: 'check', lane, time: now.toISOString(), base };
  const byPath = new Map(entries.map((e) => [e.path, e]));
  const { commits, records } = await recordsOf(planned, { classified, files, byPath, ctx, now });
  // the audit trail names the agent sessions that wrote each path
  const by = new Map(files.map((f) => [f.path, f.writtenBy]));
  for (const r of records) {
    const w = by.get(r.path);
    if (w) r.writtenBy = w;
  }
  const batch = decisionBatch(ctx, records, now);
  const record = batch.ref!;
  commits.push(batch);
  const unstage = files.filter((f) => f.decision === 'rejected').map((f) => byPath.get(f.path)!);
  const stage = planned.files
    .filter((o) => o.action === 'write')
    .map((o) => staged(o, byPath.get(o.path)!));
  const { checkpoint: taken } = await apply({
    gate: 'check',
    repo,
    now,
    deadline: opts.deadline,
    // Nothing staged, nothing decided: no record (an empty one per run would only grow refs/guard/).
    records: files.length > 0 ? commits : [],
    target: {
      kind: 'index',
      checkpoint: { reason: 'before guard check changes the index', command: 'check', lane },
      unstage,
      stage,
    },
  });

  const result: CheckResult = {
    command: 'check',
    auto: !asked,
    base,
    lane,
    files,
    blocked: files.filter((f) => f.decision === 'blocked').length,
    rejected: files.filter((f) => f.decision === 'rejected').length,
    record: files.length > 0 ? record : null,
    refusedAll: asked && everythingRefused(planned),
  };
  if (taken) result.checkpoint = taken.id;
  await leaveTrailers(
    repo.gitDir,
    await approvedByPerson(planned, classified, byPath),
    agentTrailers(prov.origins),
  );
  return result;
}

interface CheckRecordsInput {
  classified: Classification[];
  files: CheckedFile[];
  byPath: Map<string, DiffEntry>;
  ctx: RecordContext;
  now: Date;
}

/**
 * The decision records, and ONE rejected commit for every proposal this run
 * keeps (refused, or beside a merged or partial result): parent the base,
 * tree the base with all of them, so N refusals cost one tree, not N trees of
 * the base's size. `git diff REF^ REF -- PATH` shows one of them.
 */
async function recordsOf(
  planned: Plan,
  { classified, files, byPath, ctx, now }: CheckRecordsInput,
): Promise<{ commits: RecordCommit[]; records: DecisionRecord[] }> {
  const blobs = new Map<string, string>();
  const modes = new Map<string, string | null>();
  for (const o of planned.files) {
    const e = byPath.get(o.path)!;
    if (e.newOid) blobs.set(o.path, e.newOid);
    if (o.action === 'write' && o.content) blobs.set(o.path, blobId(o.content, 'sha1'));
    modes.set(o.path, e.newMode);
  }
  const keep = planned.files.filter((o) => o.keep !== null);
  const ref = keep.length > 0 ? newRef(REFS.rejected, now) : null;
  const refs = new Map(keep.map((o) => [o.path, ref!]));
  files.forEach((f) => {
    if (refs.has(f.path)) f.ref = ref!;
  });
  const records = decisionRecords(planned, classified, { refs, blobs, modes });
  if (!ref) return { commits: [], records };
  const kept = records
    .filter((r) => refs.has(r.path))
    .map((r) => (r.decision === 'blocked' ? r : { ...r, decision: 'rejected' as const }));
  const changes = keep.flatMap((o) => proposalChanges(byPath.get(o.path)!));
  return { commits: [rejectedCommit(ctx, { kept, ref, parent: ctx.base, changes })], records };
}

/**
 * A person approved a change with a strategy (append, insert, extend) or took
 * some of its hunks: the result is what gets committed, staged as a blob. For
 * a strategy the file on disk gets it too while it still holds what was
 * staged; for some hunks the work tree keeps the whole change (as with `git add -p`).
 */
function staged(o: FileOutcome, e: DiffEntry): IndexWrite {
  return {
    path: o.path,
    mode: o.mode ?? e.newMode ?? MODE.file,
    content: o.content!,
    worktreeIfHolds: o.strategy === 'hunks' ? null : e.newOid,
  };
}

/**
 * What a person approved at this prompt (not what review --commit handed in, which wrote its own
 * trailers): path, the blob staged for it and its mode, for the commit's Guard-Approved: trailers.
 */
async function approvedByPerson(
  planned: Plan,
  classified: Classification[],
  byPath: Map<string, DiffEntry>,
): Promise<Array<{ path: string; blob: string | null; mode: string | null }>> {
  const approved = planned.files.filter(
    (o, i) =>
      classified[i]!.needsApproval &&
      o.decision === 'approved' &&
      o.decider === 'person' &&
      o.strategy !== 'review',
  );
  if (approved.length === 0) return [];
  // a strategy or some hunks: what was staged is the result, not what the agent proposed
  return approved.map((o) => ({
    path: o.path,
    blob:
      (o.action === 'write' && o.content
        ? blobId(o.content, 'sha1')
        : byPath.get(o.path)!.newOid) ?? null,
    mode: o.mode ?? byPath.get(o.path)!.newMode,
  }));
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
    if (d.decision === 'approved' && d.decider === 'person')
      out.add(approvalKey(d.path, d.blob, d.mode));
  }
  return out;
}

function writtenBy(prov: Provenance, c: Classification): Origin[] | undefined {
  const list = [
    ...(prov.origins.get(c.path) ?? []),
    ...(c.oldPath !== undefined && c.oldPath !== c.path ? (prov.origins.get(c.oldPath) ?? []) : []),
  ];
  return list.length > 0 ? list : undefined;
}

function toChecked(c: Classification, o: FileOutcome, by: Origin[] | undefined): CheckedFile {
  const f: CheckedFile = { ...c, decision: o.decision, decider: o.decider };
  if (by) f.writtenBy = by;
  if (o.strategy) f.strategy = o.strategy;
  if (o.taken) f.taken = o.taken;
  if (o.warning) f.warning = o.warning;
  return f;
}

interface AskAtCommitInput {
  entries: DiffEntry[];
  files: PlanFile[];
  pending: Classification[];
  own: readonly Classification[];
  prov: Provenance;
  contextLines: number;
  color: boolean;
  answers: Map<string, Answer>;
  disarm: () => void;
}

/**
 * Ask the person at the terminal about each change that needs approval;
 * false when there is none. Reads both sides and the hunks of only those
 * files (one cat-file batch, one git diff). `q` leaves the rest unanswered
 * (blocked, as without a terminal); Ctrl-C throws E_ABORTED: nothing recorded.
 */
async function askAtCommit(
  repo: Repo,
  { entries, files, pending, own, prov, contextLines, color, answers, disarm }: AskAtCommitInput,
): Promise<boolean> {
  const { openFilePrompt, askAboutFiles } = await import('../ask.js');
  const prompt = await openFilePrompt({
    color,
    root: repo.root,
    title: (name) => `guard: ${name} needs approval`,
  });
  if (!prompt) return false;
  disarm(); // --timeout bounds guard's work, not a person's thinking
  // a person is here: their own changes pass (config judge: agents), the rest is asked
  for (const c of own) answers.set(c.path, { take: 'all', via: 'own' });
  pending = pending.filter((c) => !own.includes(c));
  try {
    const { readFileDiffs } = await import('../../git/patch.js');
    const { parseHunks } = await import('../../core/hunks.js');
    const at = new Map(files.map((f, i) => [f.c.path, i]));
    const names = pending.flatMap((c) => {
      const e = entries[at.get(c.path)!]!;
      return [e.oldOid ?? 'HEAD^{tree}', e.newOid ?? 'HEAD^{tree}'];
    });
    const [objects, sections] = await Promise.all([
      catFileBatch(repo.root, names, READ_CAP),
      readFileDiffs(
        repo.root,
        'staged',
        pending.flatMap((c) => (c.oldPath !== undefined ? [c.oldPath, c.path] : [c.path])),
        contextLines,
      ),
    ]);
    pending.forEach((c, n) => {
      const i = at.get(c.path)!;
      const e = entries[i]!;
      const text = !c.binary && !c.symlink && !c.submodule;
      const section = text ? sections.get(c.path) : undefined;
      files[i] = {
        ...files[i]!,
        base: e.oldOid ? (objects[2 * n]?.data ?? null) : null,
        proposed: e.newOid ? (objects[2 * n + 1]?.data ?? null) : null,
        hunks: section ? parseHunks(section) : [],
      };
    });
    const asked = pending.map((c) => {
      const by = writtenBy(prov, c)?.map(describeOrigin);
      return { f: files[at.get(c.path)!]!, c, ...(by ? { writtenBy: by } : {}) };
    });
    await askAboutFiles(prompt, asked, answers);
  } finally {
    prompt.close();
  }
  return true;
}
