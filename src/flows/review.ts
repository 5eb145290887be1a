import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { withReason, type Classification } from '../core/classify.js';
import { parseDecisions, planFromDecision, type FilePlan, type ScriptedDecision } from '../core/decisions.js';
import { GuardError } from '../core/errors.js';
import type { Hunk } from '../core/hunks.js';
import { batchMessage, decisionRecord, rejectedMessage, type Decider, type Decision, type DecisionRecord, type RecordContext } from '../core/record.js';
import { READ_CAP, catFileBatch } from '../git/catfile.js';
import { checkpoint } from '../git/checkpoint.js';
import type { DiffEntry } from '../git/diff.js';
import { findLane, listLanes, mainRepo, type Lane } from '../git/lanes.js';
import { removeFile, resolveInside, writeFileAtomic } from '../worktree/atomic.js';
import { faultPoint } from '../git/faults.js';
import { lockTree, staleLockNotice } from '../worktree/lock.js';
import { blobId, mergeFile } from '../git/merge.js';
import { stagePaths } from '../git/staging.js';
import { DELETION_BLOB, approvalTrailer } from '../git/approvals.js';
import { commitPaths } from '../git/commits.js';
import { readCurrent } from '../worktree/current.js';
import { readFileDiffs } from '../git/patch.js';
import { REFS, newRef, proposalChanges, writeRecords, type RecordCommit } from '../git/records.js';
import type { Repo } from '../git/repo.js';
import type { FileTexts, ReviewPrompter } from '../ui/review-prompt.js';
import type { FlowOptions } from './context.js';
import { laneChanges } from './lanes.js';

export interface ReviewOptions extends FlowOptions {
  name?: string;
  auto: boolean;
  all: boolean;
  decisionsFile?: string;
  commit?: boolean;
  message?: string;
}

export interface ReviewedFile extends Classification {
  decision: Decision;
  decider: Decider;
  strategy?: string;
  hunks: Array<{ id: string; index: number; header: string }>;
  /** Ids of the hunks taken, when only some were. */
  taken?: string[];
  /** The rejected ref: what was refused (`git diff REF^ REF`). */
  ref?: string;
  /** The main tree got conflict markers for this file. */
  conflict?: boolean;
  /** Blob id written to the main tree (absent for deletions and untouched files). */
  blob?: string;
  warning?: string;
}

export interface ReviewResult {
  command: 'review';
  lane: string;
  base: string;
  /** The lane's state that was reviewed. */
  laneCheckpoint: string | null;
  /** The main tree before the merge: `guard restore` it to undo the review. */
  checkpoint: string | null;
  files: ReviewedFile[];
  merged: number;
  blocked: number;
  rejected: number;
  conflicts: number;
  record: string | null;
  feedback: string | null;
  commit?: string;
  /** --commit was asked for and git commit failed (the merge itself stands, staged). */
  commitFailed?: string;
  cancelled?: boolean;
  warnings: string[];
}

const GITLINK = '160000';
const SYMLINK = '120000';
export const FEEDBACK_FILE = path.join('.guard', 'feedback.md');

interface Work {
  c: Classification;
  e: DiffEntry;
  hunks: Hunk[];
  plan: FilePlan;
  decider: Decider;
  /** Content to write (null: delete the path), decided after plans are made. */
  result?: { content: Buffer | null; mode: string | null; strategy?: string; warning?: string; takenIds?: string[] };
  out: ReviewedFile;
}

function textual(c: Classification, e: DiffEntry): boolean {
  return !c.binary && !c.submodule && e.newMode !== SYMLINK && e.oldMode !== SYMLINK && !c.rules.includes('too-large');
}

async function pickLane(main: Repo, name: string | undefined): Promise<Lane> {
  if (name) return findLane(main, name);
  const lanes = await listLanes(main);
  if (lanes.length === 1) return lanes[0]!;
  if (lanes.length === 0) throw new GuardError('E_NO_LANE', 'there are no lanes to review', 'guard start NAME creates one');
  throw new GuardError('E_USAGE', `name the lane to review (${lanes.map((l) => l.name).join(', ')})`, 'guard review NAME');
}

