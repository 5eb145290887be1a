import { getJson } from './http-json.js';
import type { PrReview, PrReviews } from './pr-approvals.js';

/*
 * A person's GitLab merge request approval as an approval for `guard ci`
 * (issue 23), the GitLab half of pr-approvals.ts. In a merge request
 * pipeline (GITLAB_CI, CI_API_V4_URL, CI_MERGE_REQUEST_PROJECT_ID or
 * CI_PROJECT_ID, CI_MERGE_REQUEST_IID) and with a token that may read the
 * API (GUARD_GITLAB_TOKEN or GITLAB_TOKEN: CI_JOB_TOKEN may not read merge
 * requests), five GETs at most, whatever the number of approvals:
 *
 *   the merge request (its author), /approvals (who approved, `approved_at`),
 *   /versions (each push: `head_commit_sha`, `created_at`), /reviewers (who
 *   requested changes), in parallel; then /members/all?user_ids=... once for
 *   the access level of every approver left.
 *
 * GitLab does not say which commit an approval saw. It says when it was given
 * (`approved_at`) and when each version of the merge request appeared: an
 * approval is tied to the newest version that existed SETTLE_MS (a minute)
 * before it. One GitLab gives no time for (GitLab before `approved_at` was
 * added) is tied to nothing.
 * The caller (ci.ts applyReviews) then clears only what that head's diff
 * changed to the content head has, as for a GitHub review.
 */

/** Developer (30) or higher may push and merge: the GitLab counterpart of GitHub's write access. */
const DEVELOPER = 30;
const ROLES: Record<number, string> = {
  0: 'no access',
  5: 'Minimal Access',
  10: 'Guest',
  15: 'Planner',
  20: 'Reporter',
  30: 'Developer',
  40: 'Maintainer',
  50: 'Owner',
};
/**
 * How long a version must have existed for an approval to be tied to it.
 * GitLab's web approve button (as its widget code reads) sends no head: a page
 * loaded before a push approves the new head if clicked after it. An approval
 * given within this time of a push is tied to the version before that push,
 * which the person more likely saw.
 */
export const SETTLE_MS = 60_000;
/** One page of each list; more than this many versions or reviewers is said, never guessed. */
const PER_PAGE = 100;
/**
 * Users an access token or a service account acts as: project and group
 * access tokens (`project_12_bot_...`, `group_3_bot_...`), service accounts.
 * GitLab's user entities do not say "bot" in the fields these endpoints send.
 */
const BOT_USERNAME = /^(project|group)_\d+_bot(?:_|$|\d)|^service_account_/;
const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/i;

export interface GitlabTarget {
  api: string;
  /** The project the merge request belongs to (numeric id). */
  project: string;
  iid: number;
  token: string;
  /** "gitlab group/app!7". */
  source: string;
}

/** What a missing piece is, and, once we know it is a merge request pipeline, where and what to do. */
export type GitlabMissing = { missing: string; source: string | null; hint?: string };

/** Is this a GitLab merge request pipeline with a token to read its approvals? */
export function gitlabTarget(env: NodeJS.ProcessEnv): GitlabTarget | GitlabMissing {
  const project = env.CI_MERGE_REQUEST_PROJECT_ID || env.CI_PROJECT_ID;
  const iid = Number(env.CI_MERGE_REQUEST_IID ?? NaN);
  const api = env.CI_API_V4_URL;
  if (!Number.isInteger(iid) || iid <= 0)
    return { missing: 'no CI_MERGE_REQUEST_IID (not a merge request pipeline)', source: null };
  if (!project || !/^\d+$/.test(project)) return { missing: 'no CI_PROJECT_ID', source: null };
  if (!api || !/^https?:\/\/[^\s]+$/.test(api))
    return { missing: 'no CI_API_V4_URL', source: null };
  const source = `gitlab ${env.CI_MERGE_REQUEST_PROJECT_PATH || env.CI_PROJECT_PATH || project}!${iid}`;
  const token = env.GUARD_GITLAB_TOKEN || env.GITLAB_TOKEN;
  if (!token) {
    return {
      missing:
        'no GUARD_GITLAB_TOKEN or GITLAB_TOKEN (CI_JOB_TOKEN may not read merge request approvals)',
      source,
      hint: 'add a masked CI/CD variable GUARD_GITLAB_TOKEN: a project access token with the Reporter role and the read_api scope',
    };
  }
  return { api: api.replace(/\/+$/, ''), project, iid, token, source };
}

