import { classify, type ChangeFacts, type Classification } from '../../core/classify.js';
import { withAggregateLoss } from '../../core/aggregate.js';
import { GuardError } from '../../core/errors.js';
import { READ_CAP, catFileBatch } from '../../git/catfile.js';
import { collectFacts } from '../../git/changes.js';
import { treeDiff } from '../../git/diff.js';
import { isShallow, openRepo } from '../../git/repo.js';
import {
  DELETION_BLOB,
  approvalKind,
  pathModes,
  readRangeTrailers,
  trailerApprovalKey,
} from '../../git/approvals.js';
import { mergeBase } from '../../git/commits.js';
import type { AgentCommit } from '../../git/provenance.js';
import { readPolicy } from '../../git/policy.js';

/**
 * `guard ci`: judge a pull request. Every file changed between
 * merge-base(base, head) and head is classified with the policy committed at
 * the merge-base; a change that needs approval passes only when a commit in
 * merge-base..head carries `Guard-Approved: <path> <blob>` for that path with
 * the blob the file has at head, or (GitHub reviews, GitLab merge request
 * approvals: review-source.ts) when a person with write access approved the
 * pull request at a head whose diff changed the path to that content
 * (applyReviews). Read-only: ci writes no
 * refs and no records.
 *
 * Git processes, whatever the number of files: rev-parse (open), cat-file
 * (resolve base/head), merge-base, then diff + cat-file (config) + log
 * (the Guard-Approved: and Guard-Agent: trailers, and each commit's paths) in parallel, then one cat-file for the blobs. The shallow check
 * runs only when no merge-base is found.
 */
export interface CiOptions {
  cwd: string;
  base: string;
  head?: string;
  /** Where to look for pull request reviews (GITHUB_*); default process.env. `null`: do not look. */
  reviewEnv?: NodeJS.ProcessEnv | null;
}

/** The pull request review that cleared a file: a person with write access approved content equal to head's. */
export interface ReviewApproval {
  id: number;
  user: string;
  /** The commit the review saw: head, or an older head whose own diff changed this path to head's content. */
  commit: string;
  url?: string;
  /** 'approval': a GitLab merge request approval; absent: a GitHub review. */
  kind?: 'approval';
}

export type CiDecision = 'allowed' | 'approved' | 'blocked';

export interface CiFile extends Classification {
  decision: CiDecision;
  /** The blob at head; null for a deletion. */
  blob: string | null;
  /** The commit whose Guard-Approved trailer covers this change. */
  approvedBy?: string;
  /** The pull request review that covers this change (when no trailer does). */
  review?: ReviewApproval;
  /** The agent sessions that commits changing this path name (Guard-Agent: trailers): what the commits say, shown, never an approval. */
  writtenBy?: AgentCommit[];
  /** A line to point annotations at (>= 1): the first line that differs at head. */
  line: number;
}

export interface CiResult {
  command: 'ci';
  base: string;
  head: string;
  mergeBase: string;
  /** True when the merge-base had no guard.config.json (defaults, bootstrap rules). */
  bootstrap: boolean;
  files: CiFile[];
  blocked: number;
  approved: number;
  /** Pull request reviews read (only when something needed approval that no trailer covered). */
  reviews?: {
    source: string | null;
    /** Why no review was read, or the API error. */
    unavailable?: string;
    /** What to do about `unavailable`. */
    hint?: string;
    /** `kind: 'approval'`: a GitLab merge request approval (`id` is the approver's user id). */
    counted: Array<{
      id: number;
      user: string;
      commit: string;
      url?: string;
      kind?: 'approval';
      cleared: string[];
    }>;
    ignored: Array<{ id: number; user: string; why: string }>;
  };
}