/**
 * Review a lane against its base and merge what is allowed or approved into
 * the main tree. Order of effects, so that nothing is ever lost:
 * checkpoint the lane; decide; record every decision and keep every refusal
 * as a ref; lock and checkpoint the main tree; write (three-way merged onto
 * what the main tree holds now) and stage; feedback into the lane; commit.
 */
export async function review(opts: ReviewOptions, prompter?: () => Promise<ReviewPrompter | null>): Promise<ReviewResult> {
  const main = await mainRepo(opts.cwd);
  const lane = await pickLane(main, opts.name);
  if (lane.broken) throw new GuardError('E_NO_LANE', `lane "${lane.name}" is broken: its folder is missing`, `guard discard ${lane.name} cleans it up`);
  const scripted = opts.decisionsFile ? await readDecisions(opts.decisionsFile, opts.cwd) : null;
  const lc = await laneChanges(main, lane, { command: 'review', reason: `before guard review of lane ${lane.name}` });
  const { config } = lc;
  const head = lc.head;

  // Hunks of every text file, from one `git diff` of base..lane.
  const textPaths: string[] = [];
  lc.files.forEach((c, i) => {
    const e = lc.entries[i]!;
    if (textual(c, e)) textPaths.push(...(e.oldPath !== undefined ? [e.oldPath, e.path] : [e.path]));
  });
  const { parseHunks } = await import('../core/hunks.js');
  const sections = await readFileDiffs(main.root, [lane.base, head], textPaths, config.preview.contextLines);

  const work: Work[] = lc.files.map((c, i) => {
    const e = lc.entries[i]!;
    const section = sections.get(e.path);
    const hunks = section ? parseHunks(section) : [];
    const out: ReviewedFile = {
      ...c,
      decision: 'allowed',
      decider: 'policy',
      hunks: hunks.map((h) => ({ id: h.id, index: h.index, header: h.header })),
    };
    return { c, e, hunks, plan: { take: 'all' }, decider: 'policy', out };
  });

  // Scripted decisions name paths the lane changed, and hunks those files have.
  const byPath = new Map(work.map((w) => [w.c.path, w]));
  const decided = new Set<Work>();
  for (const d of scripted ?? []) {
    const w = byPath.get(d.path) ?? work.find((x) => x.c.oldPath === d.path);
    if (!w) throw new GuardError('E_USAGE', `the decisions name "${d.path}", which lane ${lane.name} did not change`, `guard review ${lane.name} --json lists the changed paths and their hunks`);
    checkStrategyFits(d, w);
    w.plan = planFromDecision(d, w.hunks);
    w.decider = 'person';
    decided.add(w);
  }

  const contents = contentCache(main.root, work);
  const texts = textsOf(contents);
  const warnings: string[] = [];
  let cancelled = false;
  const pending = work.filter((w) => !decided.has(w) && (w.c.needsApproval || (opts.all && !scripted)));
  const person = !opts.auto && !scripted && pending.length > 0 && prompter ? await prompter() : null;
  if (person) {
    opts.deadline?.disarm(); // --timeout bounds guard's work, not a person's thinking
    try {
      let quit = false;
      for (const w of pending) {
        if (quit) {
          w.plan = { take: 'none', decision: 'rejected' };
          w.decider = 'person';
          continue;
        }
        const decided = await person.decide(w.c, w.hunks, () => texts(w));
        w.decider = 'person';
        if (decided === null) {
          quit = true;
          w.plan = { take: 'none', decision: 'rejected' };
        } else {
          const { quit: stop, ...plan } = decided;
          if (stop) quit = true;
          w.plan = plan;
        }
      }
      // The summary the person confirms says what the merge will do, conflicts included.
      for (const w of work) if (w.result === undefined) await resolvePlan(w, contents);
      const takenFiles = work.filter((w) => !isNone(w.plan));
      const summary = {
        files: work.length,
        taken: takenFiles.length,
        partly: takenFiles.filter((w) => w.result?.takenIds).length,
        left: work.length - takenFiles.length,
        conflicts: 0,
      };
      for (const w of takenFiles) if (await wouldConflict(main.root, w, (await contents(w)).base, lane.name)) summary.conflicts++;
      if (!(await person.confirm(summary))) cancelled = true;
    } finally {
      person.close();
    }
  } else {
    for (const w of pending) {
      if (w.c.needsApproval) {
        w.plan = { take: 'none', decision: 'blocked' };
        w.decider = 'auto';
      }
    }
  }
  if (cancelled) {
    return {
      command: 'review', lane: lane.name, base: lane.base, laneCheckpoint: lc.checkpoint?.id ?? null, checkpoint: null,
      files: work.map((w) => w.out), merged: 0, blocked: 0, rejected: 0, conflicts: 0, record: null, feedback: null, cancelled: true, warnings,
    };
  }

  // What each plan means as content.
  for (const w of work) await resolvePlan(w, contents);

  opts.deadline?.pointOfNoReturn(); // past this point guard writes: finish, never stop half way
  // A path the main tree cannot take without writing outside itself (a folder
  // there is now a symlink leading out) is blocked here, before the refs are
  // made, so that it too is kept as a rejected ref. mergeOne checks again.
  // A symlink the review itself deletes first (the lane turned it into a
  // folder; paths come in git's order, the link before what goes under it)
  // is no reason to block.
  const deleted = new Set<string>();
  for (const w of work) {
    if (isNone(w.plan) || w.result?.content !== null || w.e.oldMode !== SYMLINK) continue;
    const [now, base] = await Promise.all([readCurrent(main.root, w.e.path).catch(() => null), contents(w)]);
    // mergeOne deletes it only when the main tree still holds the base's link
    if (now && base.base && now.mode === SYMLINK && now.content.equals(base.base)) deleted.add(w.e.path);
  }
  const underDeleted = (p: string) => p.split('/').some((_, i, parts) => i > 0 && deleted.has(parts.slice(0, i).join('/')));
  for (const w of work) {
    if (isNone(w.plan) || underDeleted(w.e.path)) continue;
    const escape = await pathEscape(main.root, w.e);
    if (!escape) continue;
    w.plan = { take: 'none', decision: 'blocked' };
    Object.assign(w.out, withReason(w.out, { rule: 'not-written', text: `not written: ${escape}` }));
    warnings.push(`${w.out.path}: not written: ${escape}`);
  }

  // Keep every refusal as a ref before anything is written.
  const now = opts.now ?? new Date();
  const ctx: RecordContext = { command: 'review', lane: lane.name, time: now.toISOString(), base: lane.base };
  const kept: RecordCommit[] = [];
  let mark = 0;
  for (const w of work) {
    const o = w.out;
    o.decision = isNone(w.plan) ? w.plan.decision : w.decider === 'person' ? 'approved' : 'allowed';
    o.decider = w.decider;
    if (w.result?.strategy) o.strategy = w.result.strategy;
    if (w.result?.warning) {
      o.warning = w.result.warning;
      warnings.push(`${o.path}: ${w.result.warning}`);
    }
    if (w.result?.takenIds) o.taken = w.result.takenIds;
    if (isNone(w.plan)) {
      o.ref = newRef(REFS.rejected, now);
      const rec = decisionRecord(w.c, o.decision, w.decider, { ref: o.ref, ...(w.e.newOid ? { blob: w.e.newOid } : {}) });
      kept.push({ ref: o.ref, parent: lane.base, message: rejectedMessage(ctx, rec), changes: proposalChanges(w.e) });
    } else if (o.taken && w.result?.content) {
      // parent: the base with what was taken; the ref: the lane's version. `git diff R^ R` = what was left.
      o.ref = newRef(REFS.rejected, now);
      mark += 1;
      const taken: RecordCommit['changes'] = [{ kind: 'inline', path: w.e.path, mode: w.e.newMode ?? w.e.oldMode ?? '100644', data: w.result.content }];
      if (w.e.oldPath !== undefined) taken.push({ kind: 'delete', path: w.e.oldPath });
      const rec = decisionRecord(w.c, 'rejected', w.decider, { ref: o.ref, hunks: o.taken, ...(w.e.newOid ? { blob: w.e.newOid } : {}) });
      kept.push({ mark, parent: lane.base, message: `guard review: the part of ${w.c.path} that was taken\n`, changes: taken });
      kept.push({ ref: o.ref, parent: `:${mark}`, message: rejectedMessage(ctx, rec), changes: proposalChanges(w.e) });
    }
  }
  await writeRecords(main.root, kept, now);
  faultPoint('review:after-refs');

  // Merge into the main tree.
  const toWrite = work.filter((w) => w.result !== undefined && !isNone(w.plan));
  let cp: string | null = null;
  let merged = 0;
  const staged: string[] = [];
  const late: RecordCommit[] = [];
  if (toWrite.length > 0) {
    const lock = await lockTree(main, `guard review ${lane.name}`);
    const stale = staleLockNotice(lock);
    if (stale) warnings.push(stale);
    faultPoint('review:after-lock');
    try {
      cp = (await checkpoint(main, { reason: `before guard review merges lane ${lane.name}`, command: 'review', lane: lane.name })).id;
      faultPoint('review:after-checkpoint');
      try {
        for (const w of toWrite) {
          try {
            const done = await mergeOne(main.root, w, (await contents(w)).base, lane.name);
            if (done.conflict) w.out.conflict = true;
            else {
              staged.push(...done.paths);
              merged++;
            }
            if (done.blob) w.out.blob = done.blob;
            faultPoint('review:between-files');
          } catch (err) {
            // The main tree cannot take this file as it is now (a folder there
            // became a symlink leading out, or a folder stands where the file
            // goes): never write there; the file is blocked and kept below.
            if (!(err instanceof GuardError) || (err.code !== 'E_PATH_ESCAPE' && err.code !== 'E_USAGE')) throw err;
            w.out.decision = 'blocked';
            Object.assign(w.out, withReason(w.out, { rule: 'not-written', text: `not written: ${err.message}` }));
            warnings.push(`${w.out.path}: not written: ${err.message}`);
            if (!w.out.ref) {
              w.out.ref = newRef(REFS.rejected, now);
              const rec = decisionRecord(w.c, 'blocked', w.decider, { ref: w.out.ref, ...(w.e.newOid ? { blob: w.e.newOid } : {}) });
              late.push({ ref: w.out.ref, parent: lane.base, message: rejectedMessage(ctx, rec), changes: proposalChanges(w.e) });
            }
          }
        }
        faultPoint('review:before-stage');
        await stagePaths(main.root, staged);
      } catch (err) {
        // Some files may be written already: say how to undo them.
        const code = err instanceof GuardError ? err.code : 'E_INTERNAL';
        throw new GuardError(code, `guard review stopped while merging into the main tree: ${(err as Error).message}`, `undo what was written: guard restore ${cp} --staged`);
      }
    } finally {
      await lock.release();
    }
  }
  if (late.length > 0) await writeRecords(main.root, late, now);

  // The decision record, with the blobs as written (what --commit's hook and guard ci compare).
  const records: DecisionRecord[] = work.map((w) => {
    const o = w.out;
    const extra: Partial<DecisionRecord> = {};
    if (o.blob) extra.blob = o.blob;
    if (o.ref) extra.ref = o.ref;
    if (o.strategy) extra.strategy = o.strategy;
    if (o.taken) extra.hunks = o.taken;
    return { ...decisionRecord(w.c, o.decision, o.decider, extra), ...(o.conflict ? { conflict: true } : {}) };
  });
  faultPoint('review:before-record');
  const record = newRef(REFS.decisions, now);
  await writeRecords(main.root, [{ ref: record, parent: null, message: batchMessage(ctx, records), changes: [] }], now);

  const files = work.map((w) => w.out);
  const result: ReviewResult = {
    command: 'review',
    lane: lane.name,
    base: lane.base,
    laneCheckpoint: lc.checkpoint?.id ?? null,
    checkpoint: cp,
    files,
    merged,
    blocked: files.filter((f) => f.decision === 'blocked').length,
    rejected: files.filter((f) => f.decision === 'rejected' || (f.ref !== undefined && f.decision === 'approved')).length,
    conflicts: files.filter((f) => f.conflict).length,
    record,
    feedback: await writeFeedback(lane, files, now),
    warnings,
  };

  if (opts.commit && merged > 0) {
    if (result.conflicts > 0) warnings.push('not committed: resolve the conflicts, then commit');
    else {
      try {
        result.commit = await commitMerge(main.root, opts.message ?? `Merge lane ${lane.name} (guard review)`, work, staged, record);
      } catch (err) {
        if (!(err instanceof GuardError)) throw err;
        // the merge is done and staged; only the commit failed (identity, a hook, signing)
        result.commitFailed = err.message;
        warnings.push(`not committed: ${err.message}; the merge is in the work tree and staged: commit it yourself, or undo it with guard restore ${cp} --staged`);
      }
    }
  }
  return result;
}