interface RawUser {
  id?: unknown;
  username?: unknown;
  state?: unknown;
}

type Get = (path: string) => ReturnType<typeof getJson>;

/** The approvals that count on a GitLab merge request. Throws with a one-line message when the API cannot be read. */
export async function gitlabApprovals(t: GitlabTarget): Promise<PrReviews> {
  const headers = {
    'private-token': t.token,
    accept: 'application/json',
    'user-agent': 'guard-ci',
  };
  const get: Get = (path) =>
    getJson(`${t.api}${path}`, headers, { name: 'GitLab API', shown: path.replace(/\?.*$/, '') });
  const mr = await readMergeRequest(t, get);
  const out: PrReviews = { source: t.source, reviews: [], ignored: [] };
  const candidates = approvalCandidates(mr, out);
  if (candidates.length === 0) return out;
  await keepMembers(t, get, candidates, out);
  return out;
}

/** What the four parallel reads say about the merge request: its author, its approvals, its versions, who requested changes. */
interface MergeRequestFacts {
  author: number;
  webUrl: unknown;
  approvedBy: Array<{ user?: RawUser; approved_at?: unknown }>;
  heads: MrVersion[];
  /** GitLab has more versions than it listed. */
  olderVersions: boolean;
  requestedChanges: Set<number>;
}

async function readMergeRequest(t: GitlabTarget, get: Get): Promise<MergeRequestFacts> {
  const mrPath = `/projects/${t.project}/merge_requests/${t.iid}`;
  const [mr, approvals, versions, reviewers] = await Promise.all([
    get(mrPath),
    get(`${mrPath}/approvals`),
    get(`${mrPath}/versions?per_page=${PER_PAGE}`),
    get(`${mrPath}/reviewers?per_page=${PER_PAGE}`),
  ]);

  const author = (mr.body as { author?: RawUser } | null)?.author?.id;
  if (typeof author !== 'number') throw new Error('GitLab API: the merge request names no author');
  const webUrl = (mr.body as { web_url?: unknown }).web_url;
  const approvedBy = (approvals.body as { approved_by?: unknown } | null)?.approved_by;
  if (!Array.isArray(approvedBy))
    throw new Error('GitLab API: the approvals are not a list (approved_by)');
  const heads = readVersions(versions.body);
  const olderVersions = hasNextPage(versions.headers);
  if (!Array.isArray(reviewers.body)) throw new Error('GitLab API: the reviewers are not a list');
  // an unread page could hold a "requested changes": fail closed
  if (hasNextPage(reviewers.headers))
    throw new Error(`GitLab API: more than ${PER_PAGE} reviewers: not all read`);
  const requestedChanges = new Set<number>();
  for (const r of reviewers.body as Array<{ user?: RawUser; state?: unknown }>) {
    if (typeof r?.user?.id === 'number' && r.state === 'requested_changes')
      requestedChanges.add(r.user.id);
  }
  return { author, webUrl, approvedBy, heads, olderVersions, requestedChanges };
}

type Candidate = PrReview & { at: number };

/** Each approval tied to the head it saw, before roles are known; the others are in `out.ignored`, each with why. */
function approvalCandidates(mr: MergeRequestFacts, out: PrReviews): Candidate[] {
  const candidates: Candidate[] = [];
  for (const a of mr.approvedBy) {
    const id = a?.user?.id;
    const user = a?.user?.username;
    if (typeof id !== 'number' || typeof user !== 'string' || user === '') {
      out.ignored.push({
        id: typeof id === 'number' ? id : 0,
        user: typeof user === 'string' ? user : '?',
        why: 'the approval names no user',
      });
      continue;
    }
    const why = (m: string) => out.ignored.push({ id, user, why: m });
    if (BOT_USERNAME.test(user)) {
      why('a bot (an access token or service account), not a person');
      continue;
    }
    if (id === mr.author) {
      why("the merge request's author approving their own merge request");
      continue;
    }
    if (mr.requestedChanges.has(id)) {
      why('the same person requested changes (their review state)');
      continue;
    }
    const at = typeof a.approved_at === 'string' ? Date.parse(a.approved_at) : NaN;
    if (!Number.isFinite(at)) {
      why('GitLab did not say when it was approved (no approved_at), so not which head it saw');
      continue;
    }
    const seen = headSeen(mr.heads, at, mr.olderVersions);
    if ('why' in seen) {
      why(seen.why);
      continue;
    }
    candidates.push({
      id,
      user,
      commit: seen.sha,
      kind: 'approval',
      at,
      submittedAt: new Date(at).toISOString(),
      ...(typeof mr.webUrl === 'string' ? { url: mr.webUrl } : {}),
    });
  }
  return candidates;
}