export async function ci(opts: CiOptions): Promise<CiResult> {
  const repo = await openRepo(opts.cwd);
  const cwd = repo.root;
  const headName = opts.head ?? 'HEAD';
  const [base, head] = await resolveCommits(cwd, [
    { flag: '--base', name: opts.base },
    { flag: '--head', name: headName },
  ]);
  const mergeBase = await findMergeBase(cwd, {
    base: base!,
    head: head!,
    baseName: opts.base,
    headName,
  });

  const [entries, { config, policy, oid: configOid }, { approvals, agents }] = await Promise.all([
    treeDiff(cwd, mergeBase, head!),
    readPolicy(cwd, mergeBase, { shown: mergeBase.slice(0, 10) }),
    readRangeTrailers(cwd, mergeBase, head!),
  ]);
  const { facts } = await collectFacts(cwd, entries, {
    maxBytes: Math.min(config.maxFileBytes, READ_CAP),
    whitespace: { range: [mergeBase, head!], changeRatio: config.changeRatio },
  });
  const classified = withAggregateLoss(
    facts.map((f) => classify(f, policy)),
    config,
  );

  const files = facts.map((f, i): CiFile => {
    const c = classified[i]!;
    const blob = entries[i]!.newOid;
    const file: CiFile = { ...c, decision: 'allowed', blob, line: firstChangedLine(f) };
    const by = [
      ...(agents.get(c.path) ?? []),
      ...(c.oldPath !== undefined ? (agents.get(c.oldPath) ?? []) : []),
    ];
    if (by.length > 0) file.writtenBy = by;
    if (c.needsApproval) {
      const by = approvals.get(
        trailerApprovalKey(c.path, blob ?? DELETION_BLOB, entries[i]!.newMode),
      );
      if (by) Object.assign(file, { decision: 'approved', approvedBy: by });
      else file.decision = 'blocked';
    }
    return file;
  });
  const headModes = new Map(entries.map((e) => [e.path, e.newMode]));
  const reviews =
    files.some((f) => f.decision === 'blocked') && opts.reviewEnv !== null
      ? await applyReviews(cwd, {
          base: base!,
          head: head!,
          mergeBaseOfHead: mergeBase,
          files,
          headModes,
          env: opts.reviewEnv ?? process.env,
        })
      : undefined;
  return {
    command: 'ci',
    base: base!,
    head: head!,
    mergeBase,
    bootstrap: configOid === null,
    files,
    blocked: files.filter((f) => f.decision === 'blocked').length,
    approved: files.filter((f) => f.decision === 'approved').length,
    ...(reviews ? { reviews } : {}),
  };
}

/**
 * Resolve revisions to commit ids with one cat-file process: `<rev>^{commit}`
 * peels tags and reports "missing" for anything that is not a commit.
 */
async function resolveCommits(
  cwd: string,
  revs: Array<{ flag: string; name: string }>,
): Promise<string[]> {
  for (const r of revs) {
    if (r.name.trim() === '' || /[\n\0]/.test(r.name)) {
      throw new GuardError(
        'E_USAGE',
        `${r.flag} ${JSON.stringify(r.name)} is not a revision`,
        'pass a branch, tag or commit id',
      );
    }
  }
  const found = await catFileBatch(
    cwd,
    revs.map((r) => `${r.name}^{commit}`),
    0,
  );
  return revs.map((r, i) => {
    const obj = found[i];
    if (!obj || obj.type !== 'commit') {
      throw new GuardError(
        'E_USAGE',
        `${r.flag} ${r.name}: no such commit in this repository`,
        r.flag === '--base'
          ? 'fetch the base branch first (git fetch origin main), or pass a commit id; in GitHub Actions use github.event.pull_request.base.sha with fetch-depth: 0'
          : 'pass a commit that exists here (default HEAD)',
      );
    }
    return obj.oid;
  });
}

interface MergeBaseInput {
  base: string;
  head: string;
  baseName: string;
  headName: string;
}

/** merge-base(base, head); a usage error that says why when there is none. */
async function findMergeBase(
  cwd: string,
  { base, head, baseName, headName }: MergeBaseInput,
): Promise<string> {
  const mb = await mergeBase(cwd, base, head);
  if (mb) return mb;
  if (await isShallow(cwd)) {
    throw new GuardError(
      'E_USAGE',
      `no merge-base of ${baseName} and ${headName} in this shallow clone: the history that joins them was not fetched`,
      'fetch the full history: `fetch-depth: 0` in actions/checkout, or `git fetch --unshallow` (or `git fetch --deepen=N`)',
    );
  }
  throw new GuardError(
    'E_USAGE',
    `${baseName} and ${headName} have no common history (no merge-base)`,
    'pass as --base the branch the pull request targets',
  );
}

/** The first line of the new content that is not in the old (1 when unknown or deleted). */
export function firstChangedLine(f: Pick<ChangeFacts, 'oldText' | 'newText' | 'newMode'>): number {
  if (f.newMode === null || f.newText === undefined) return 1;
  const a = (f.oldText ?? '').split('\n');
  const b = f.newText.split('\n');
  let i = 0;
  while (i < a.length && i < b.length && a[i]!.replace(/\r$/, '') === b[i]!.replace(/\r$/, '')) i++;
  const count = f.newText.endsWith('\n') ? b.length - 1 : b.length;
  return Math.max(1, Math.min(i + 1, count));
}