function isNone(p: FilePlan): p is { take: 'none'; decision: 'rejected' | 'blocked' } {
  return p.take === 'none';
}

function checkStrategyFits(d: ScriptedDecision, w: Work): void {
  const whole = w.hunks.length === 0;
  if (d.hunks && whole && d.hunks.length > 0) {
    throw new GuardError('E_USAGE', `"${d.path}" has no hunks to pick (binary, symlink, mode or rename only)`, 'approve or reject it whole');
  }
  if (d.strategy && d.strategy !== 'replace' && (w.c.binary || w.c.symlink || w.c.submodule)) {
    throw new GuardError('E_USAGE', `strategy ${d.strategy} cannot merge "${d.path}" (not text)`, 'use replace, or reject it');
  }
}

async function readDecisions(file: string, cwd: string): Promise<ScriptedDecision[]> {
  const p = path.resolve(cwd, file);
  let text: string;
  try {
    text = await readFile(p, 'utf8');
  } catch (err) {
    throw new GuardError('E_USAGE', `cannot read the decisions file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 'pass --decisions a JSON file');
  }
  return parseDecisions(text, file);
}

/** Both sides of a file, read on demand and once, through one cat-file batch for all files. */
interface Contents {
  base: Buffer | null;
  lane: Buffer | null;
}

function contentCache(cwd: string, work: Work[]): (w: Work) => Promise<Contents> {
  let all: Promise<Map<Work, Contents>> | null = null;
  return async (w) => {
    all ??= (async () => {
      const names: string[] = [];
      const at: Array<{ base?: number; lane?: number }> = [];
      for (const x of work) {
        const i: { base?: number; lane?: number } = {};
        if (x.e.oldOid && x.e.oldMode !== GITLINK) i.base = names.push(x.e.oldOid) - 1;
        if (x.e.newOid && x.e.newMode !== GITLINK) i.lane = names.push(x.e.newOid) - 1;
        at.push(i);
      }
      const objs = await catFileBatch(cwd, names, READ_CAP);
      const data = (i: number | undefined) => {
        if (i === undefined) return null;
        const o = objs[i];
        if (!o?.data) throw new GuardError('E_USAGE', `a file of the lane is too large to merge (${o?.size ?? '?'} bytes)`, 'merge it by hand from the lane');
        return o.data;
      };
      return new Map(work.map((x, n) => [x, { base: data(at[n]!.base), lane: data(at[n]!.lane) }]));
    })();
    return (await all).get(w)!;
  };
}

function textsOf(contents: (w: Work) => Promise<Contents>): (w: Work) => Promise<FileTexts> {
  return async (w) => {
    const c = await contents(w);
    return { base: c.base?.toString('utf8') ?? '', lane: c.lane?.toString('utf8') ?? '' };
  };
}

async function resolvePlan(w: Work, contents: (w: Work) => Promise<Contents>): Promise<void> {
  const { plan, e } = w;
  if (plan.take === 'none') return;
  const laneMode = e.newMode;
  if (plan.take === 'all' || (plan.take === 'strategy' && plan.strategy === 'replace')) {
    w.result = { content: (await contents(w)).lane, mode: laneMode, ...(plan.take === 'strategy' ? { strategy: 'replace' } : {}) };
    return;
  }
  const t = await textsOf(contents)(w);
  if (plan.take === 'hunks') {
    const { applyHunks } = await import('../core/hunks.js');
    const hunks = plan.hunks ?? w.hunks;
    if (plan.indices.size === 0) {
      w.plan = { take: 'none', decision: 'rejected' };
      return;
    }
    const all = plan.indices.size === hunks.length;
    const takenIds = hunks.filter((h) => plan.indices.has(h.index)).map((h) => h.id);
    if (all) {
      // every hunk: exactly the lane's version (a deletion deletes)
      w.result = { content: (await contents(w)).lane, mode: laneMode };
      return;
    }
    // Byte for byte: the hunks were read as UTF-8 (invalid bytes became U+FFFD),
    // so their lines are taken again from both sides read as latin1.
    const { relineHunks } = await import('../core/hunks.js');
    const raw = await contents(w);
    const [base, lane] = [raw.base?.toString('latin1') ?? '', raw.lane?.toString('latin1') ?? ''];
    const content = applyHunks(base, relineHunks(hunks, base, lane), plan.indices);
    w.result = { content: Buffer.from(content, 'latin1'), mode: laneMode ?? e.oldMode, takenIds };
    return;
  }
  const { applyStrategy } = await import('../core/strategies.js');
  const r = await applyStrategy(plan.strategy, t.base, t.lane, { path: e.path, ...(plan.insertAt !== undefined ? { insertAt: plan.insertAt } : {}) });
  w.result = { content: Buffer.from(r.content, 'utf8'), mode: laneMode ?? e.oldMode, strategy: r.strategy, ...(r.warning ? { warning: r.warning } : {}) };
}

/** Why a diff entry's paths cannot be written in the main tree, or null when they can. */
async function pathEscape(root: string, e: DiffEntry): Promise<string | null> {
  for (const p of e.oldPath !== undefined ? [e.oldPath, e.path] : [e.path]) {
    try {
      await resolveInside(root, p);
    } catch (err) {
      if (err instanceof GuardError && err.code === 'E_PATH_ESCAPE') return err.message;
      throw err;
    }
  }
  return null;
}

/**
 * Put one approved result into the main tree. If the main tree still holds
 * the base version, the result is written as it is; if it moved on, git's
 * merge-file merges the two with the base as common ancestor. What cannot be
 * merged line by line (a deletion, a rename, binary, symlink) against a main
 * tree that changed the same file is a conflict: the main tree's file is
 * left as it is, and the lane's version stays in the lane and its checkpoint.
 */
async function mergeOne(root: string, w: Work, base: Buffer | null, laneName: string): Promise<{ conflict: boolean; paths: string[]; blob?: string }> {
  const { e } = w;
  const content = w.result!.content;
  const source = e.oldPath ?? e.path;
  const now = await readCurrent(root, source);
  const mainUnchanged = base === null ? now === null : now !== null && now.content.equals(base) && now.mode === e.oldMode;
  const conflict = { conflict: true, paths: [] as string[] };

  if (content === null) {
    if (now === null) return { conflict: false, paths: [source] };
    if (!mainUnchanged) return conflict;
    await removeFile(root, source);
    return { conflict: false, paths: [source] };
  }
  const mode = w.result!.mode ?? now?.mode ?? '100644';
  const blob = blobId(content);
  if (e.oldPath !== undefined) {
    const atTarget = await readCurrent(root, e.path);
    if ((now !== null && !mainUnchanged) || (atTarget !== null && !(atTarget.content.equals(content) && atTarget.mode === mode))) return conflict;
    await writeFileAtomic(root, e.path, content, mode);
    if (now !== null) await removeFile(root, e.oldPath);
    return { conflict: false, paths: [e.oldPath, e.path], blob };
  }
  if (mainUnchanged || (now !== null && now.content.equals(content) && now.mode === mode)) {
    if (!mainUnchanged || now === null || !now.content.equals(content) || now.mode !== mode) await writeFileAtomic(root, e.path, content, mode);
    return { conflict: false, paths: [e.path], blob };
  }
  const lineMergeable = now !== null && !w.c.binary && mode !== SYMLINK && now.mode !== SYMLINK && mode !== GITLINK;
  if (!lineMergeable) return conflict;
  const m = await mergeFile(root, now.content, base ?? Buffer.alloc(0), content, ['main', 'base', `lane ${laneName}`]);
  await writeFileAtomic(root, e.path, m.content, mode);
  if (m.conflicts > 0) return conflict;
  return { conflict: false, paths: [e.path], blob: blobId(m.content) };
}

/** Whether mergeOne would leave this file conflicted, on the main tree as it is now (writes nothing). */
async function wouldConflict(root: string, w: Work, base: Buffer | null, laneName: string): Promise<boolean> {
  const content = w.result?.content;
  if (content === undefined) return false;
  const { e } = w;
  const now = await readCurrent(root, e.oldPath ?? e.path).catch(() => null);
  const mainUnchanged = base === null ? now === null : now !== null && now.content.equals(base) && now.mode === e.oldMode;
  if (mainUnchanged || (content !== null && now !== null && now.content.equals(content))) return false;
  if (e.oldPath !== undefined || content === null) return now !== null;
  if (now === null) return true;
  const mode = w.result!.mode ?? now.mode;
  if (w.c.binary || mode === SYMLINK || now.mode === SYMLINK || mode === GITLINK) return true;
  return (await mergeFile(root, now.content, base ?? Buffer.alloc(0), content, ['main', 'base', `lane ${laneName}`])).conflicts > 0;
}

/** Tell the agent, inside its lane, what was refused and why. */
async function writeFeedback(lane: Lane, files: ReviewedFile[], now: Date): Promise<string | null> {
  const refused = files.filter((f) => f.ref !== undefined || f.conflict);
  const file = path.join(lane.path, FEEDBACK_FILE);
  const lines = [`# guard review of lane ${lane.name}`, '', `${now.toISOString()}`, ''];
  if (refused.length === 0) lines.push('Everything in this lane was taken into the main tree.');
  else {
    lines.push('These changes were not taken into the main tree. The refused content is kept; `git diff REF^ REF` shows it.', '');
    for (const f of refused) {
      const what = f.conflict
        ? 'approved, but it conflicts with changes made in the main tree since this lane started'
        : f.decision === 'blocked'
          ? 'blocked: it needs a person to approve it'
          : f.decision === 'rejected'
            ? 'rejected by the reviewer'
            : `partly taken: hunks ${f.taken?.join(', ')} were taken, the rest was left`;
      lines.push(`- \`${f.path}\` (${f.status}): ${what}`);
      for (const r of f.reasons) lines.push(`  - ${r}`);
      if (f.ref) lines.push(`  - kept as \`${f.ref}\``);
    }
    lines.push('', 'Keep the code that stood there; make smaller, additive changes; never replace code with placeholders like "... existing code ...".');
  }
  // The lane is the agent's: its .guard/ may hold a symlink planted to make guard write
  // elsewhere. Contained, atomic, and a link is replaced, never followed.
  try {
    await writeFileAtomic(lane.path, FEEDBACK_FILE, Buffer.from(lines.join('\n') + '\n'), '100644');
  } catch (err) {
    if (err instanceof GuardError && err.code === 'E_PATH_ESCAPE') return null;
    throw err;
  }
  return file;
}

async function commitMerge(root: string, message: string, work: Work[], staged: string[], record: string): Promise<string> {
  const trailers: string[] = [];
  for (const w of work) {
    if (!w.c.needsApproval || w.out.decision !== 'approved') continue;
    trailers.push(approvalTrailer(w.out.path, w.out.blob ?? DELETION_BLOB));
  }
  const text = message.trimEnd() + (trailers.length ? `\n\n${trailers.join('\n')}\n` : '\n');
  // Only the merged paths are committed (whatever else is staged stays staged).
  // The pre-commit hook's `guard check` honours the approvals of this review's record.
  return commitPaths(root, staged, text, { GUARD_APPROVED_RECORD: record });
}
