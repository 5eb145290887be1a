import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { GuardError } from '../../core/errors.js';
import { MODE } from '../../core/modes.js';
import type { Answer, Held, PlanFile } from '../../core/plan.js';
import { READ_CAP, catFileBatch } from '../../git/catfile.js';
import type { DiffEntry } from '../../git/diff.js';
import { findLane, listLanes, mainRepo, type Lane } from '../../git/lanes.js';
import { readFileDiffs } from '../../git/patch.js';
import type { Repo } from '../../git/repo.js';
import { readCurrent } from '../../worktree/current.js';
import { laneChanges, type LaneChanges } from '../lanes/lanes.js';

/** Everything review decides on: read once, before anything is asked or written. */
export interface ReviewInput {
  main: Repo;
  lane: Lane;
  lc: LaneChanges;
  /** One per changed file, in diff order (the same order as `lc.entries`). */
  files: PlanFile[];
  /** Paths with a version guard did not read (too large, a submodule's commit): they are never merged. */
  unread: Set<string>;
}

const GITLINK = MODE.gitlink;
const SYMLINK = MODE.symlink;

async function pickLane(main: Repo, name: string | undefined): Promise<Lane> {
  if (name) return findLane(main, name);
  const lanes = await listLanes(main);
  if (lanes.length === 1) return lanes[0]!;
  if (lanes.length === 0)
    throw new GuardError(
      'E_NO_LANE',
      'there are no lanes to review',
      'guard start NAME creates one',
    );
  throw new GuardError(
    'E_USAGE',
    `name the lane to review (${lanes.map((l) => l.name).join(', ')})`,
    'guard review NAME',
  );
}

function textual(f: PlanFile, e: DiffEntry): boolean {
  const c = f.c;
  return (
    !c.binary &&
    !c.submodule &&
    e.newMode !== SYMLINK &&
    e.oldMode !== SYMLINK &&
    !c.rules.includes('too-large')
  );
}

/** The main tree's file now; a path it cannot hold (it leads out through a symlink) reads as absent (apply refuses it). */
async function held(root: string, p: string): Promise<Held | null> {
  return readCurrent(root, p).catch(() => null);
}

/**
 * Read a lane for review: checkpoint it, classify its changes against the
 * base, read both sides of every file (one cat-file batch), the hunks of the
 * text files (one git diff), and what the main tree holds now at each path.
 */
export async function readReview(cwd: string, name: string | undefined): Promise<ReviewInput> {
  const main = await mainRepo(cwd);
  const picked = await pickLane(main, name);
  if (picked.broken)
    throw new GuardError(
      'E_NO_LANE',
      `lane "${picked.name}" is broken: its folder is missing`,
      `guard discard ${picked.name} cleans it up`,
    );
  const lc = await laneChanges(main, picked, {
    command: 'review',
    reason: `before guard review of lane ${picked.name}`,
  });
  // The base is the merge-base of the lane with the main tree's HEAD (lc.lane.base), never the lane's own ref.
  const lane = lc.lane;
  const names: string[] = [];
  const at = lc.entries.map((e) => ({
    base: e.oldOid && e.oldMode !== GITLINK ? names.push(e.oldOid) - 1 : undefined,
    lane: e.newOid && e.newMode !== GITLINK ? names.push(e.newOid) - 1 : undefined,
  }));
  const objects = await catFileBatch(main.root, names, READ_CAP);
  const unread = new Set<string>();
  const files: PlanFile[] = await Promise.all(
    lc.files.map(async (c, i) => {
      const e = lc.entries[i]!;
      const data = (n: number | undefined) => {
        if (n === undefined) return null;
        if (!objects[n]?.data) unread.add(c.path);
        return objects[n]?.data ?? null;
      };
      // A submodule's commit is not read here (nor is its checkout in the main tree): like a blob over the cap, unknown.
      if (e.oldMode === GITLINK || e.newMode === GITLINK) unread.add(c.path);
      const current = {
        at: await held(main.root, e.path),
        ...(e.oldPath !== undefined ? { atOld: await held(main.root, e.oldPath) } : {}),
      };
      const f: PlanFile = {
        c,
        hunks: [],
        base: data(at[i]!.base),
        proposed: data(at[i]!.lane),
        baseMode: e.oldMode,
        proposedMode: e.newMode,
        current,
      };
      if (unread.has(c.path)) f.unread = true;
      return f;
    }),
  );
  const textPaths = files.flatMap((f, i) => {
    const e = lc.entries[i]!;
    return textual(f, e) ? (e.oldPath !== undefined ? [e.oldPath, e.path] : [e.path]) : [];
  });
  const { parseHunks } = await import('../../core/hunks.js');
  const sections = await readFileDiffs(
    main.root,
    [lane.base, lc.head],
    textPaths,
    lc.config.preview.contextLines,
  );
  for (const f of files) {
    const section = sections.get(f.c.path);
    if (section) f.hunks = parseHunks(section);
  }
  return { main, lane, lc, files, unread };
}

/** The answers a decisions file gives, by path; a path the lane did not change, or a hunk it lacks, is a usage error. */
export async function scriptedAnswers(
  file: string,
  cwd: string,
  input: ReviewInput,
): Promise<Map<string, Answer>> {
  const { parseDecisions, scriptedAnswer } = await import('../../core/decisions.js');
  let text: string;
  try {
    text = await readFile(path.resolve(cwd, file), 'utf8');
  } catch (err) {
    throw new GuardError(
      'E_USAGE',
      `cannot read the decisions file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      'pass --decisions a JSON file',
    );
  }
  const answers = new Map<string, Answer>();
  for (const d of parseDecisions(text, file)) {
    const f =
      input.files.find((x) => x.c.path === d.path) ??
      input.files.find((x) => x.c.oldPath === d.path);
    if (!f) {
      const n = input.lane.name;
      throw new GuardError(
        'E_USAGE',
        `the decisions name "${d.path}", which lane ${n} did not change`,
        `guard review ${n} --dry-run lists the changed paths and their hunks`,
      );
    }
    answers.set(
      f.c.path,
      scriptedAnswer(d, { path: d.path, hunks: f.hunks, baseText: f.base?.toString('utf8') ?? '' }),
    );
  }
  return answers;
}
