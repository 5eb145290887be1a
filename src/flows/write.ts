import { readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import { classify, makePolicy, type ChangeFacts, type Classification } from '../core/classify.js';
import { CONFIG_FILE } from '../core/config.js';
import { GuardError } from '../core/errors.js';
import { countLines, looksBinary } from '../core/lines.js';
import type { PreviewHunk } from '../core/preview.js';
import { batchMessage, decisionRecord, rejectedMessage, type Decision, type DecisionRecord, type RecordContext } from '../core/record.js';
import { MODE, cleanStaleTemps, commitWrite, discardWrite, resolveInside, stageWrite, statOnDisk, type OnDisk, type Staged } from '../worktree/atomic.js';
import { READ_CAP, catFileBatch } from '../git/catfile.js';
import { checkpoint } from '../git/checkpoint.js';
import { assertWritable } from '../git/contain.js';
import { faultPoint } from '../git/faults.js';
import { lockTree, staleLockNotice } from '../worktree/lock.js';
import { REFS, newRef, writeRecords, type RecordCommit } from '../git/records.js';
import { openRepo } from '../git/repo.js';
import { numstatFiles, patchFiles, whitespaceOnlyFiles } from '../git/measure.js';
import type { StrategyAnswer } from '../ui/approval.js';
import { configAt, laneOf, type FlowOptions } from './context.js';

export interface WriteOptions extends FlowOptions {
  /** The file to write, relative to `cwd` or absolute. */
  path: string;
  /** The new content: bytes for a file, the link target for a symlink. */
  content: Buffer;
  auto: boolean;
}

export interface WrittenFile extends Classification {
  decision: Decision;
  decider: DecisionRecord['decider'];
  strategy?: string;
  ref?: string;
  /** The file on disk now holds the new content. */
  written: boolean;
  /** The content was already on disk: nothing to write. */
  unchanged?: boolean;
  /** extend fell back to append, and why. */
  warning?: string;
}

export interface WriteResult {
  command: 'write';
  auto: boolean;
  base: string | null;
  lane: string | null;
  files: WrittenFile[];
  blocked: number;
  rejected: number;
  /** The checkpoint taken before the write: `guard restore` it to undo the write. */
  checkpoint: string | null;
  record: string;
  /** Said on stderr (e.g. a stale lock of a killed guard was taken over). */
  warnings: string[];
}

/** How long a write waits for another guard writing into the same tree. */
const LOCK_WAIT_MS = 10_000;

/**
 * The gate for one write by an agent harness. Classify the new content
 * against the file on disk with check's core and HEAD's committed policy;
 * if it may be written (by policy or by a person), checkpoint the path,
 * then rename the prepared temp file over it. Otherwise nothing is written
 * and the proposal is kept as a rejected ref. Git processes: rev-parse,
 * cat-file, at most one diff, the checkpoint's few, one fast-import.
 */
export async function write(opts: WriteOptions): Promise<WriteResult> {
  const repo = await openRepo(opts.cwd);
  const root = repo.root;
  // relative to the root when relative to cwd, so a refusal names the path the way the person sees it
  const asked = path.isAbsolute(opts.path) ? opts.path : path.relative(root, path.resolve(opts.cwd, opts.path)) || '.';
  const target = await resolveInside(root, asked);
  await assertWritable(root, target.rel);
  const [old, [head, configBlob]] = await Promise.all([
    statOnDisk(target.abs),
    catFileBatch(root, ['HEAD', `HEAD:${CONFIG_FILE}`], READ_CAP),
    cleanStaleTemps(target.abs),
  ]);
  const base = head && head.type === 'commit' ? head.oid : null;
  const config = configAt('HEAD', configBlob?.data);
  const policy = makePolicy(config, { bootstrap: configBlob === null });
  const lane = laneOf(root);

  const oldContent = old === null ? null : old.mode === MODE.symlink ? Buffer.from(await readlink(target.abs, { encoding: 'buffer' })) : await readFile(target.abs);
  const newMode = old?.mode ?? MODE.file;
  let staged = await stageWrite(root, target.rel, opts.content, newMode);
  let committed = false;
  try {
    const facts = await measure(staged, old?.mode ?? null, newMode, oldContent, opts.content, config);
    const c = classify(facts, policy);
    const unchanged = oldContent !== null && oldContent.equals(opts.content);
    const file: WrittenFile = { ...c, decision: 'allowed', decider: 'policy', written: false };
    if (unchanged) file.unchanged = true;

    let personAsked = false;
    if (c.needsApproval) {
      const answer = opts.auto ? null : await askPerson(staged, oldContent !== null, c, config.preview, opts.color, oldContent?.toString('utf8') ?? null, opts.content.toString('utf8'));
      if (answer === null) Object.assign(file, { decision: 'blocked', decider: 'auto' });
      else {
        personAsked = true;
        if (answer === 'approve') Object.assign(file, { decision: 'approved', decider: 'person', strategy: 'replace' });
        else if (typeof answer === 'object') {
          // append / insert / extend: the merged content is what gets written
          const { applyStrategy } = await import('../core/strategies.js');
          const r = await applyStrategy(answer.strategy, oldContent?.toString('utf8') ?? '', opts.content.toString('utf8'), {
            path: target.rel,
            ...(answer.insertAt !== undefined ? { insertAt: answer.insertAt } : {}),
          });
          Object.assign(file, { decision: 'approved', decider: 'person', strategy: r.strategy });
          if (r.warning) file.warning = r.warning;
          await discardWrite(staged);
          staged = await stageWrite(root, target.rel, Buffer.from(r.content, 'utf8'), newMode);
        } else Object.assign(file, { decision: 'rejected', decider: 'person' });
      }
    }

    const now = opts.now ?? new Date();
    const ctx: RecordContext = { command: 'write', lane, time: now.toISOString(), base };
    const extra: Partial<DecisionRecord> = {};
    if (file.strategy) extra.strategy = file.strategy;
    const commits: RecordCommit[] = [];
    const refused = file.decision === 'blocked' || file.decision === 'rejected';
    // A merge strategy writes something other than the proposal: keep the proposal whole too.
    const merged = file.strategy !== undefined && file.strategy !== 'replace';
    if (refused || merged) {
      file.ref = extra.ref = newRef(REFS.rejected, now);
      // parent: the base; tree: the base plus the proposal, so `git diff R^ R` shows it
      commits.push({
        ref: file.ref,
        parent: base,
        message: rejectedMessage(ctx, decisionRecord(c, refused ? file.decision : 'rejected', file.decider, extra)),
        changes: [{ kind: 'inline', path: target.rel, mode: newMode, data: opts.content }],
      });
    }
    const record = newRef(REFS.decisions, now);
    commits.push({ ref: record, parent: null, message: batchMessage(ctx, [decisionRecord(c, file.decision, file.decider, extra)]), changes: [] });

    let cp: string | null = null;
    const warnings: string[] = [];
    if (!refused && !unchanged) {
      // One writer at a time (another guard write or review into this tree), and
      // only over the content that was judged: otherwise the other writer's file
      // would be replaced unjudged and without a checkpoint.
      const lock = await lockTree(repo, `guard write ${target.rel}`, { waitMs: LOCK_WAIT_MS });
      try {
        const stale = staleLockNotice(lock);
        if (stale) warnings.push(stale);
        await sameOnDisk(target.abs, target.rel, old, oldContent);
        // The checkpoint of the path comes before the write, whoever allowed it.
        const [taken] = await Promise.all([
          checkpoint(repo, { reason: `before guard write ${target.rel}`, command: 'write', lane, paths: [target.rel], now }),
          writeRecords(root, commits, now),
        ]);
        cp = taken.id;
        faultPoint('write:after-checkpoint');
        faultPoint('write:before-rename');
        await commitWrite(staged);
        committed = true;
        faultPoint('write:after-rename');
        file.written = true;
      } finally {
        await lock.release();
      }
    } else {
      await writeRecords(root, commits, now);
    }
    return {
      command: 'write',
      auto: !personAsked,
      base,
      lane,
      files: [file],
      blocked: file.decision === 'blocked' ? 1 : 0,
      rejected: file.decision === 'rejected' ? 1 : 0,
      checkpoint: cp,
      record,
      warnings,
    };
  } finally {
    if (!committed) await discardWrite(staged);
  }
}

/** The facts classify needs, with line counts from git's own numstat. */
async function measure(
  staged: Staged,
  oldMode: string | null,
  newMode: string,
  oldContent: Buffer | null,
  newContent: Buffer,
  config: { maxFileBytes: number; changeRatio: number },
): Promise<ChangeFacts> {
  const maxBytes = config.maxFileBytes;
  const binary = (oldContent !== null && looksBinary(oldContent)) || looksBinary(newContent);
  let added = binary ? 0 : countLines(newContent);
  let deleted = 0;
  let numstatBinary = false;
  if (oldContent !== null && !oldContent.equals(newContent)) {
    const n = await numstatFiles(staged.abs, staged.temp);
    numstatBinary = n.binary;
    added = n.added;
    deleted = n.deleted;
  } else if (oldContent !== null) {
    added = 0;
  }
  const isBinary = binary || numstatBinary;
  const facts: ChangeFacts = {
    path: staged.rel,
    oldMode,
    newMode,
    linesAdded: isBinary ? 0 : added,
    linesDeleted: isBinary ? 0 : deleted,
    existingLines: isBinary || oldContent === null ? 0 : countLines(oldContent),
    binary: isBinary,
    contentChanged: oldContent === null || !oldContent.equals(newContent),
  };
  const big = [oldContent, newContent].find((b) => b !== null && b.length > maxBytes);
  if (big) facts.tooLarge = { bytes: big.length };
  if (!isBinary && oldContent !== null && facts.existingLines > 0 && deleted / facts.existingLines >= config.changeRatio && newMode !== MODE.symlink) {
    // A would-be replacement: is it only a reindent? git's -w numstat prints nothing then.
    if (await whitespaceOnlyFiles(staged.abs, staged.temp)) facts.whitespaceOnly = true;
  }
  if (!isBinary && oldContent !== null && oldContent.length <= maxBytes) facts.oldText = oldContent.toString('utf8');
  if (!isBinary && newContent.length <= maxBytes) facts.newText = newContent.toString('utf8');
  return facts;
}

/** null when there is no person to ask (no terminal). */
async function askPerson(
  staged: Staged,
  existed: boolean,
  c: Classification,
  preview: { contextLines: number; maxLines: number },
  color: boolean,
  oldText: string | null,
  newText: string,
): Promise<'approve' | 'reject' | StrategyAnswer | null> {
  const { openApprovalPrompt } = await import('../ui/approval.js');
  const prompt = openApprovalPrompt(color);
  if (!prompt) return null;
  try {
    const hunks = c.binary ? [] : await previewHunks(staged, existed, preview.contextLines);
    const answer = await prompt.ask(c, hunks, preview.maxLines, async () => ({
      base: oldText ?? '',
      lane: newText,
    }));
    if (typeof answer === 'object') return answer;
    return answer === 'approve' ? 'approve' : 'reject';
  } finally {
    prompt.close();
  }
}

async function previewHunks(staged: Staged, existed: boolean, contextLines: number): Promise<PreviewHunk[]> {
  const from = existed ? staged.abs : '/dev/null';
  const { parsePatch } = await import('diff');
  const [patch] = parsePatch(await patchFiles(from, staged.temp, contextLines));
  return (patch?.hunks ?? []).map((h) => ({ ...h, lines: [...h.lines] }));
}

/** The file on disk is still what was judged; another writer got there first otherwise. */
async function sameOnDisk(abs: string, rel: string, judged: OnDisk | null, judgedContent: Buffer | null): Promise<void> {
  const now = await statOnDisk(abs);
  let same = now === null ? judged === null : judged !== null && now.mode === judged.mode;
  if (same && now !== null) {
    const content = now.mode === MODE.symlink ? Buffer.from(await readlink(abs, { encoding: 'buffer' })) : await readFile(abs);
    same = judgedContent !== null && content.equals(judgedContent);
  }
  if (!same) throw new GuardError('E_CHANGED', `${rel} changed on disk while guard was judging the write (another writer?)`, 'nothing was written; run the command again to judge the new content');
}