interface ReviewsInput {
  base: string;
  head: string;
  mergeBaseOfHead: string;
  files: CiFile[];
  /** Each path's mode at head: a review clears only the kind of file it saw (approvalKind). */
  headModes: Map<string, string | null>;
  env: NodeJS.ProcessEnv;
}

/**
 * Clear blocked files with the pull request's approving reviews. A review of
 * commit C saw the pull request as C's diff: merge-base(base, C)..C. It clears
 * a blocked path when that diff changed the path to exactly what head has (the
 * same blob of the same kind, approvalKind: a regular file seen is not a
 * symlink with the same text at head; or, for a deletion, the path deleted
 * there too). A review of an
 * older head thus covers what it saw and nothing changed since, and never a
 * path it saw only as unchanged content (a revert of the base's later change
 * to the content C happened to have). The reviewed commit must be in this
 * clone. Git processes: one merge-base per distinct older reviewed commit
 * (reviews are few; none for a review of head), then one cat-file and one
 * ls-tree per distinct reviewed commit (the modes), in parallel.
 */
async function applyReviews(
  cwd: string,
  { base, head, mergeBaseOfHead, files, headModes, env }: ReviewsInput,
): Promise<NonNullable<CiResult['reviews']>> {
  const { readReviews } = await import('../review/review-source.js');
  const pr = await readReviews(env);
  if ('unavailable' in pr)
    return {
      source: pr.source,
      unavailable: pr.unavailable,
      ...(pr.hint ? { hint: pr.hint } : {}),
      counted: [],
      ignored: [],
    };
  const blocked = files.filter((f) => f.decision === 'blocked' && !f.path.includes('\n'));
  const commits = [...new Set(pr.reviews.map((r) => r.commit))];
  // an unknown commit makes merge-base fail: that review is "not in this clone"
  const bases = await Promise.all(
    commits.map((c) => (c === head ? mergeBaseOfHead : mergeBase(cwd, base, c).catch(() => null))),
  );
  const names = commits.flatMap((c, i) => [
    `${c}^{commit}`,
    ...blocked.flatMap((f) => [`${c}:${f.path}`, `${bases[i] ?? c}:${f.path}`]),
  ]);
  const paths = blocked.filter((f) => f.blob !== null).map((f) => f.path);
  const [found, modes] = await Promise.all([
    names.length ? catFileBatch(cwd, names, 0) : [],
    // an unknown commit: no modes (the cat-file above already says the review is not in this clone)
    Promise.all(
      commits.map((c, i) => (bases[i] ? pathModes(cwd, c, paths) : new Map<string, string>())),
    ),
  ]);
  const stride = 1 + 2 * blocked.length;
  const counted: NonNullable<CiResult['reviews']>['counted'] = [];
  const ignored = [...pr.ignored];
  // newest review first: the one that saw the most
  for (const r of [...pr.reviews].reverse()) {
    const i = commits.indexOf(r.commit);
    const k = i * stride;
    if (found[k]?.type !== 'commit' || !bases[i]) {
      ignored.push({
        id: r.id,
        user: r.user,
        why: `the reviewed commit ${r.commit.slice(0, 10)} is not in this clone`,
      });
      continue;
    }
    const cleared: string[] = [];
    blocked.forEach((f, j) => {
      if (f.decision !== 'blocked') return;
      const at = found[k + 1 + 2 * j];
      const before = found[k + 2 + 2 * j];
      const sameKind = approvalKind(modes[i]!.get(f.path)) === approvalKind(headModes.get(f.path));
      const seen =
        f.blob === null
          ? !at && !!before
          : at?.type === 'blob' && at.oid === f.blob && sameKind && before?.oid !== f.blob;
      if (!seen) return;
      f.decision = 'approved';
      f.review = {
        id: r.id,
        user: r.user,
        commit: r.commit,
        ...(r.url ? { url: r.url } : {}),
        ...(r.kind ? { kind: r.kind } : {}),
      };
      cleared.push(f.path);
    });
    counted.push({
      id: r.id,
      user: r.user,
      commit: r.commit,
      ...(r.url ? { url: r.url } : {}),
      ...(r.kind ? { kind: r.kind } : {}),
      cleared,
    });
  }
  return { source: pr.source, counted, ignored };
}