/** One request for every approver's role; those with Developer access or more, active, go to `out.reviews`. */
async function keepMembers(
  t: GitlabTarget,
  get: Get,
  candidates: Candidate[],
  out: PrReviews,
): Promise<void> {
  // one request for every approver's role, inherited from groups included (the highest is listed)
  const ids = [...new Set(candidates.map((c) => c.id))];
  const members = await get(
    `/projects/${t.project}/members/all?per_page=${PER_PAGE}&user_ids=${ids.join(',')}`,
  );
  if (!Array.isArray(members.body)) throw new Error('GitLab API: the members are not a list');
  const role = new Map<number, { level: number; state: unknown }>();
  for (const m of members.body as Array<RawUser & { access_level?: unknown }>) {
    if (typeof m?.id === 'number' && typeof m.access_level === 'number')
      role.set(m.id, {
        level: Math.max(m.access_level, role.get(m.id)?.level ?? 0),
        state: m.state,
      });
  }
  // oldest first, as GitHub lists reviews: the caller tries the newest first
  for (const c of candidates.sort((x, y) => x.at - y.at)) {
    const r = role.get(c.id);
    if (!r || r.level < DEVELOPER) {
      out.ignored.push({
        id: c.id,
        user: c.user,
        why: `no Developer access or more (${r ? (ROLES[r.level] ?? `access level ${r.level}`) : 'not a member'})`,
      });
      continue;
    }
    if (r.state !== undefined && r.state !== 'active') {
      out.ignored.push({ id: c.id, user: c.user, why: `the account is ${String(r.state)}` });
      continue;
    }
    const { at: _at, ...review } = c;
    out.reviews.push(review);
  }
}

/** A version of the merge request: its head commit (null when GitLab lists none) and when it appeared (ms). */
export interface MrVersion {
  sha: string | null;
  at: number;
}

/**
 * Which head an approval given at `at` saw: the newest version that existed
 * SETTLE_MS before it; or why none can be named. `olderUnlisted`: GitLab has
 * more versions than it listed (all older than the listed ones).
 */
export function headSeen(
  versions: readonly MrVersion[],
  at: number,
  olderUnlisted: boolean,
): { sha: string } | { why: string } {
  let seen: MrVersion | undefined;
  for (const v of versions) if (v.at + SETTLE_MS <= at && (!seen || v.at > seen.at)) seen = v;
  if (seen?.sha) return { sha: seen.sha };
  if (seen) return { why: 'approved a version GitLab lists without its head commit' };
  if (versions.some((v) => v.at < at))
    return {
      why: `given less than ${SETTLE_MS / 1000} s after the merge request's first version GitLab lists: approve again`,
    };
  if (olderUnlisted)
    return { why: `approved a version older than the ${PER_PAGE} newest GitLab lists` };
  return { why: 'approved before any version of the merge request GitLab lists' };
}

/**
 * Each version's head and when it appeared. A version without a time cannot
 * be ordered: the answer is not understood. One without a head commit stays
 * in the list with none, so an approval given while it was the newest is tied
 * to nothing rather than to the version before it, which it did not see.
 */
function readVersions(body: unknown): MrVersion[] {
  if (!Array.isArray(body))
    throw new Error('GitLab API: the merge request versions are not a list');
  return body.map((v: { head_commit_sha?: unknown; created_at?: unknown } | null) => {
    const sha = v?.head_commit_sha;
    const at = typeof v?.created_at === 'string' ? Date.parse(v.created_at) : NaN;
    if (!Number.isFinite(at))
      throw new Error('GitLab API: a merge request version has no created_at');
    return { sha: typeof sha === 'string' && SHA.test(sha) ? sha.toLowerCase() : null, at };
  });
}

/** GitLab's offset pagination: `x-next-page` holds the next page number, empty on the last. */
function hasNextPage(h: Headers): boolean {
  return (h.get('x-next-page') ?? '').trim() !== '';
}
