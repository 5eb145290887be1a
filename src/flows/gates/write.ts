import { readFile, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { ChangeFacts, Classification } from '../../core/classify.js';
import { changeFacts, heldSide } from '../../core/facts.js';
import { countLines, looksBinary, surelyReplaces } from '../../core/lines.js';
import { MODE } from '../../core/modes.js';
import { NOTEBOOK_PATH, notebookSides } from '../../core/notebook.js';
import type { Hunk } from '../../core/hunks.js';
import {
  decisionRecords,
  plan,
  type Answer,
  type FileOutcome,
  type PlanFile,
} from '../../core/plan.js';
import type { Decision, DecisionRecord, RecordContext } from '../../core/record.js';
import {
  cleanStaleTemps,
  discardWrite,
  resolveInside,
  stageWrite,
  statOnDisk,
  type OnDisk,
  type StagedWrite,
} from '../../worktree/atomic.js';
import { assertWritable } from '../../git/contain.js';
import {
  REFS,
  decisionBatch,
  newRef,
  rejectedCommit,
  type RecordCommit,
} from '../../git/records.js';
import { openRepo, type Repo } from '../../git/repo.js';
import { repositoryFolder, storeElsewhere } from '../../git/discover.js';
import { GuardError } from '../../core/errors.js';
import {
  numstatFiles,
  patchFiles,
  scratchFile,
  whitespaceOnlyFiles,
  withScratchFile,
  type FileNumstat,
} from '../../git/measure.js';
import {
  dayBaseFileStore,
  dayBaseObjects,
  dayBaseOf,
  dayBaseRefs,
  dayBaseStore,
  sessionBase,
  type SessionBase,
} from '../../git/session-base.js';
import { apply, type FileTarget } from '../../apply/apply.js';
import { laneOf, type FlowOptions } from '../context.js';
import { readPolicy } from '../../git/policy.js';

export interface WriteOptions extends FlowOptions {
  /** The file to write, relative to `cwd` or absolute. */
  path: string;
  /** The new content: bytes for a file, the link target for a symlink. */
  content: Buffer;
  auto: boolean;
  /** The agent session (`--session`, else GUARD_SESSION): the base is the file as the session first saw it. */
  session?: string;
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
  /** Ids of the hunks taken, when the person took only some. */
  taken?: string[];
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
 * and the proposal is kept as a rejected ref. Git processes, in three steps
 * (rev-parse only where discovery needs it): the policy's cat-file, which
 * also reads today's base of the file by its name, beside the session's
 * base's for-each-ref and then that base's cat-file (with --session); git's numstat of the
 * write against the disk and against each base that differs from it, all at
 * once, each with its `-b` count when the change would replace most of the
 * file (beside the numstat when no line diff could say otherwise); and one
 * fast-import (the checkpoint, the records, the session step).
 */
export async function write(opts: WriteOptions): Promise<WriteResult> {
  // check's core (and its placeholder patterns) compiles while git answers the calls below
  const judging = import('../../core/classify.js');
  judging.catch(() => {});
  const session = (opts.session ?? process.env.GUARD_SESSION ?? '').trim() || null;
  const t = await openTarget(opts, { session, now: opts.now ?? new Date() });
  const w: Writing = {
    opts,
    t,
    judging,
    session,
    store: dayBaseFileStore(opts.now ?? new Date(), t.root, t.target.rel),
    sessionStart: null,
    dayStart: null,
    staged: await t.staging,
    committed: false,
  };
  try {
    // git's numstat of the write against the disk needs neither the policy nor the bases: it runs beside their reads
    const numstat =
      t.oldContent !== null && !t.oldContent.equals(opts.content)
        ? numstatFiles(w.staged.abs, w.staged.temp)
        : null;
    numstat?.catch(() => {});
    [w.sessionStart, w.dayStart] = await t.bases;
    return await applyWrite(w, await decideWrite(w, numstat));
  } finally {
    if (!w.committed) await discardWrite(w.staged);
  }
}

/** A write under way: what was asked, the target as read, the bases it is measured from, the prepared file (until renamed over the target). */
interface Writing {
  opts: WriteOptions;
  t: Awaited<ReturnType<typeof openTarget>>;
  judging: Promise<typeof import('../../core/classify.js')>;
  session: string | null;
  /** Where today's first write of this file records its base (dayBaseFileStore). */
  store: string;
  sessionStart: SessionBase | null;
  dayStart: SessionBase | null;
  staged: Awaited<ReturnType<typeof stageWrite>>;
  committed: boolean;
}

/** Measure and classify the write, ask a person when one is there and it needs approval, and plan it. */
async function decideWrite(w: Writing, numstat: Promise<FileNumstat> | null) {
  const { staged } = w;
  const { oldContent } = w.t;
  // the numstat against each earlier base that differs from the disk runs beside the disk's
  const against = startAgainst(staged, oldContent, [w.sessionStart, w.dayStart]);
  try {
    return await judgeAndPlan(w, numstat, against.list);
  } finally {
    against.remove();
  }
}

/** decideWrite once git's counts are under way. */
async function judgeAndPlan(w: Writing, numstat: Promise<FileNumstat> | null, against: Against[]) {
  const { opts, t, staged } = w;
  const { old, oldContent, newMode } = t;
  const [
    {
      config,
      policy,
      also: [head],
    },
    { classify },
  ] = await Promise.all([t.atHead, w.judging]);
  const base = head && head.type === 'commit' ? head.oid : null;
  const sides = {
    staged,
    oldMode: old?.mode ?? null,
    newMode,
    oldContent,
    newContent: opts.content,
    config,
  };
  const bases = [
    { start: w.sessionStart, what: `the file as session ${w.session} first saw it` },
    { start: w.dayStart, what: 'the file as guard write first saw it today' },
  ];
  const c = await judgeWrite(sides, {
    classify: (f) => classify(f, policy),
    numstat,
    bases,
    against,
  });
  const file: WrittenFile = { ...c, decision: 'allowed', decider: 'policy', written: false };
  if (oldContent !== null && oldContent.equals(opts.content)) file.unchanged = true;
  const pf: PlanFile = {
    c,
    hunks: [],
    base: oldContent,
    proposed: opts.content,
    baseMode: old?.mode ?? null,
    proposedMode: newMode,
  };
  const answers = new Map<string, Answer>();
  const personAsked =
    c.needsApproval && !opts.auto
      ? await askAboutWrite(staged, pf, {
          contextLines: config.preview.contextLines,
          color: opts.color,
          answers,
          root: t.root,
        })
      : false;
  const o = (await plan('write', [pf], answers)).files[0]!;
  Object.assign(file, { decision: o.decision, decider: o.decider }, pick(o));
  return { c, o, file, base, personAsked };
}

/** Records, the checkpoint and the rename, through apply; what the command reports. */
async function applyWrite(
  w: Writing,
  { c, o, file, base, personAsked }: Awaited<ReturnType<typeof decideWrite>>,
): Promise<WriteResult> {
  const { opts, t } = w;
  const { repo, root, target, old, oldContent, newMode, lane } = t;
  if (o.content && !o.content.equals(opts.content)) {
    // a strategy or some hunks: the result is what gets written
    await discardWrite(w.staged);
    w.staged = await stageWrite(root, target.rel, o.content, newMode);
  }
  const now = opts.now ?? new Date();
  const ctx: RecordContext = { command: 'write', lane, time: now.toISOString(), base };
  const commits = writeRecordsOf({
    c,
    o,
    ctx,
    now,
    rel: target.rel,
    mode: newMode,
    proposal: opts.content,
    file,
  });
  const warnings: string[] = [];
  const touch = { path: target.rel, worktree: root, outcome: file.decision };
  const first = [
    ...(w.session && !w.sessionStart ? [{ id: w.session, ...touch }] : []),
    ...(!w.dayStart ? [{ id: 'today', ...touch, store: w.store }] : []),
  ];
  const ft =
    o.action === 'write'
      ? fileTarget({ target, old, oldContent, staged: w.staged, lane, now, warnings }, first)
      : null;
  const { checkpoint: taken } = await apply({
    gate: 'write',
    repo,
    now,
    deadline: opts.deadline,
    records: commits,
    target: ft,
  });
  if (o.action === 'write') [w.committed, file.written] = [true, true];
  return {
    command: 'write',
    auto: !personAsked,
    base,
    lane,
    files: [file],
    ...{
      blocked: file.decision === 'blocked' ? 1 : 0,
      rejected: file.decision === 'rejected' ? 1 : 0,
    },
    checkpoint: taken?.id ?? null,
    record: commits.at(-1)!.ref!,
    warnings,
  };
}

/** The path asked for, proved inside the work tree and writable, as it is on disk now; the policy at HEAD read beside it. */
async function openTarget(
  opts: WriteOptions,
  { session, now }: { session: string | null; now: Date },
) {
  const repo = await openRepo(opts.cwd);
  await ownRepository(opts.cwd, repo);
  const root = repo.root;
  // relative to the root when relative to cwd, so a refusal names the path the way the person sees it
  const asked = path.isAbsolute(opts.path)
    ? opts.path
    : path.relative(root, path.resolve(opts.cwd, opts.path)) || '.';
  const target = await resolveInside(root, asked);
  await assertWritable(root, target.rel);
  // The file as the session first saw it, and as guard write first saw it today: with a session
  // or without (a fresh --session per call must not make every write its own base), writes add up.
  // Read beside the policy (they need only the path), not after the file is read; today's, named
  // by the file, in the policy's own cat-file (git/session-base.ts).
  const day = dayBaseRefs(repo.commonDir, now, root, target.rel);
  const dayObjects = day === 'list' ? [] : dayBaseObjects(day, target.rel);
  const atHead = readPolicy(root, 'HEAD', { also: ['HEAD', ...dayObjects] });
  atHead.catch(() => {});
  const bases = Promise.all([
    session ? sessionBase(root, session, target.rel, { commonDir: repo.commonDir }) : null,
    day === 'list'
      ? sessionBase(root, 'today', target.rel, { store: dayBaseStore(now) })
      : day.length === 0
        ? null
        : atHead.then((p) => dayBaseOf(root, target.rel, day, p.also.slice(1))),
  ]);
  bases.catch(() => {});
  // the prepared file too (its mode is the file's, as newMode below), so git can measure it once the file is read
  const staging = stageWrite(root, target.rel, opts.content);
  staging.catch(() => {});
  try {
    const [old] = await Promise.all([statOnDisk(target.abs), cleanStaleTemps(target.abs)]);
    const lane = laneOf(root);
    const oldContent =
      old === null
        ? null
        : old.mode === MODE.symlink
          ? Buffer.from(await readlink(target.abs, { encoding: 'buffer' }))
          : await readFile(target.abs);
    const newMode = old?.mode ?? MODE.file;
    return { repo, root, target, atHead, bases, staging, old, oldContent, newMode, lane };
  } catch (err) {
    await staging.then(discardWrite, () => {});
    throw err;
  }
}

/**
 * The repository git answered is the one whose `.git` the folder holds, its refs and objects its
 * own: else the day's base and the checkpoint would be kept elsewhere (GIT_DIR naming a fresh bare
 * repository for each write, GIT_WORK_TREE the real folder: every write a first write of the day,
 * adv5), as the hook refuses (adv3).
 */
async function ownRepository(cwd: string, repo: Repo): Promise<void> {
  const held = repositoryFolder(cwd);
  if (held === null) return;
  const moved =
    (await realpath(repo.root).catch(() => repo.root)) !== held
      ? 'GIT_WORK_TREE'
      : storeElsewhere(held, repo);
  if (moved)
    throw new GuardError(
      'E_UNREADABLE',
      `${path.join(held, '.git')} holds a repository, but ${moved} in the environment (or the repository's config) has git keep this write's records elsewhere`,
      `run guard write without ${moved}`,
    );
}

type WriteSides = Omit<Parameters<typeof measureAgainst>[0], 'base'> & {
  oldContent: Buffer | null;
};

/** The write classified against the file now, and the strictest of that and each earlier base (the session's, today's). */
async function judgeWrite(
  sides: WriteSides,
  how: {
    classify: (f: ChangeFacts) => Classification;
    numstat: Parameters<typeof measure>[0]['numstat'];
    bases: ReadonlyArray<{ start: SessionBase | null; what: string }>;
    against: readonly Against[];
  },
): Promise<Classification> {
  const measuring = measure({ ...sides, rel: sides.staged.rel, numstat: how.numstat });
  // each earlier base that differs from the disk is measured beside it (its numstat already
  // running); its answer is read only where the disk's does not need approval
  const since = how.against.map((a) => {
    const judged = measure({
      ...sides,
      staged: { ...sides.staged, abs: a.file },
      oldMode: sides.oldMode ?? MODE.file,
      oldContent: a.content,
      rel: sides.staged.rel,
      numstat: a.numstat,
    }).then(how.classify);
    judged.catch(() => {});
    return { content: a.content, judged };
  });
  const judgeSince = async (start: Buffer | null) => {
    const ready = start && since.find((x) => x.content.equals(start))?.judged;
    return ready ?? how.classify(await measureAgainst({ ...sides, base: start }));
  };
  return strictestSince(how.classify(await measuring), sides.oldContent, how.bases, judgeSince);
}

/**
 * The file as flows/apply's target: the records (and the rejected ref) always;
 * the file only when the plan writes it. One writer at a time (another guard
 * write or review into this tree), and only over the content that was
 * judged, else E_CHANGED: nothing written or recorded. `first`: the session's
 * first touch of this path, so later writes are measured against this checkpoint.
 */
function fileTarget(
  w: {
    target: { abs: string; rel: string };
    old: OnDisk | null;
    oldContent: Buffer | null;
    staged: StagedWrite;
    lane: string | null;
    now: Date;
    warnings: string[];
  },
  first: NonNullable<FileTarget['session']>,
): FileTarget {
  const { rel } = w.target;
  return {
    kind: 'file',
    checkpoint: {
      reason: `before guard write ${rel}`,
      command: 'write',
      lane: w.lane,
      paths: [rel],
      now: w.now,
    },
    lock: { holder: `guard write ${rel}`, waitMs: LOCK_WAIT_MS },
    warnings: w.warnings,
    staged: w.staged,
    judged: { abs: w.target.abs, rel, old: w.old, content: w.oldContent },
    ...(first.length > 0 ? { session: first } : {}),
  };
}

function pick(o: FileOutcome): Partial<WrittenFile> {
  return {
    ...(o.strategy ? { strategy: o.strategy } : {}),
    ...(o.warning ? { warning: o.warning } : {}),
    ...(o.taken ? { taken: o.taken } : {}),
  };
}

interface WriteRecordsInput {
  c: Classification;
  o: FileOutcome;
  ctx: RecordContext;
  now: Date;
  rel: string;
  mode: string;
  proposal: Buffer;
  file: WrittenFile;
}

/** The rejected ref the plan asks for (the proposal whole: refused, or merged into something else) and the decision record. */
function writeRecordsOf({
  c,
  o,
  ctx,
  now,
  rel,
  mode,
  proposal,
  file,
}: WriteRecordsInput): RecordCommit[] {
  const commits: RecordCommit[] = [];
  const refs = new Map<string, string>();
  if (o.keep !== null) {
    file.ref = newRef(REFS.rejected, now);
    refs.set(c.path, file.ref);
    const rec = decisionRecords({ gate: 'write', files: [o] }, [c], { refs, blobs: new Map() })[0]!;
    // parent: the base; tree: the base plus the proposal, so `git diff R^ R` shows it
    const kept = o.action === 'blocked' ? rec : { ...rec, decision: 'rejected' as const };
    commits.push(
      rejectedCommit(ctx, {
        kept,
        ref: file.ref,
        parent: ctx.base,
        changes: [{ kind: 'inline', path: rel, mode, data: proposal }],
      }),
    );
  }
  commits.push(
    decisionBatch(
      ctx,
      decisionRecords({ gate: 'write', files: [o] }, [c], { refs, blobs: new Map() }),
      now,
    ),
  );
  return commits;
}

interface MeasureInput {
  staged: StagedWrite;
  oldMode: string | null;
  newMode: string;
  oldContent: Buffer | null;
  newContent: Buffer;
  config: { maxFileBytes: number; changeRatio: number };
  /** The path the facts name (the staged file's own by default). */
  rel?: string;
  /** git's numstat of the two, when already started (else it runs here). */
  numstat?: Promise<FileNumstat> | null;
}

/**
 * A notebook's two sides as their cells' sources (core/notebook.ts), as the hook and the gates
 * measure it: its JSON's lines are mostly outputs, among which a notebook emptied of its code
 * was a 9% modify here (adv5). Null for anything else.
 */
function notebookInput(m: MeasureInput): [Buffer, Buffer] | null {
  if (m.oldContent === null || m.newMode === MODE.symlink) return null;
  if (!NOTEBOOK_PATH.test(m.rel ?? m.staged.rel)) return null;
  const sides = notebookSides(m.oldContent.toString('utf8'), m.newContent.toString('utf8'));
  return sides && [Buffer.from(sides[0]), Buffer.from(sides[1])];
}

/** The facts classify needs, with line counts from git's own numstat. */
async function measure(input: MeasureInput): Promise<ChangeFacts> {
  const nb = notebookInput(input);
  if (nb)
    return withScratchFile(nb[0], (from) =>
      withScratchFile(nb[1], (to) =>
        measure({
          ...input,
          staged: { ...input.staged, abs: from, temp: to },
          oldContent: nb[0],
          newContent: nb[1],
          rel: input.rel ?? input.staged.rel,
          numstat: null,
        }),
      ),
    );
  return measureText(input);
}

async function measureText({
  staged,
  oldMode,
  newMode,
  oldContent,
  newContent,
  config,
  rel = staged.rel,
  numstat = null,
}: MeasureInput): Promise<ChangeFacts> {
  const changed = oldContent === null || !oldContent.equals(newContent);
  // git's numstat where both sides exist and differ; a new file's lines are its own
  const counting =
    oldContent !== null && changed ? (numstat ?? numstatFiles(staged.abs, staged.temp)) : null;
  // certain to be a would-be replacement whatever git pairs up: its `-b` count runs beside the numstat
  const early =
    oldContent !== null &&
    changed &&
    newMode !== MODE.symlink &&
    surelyReplaces(oldContent, newContent, config.changeRatio)
      ? whitespaceOnlyFiles(staged.abs, staged.temp)
      : null;
  early?.catch(() => {});
  const n = counting !== null ? await counting : null;
  const facts = changeFacts({
    path: rel,
    oldMode,
    newMode,
    old: heldSide(oldContent),
    new: heldSide(newContent),
    added: n !== null ? n.added : oldContent === null ? countLines(newContent) : 0,
    deleted: n?.deleted ?? 0,
    gitBinary: n?.binary ?? false,
    zeroBinaryCounts: true,
    contentChanged: changed,
    maxBytes: config.maxFileBytes,
  });
  if (
    !facts.binary &&
    oldContent !== null &&
    facts.existingLines > 0 &&
    facts.linesDeleted / facts.existingLines >= config.changeRatio &&
    newMode !== MODE.symlink
  ) {
    // A would-be replacement: is it only a reindent?
    if (await (early ?? whitespaceOnlyFiles(staged.abs, staged.temp))) facts.whitespaceOnly = true;
  }
  return facts;
}

/** An earlier base that differs from the disk: in a scratch file, git's numstat against the write under way. */
interface Against {
  content: Buffer;
  file: string;
  numstat: Promise<FileNumstat>;
}

/** Each distinct earlier base that differs from the disk, counted by git at once; `remove` takes the scratch files away. */
function startAgainst(
  staged: StagedWrite,
  oldContent: Buffer | null,
  starts: ReadonlyArray<SessionBase | null>,
): { list: Against[]; remove: () => void } {
  const list: Against[] = [];
  const removers: Array<() => void> = [];
  const remove = () => {
    for (const r of removers) r();
  };
  try {
    for (const start of starts) {
      const content = start?.content;
      if (!content || sameBytes(content, oldContent) || list.some((a) => a.content.equals(content)))
        continue;
      const s = scratchFile(content);
      removers.push(s.remove);
      const numstat = numstatFiles(s.file, staged.temp);
      numstat.catch(() => {});
      list.push({ content, file: s.file, numstat });
    }
  } catch (err) {
    remove();
    throw err;
  }
  return { list, remove };
}

/**
 * The write measured against the file as the session, and as the day, first saw it too; the
 * stricter answer stands, so a base can only add questions (rule: session-base).
 */
async function strictestSince(
  c: Classification,
  oldContent: Buffer | null,
  bases: ReadonlyArray<{ start: SessionBase | null; what: string }>,
  judgeSince: (start: Buffer | null) => Promise<Classification>,
): Promise<Classification> {
  for (const { start, what } of bases) {
    if (!start || sameBytes(start.content, oldContent) || c.needsApproval) continue;
    const cs = await judgeSince(start.content);
    if (cs.needsApproval)
      c = {
        ...cs,
        reasons: [...cs.reasons, `measured against ${what} (checkpoint ${start.checkpoint})`],
      };
  }
  return c;
}

function sameBytes(a: Buffer | null, b: Buffer | null): boolean {
  return a === null || b === null ? a === b : a.equals(b);
}

interface MeasureAgainstInput {
  staged: StagedWrite;
  base: Buffer | null;
  oldMode: string | null;
  newMode: string;
  newContent: Buffer;
  config: { maxFileBytes: number; changeRatio: number };
}

/**
 * The facts of the write measured against content that is not on disk (the
 * session base): it goes to a temp file outside the work tree for git's own
 * numstat, and is removed again.
 */
async function measureAgainst({
  staged,
  base,
  oldMode,
  newMode,
  newContent,
  config,
}: MeasureAgainstInput): Promise<ChangeFacts> {
  if (base === null)
    return measure({ staged, oldMode: null, newMode, oldContent: null, newContent, config });
  return withScratchFile(base, (file) =>
    measure({
      staged: { ...staged, abs: file },
      oldMode: oldMode ?? MODE.file,
      newMode,
      oldContent: base,
      newContent,
      config,
      rel: staged.rel,
    }),
  );
}

interface AskWriteOptions {
  contextLines: number;
  color: boolean;
  answers: Map<string, Answer>;
  root: string;
}

/**
 * Ask the person at the terminal; false when there is none (then the plan
 * blocks the write, as in auto mode). Ctrl-C throws E_ABORTED: nothing written or recorded.
 */
async function askAboutWrite(
  staged: StagedWrite,
  pf: PlanFile,
  { contextLines, color, answers, root }: AskWriteOptions,
): Promise<boolean> {
  const { openFilePrompt, askAboutFiles } = await import('../ask.js');
  const prompt = await openFilePrompt({
    color,
    root,
    title: (name) => `guard: ${name} needs approval`,
  });
  if (!prompt) return false;
  try {
    if (!pf.c.binary && !pf.c.symlink)
      pf.hunks = await previewHunks(staged, pf.base !== null, contextLines);
    await askAboutFiles(prompt, [{ f: pf }], answers);
  } finally {
    prompt.close();
  }
  return true;
}

/** The hunks of the write, from git's own diff of the file on disk and the prepared temp file (with git's function context). */
async function previewHunks(
  staged: StagedWrite,
  existed: boolean,
  contextLines: number,
): Promise<Hunk[]> {
  const from = existed ? staged.abs : '/dev/null';
  const { parseHunks } = await import('../../core/hunks.js');
  return parseHunks(await patchFiles(from, staged.temp, contextLines));
}
