import { readFileSync } from 'node:fs';
import { getJson } from './http-json.js';

/*
 * A person's pull request review as an approval for `guard ci` (issue 23):
 * on GitHub, through the job's own token, the pull request's reviews are
 * listed; a review counts when its author has write access and their latest
 * say on the pull request is APPROVED. Which content it clears is decided by
 * the caller from the commit it reviewed (`commit_id`), never from the
 * review's text. Loaded only by `guard ci`, and only when something there
 * needs approval that no trailer covers; node's own fetch, no dependency.
 */

/** A review that counts: an approval by an account with write access, of one commit. */
export interface PrReview {
  id: number;
  user: string;
  /** The head the reviewer saw. */
  commit: string;
  url?: string;
  submittedAt?: string;
  /** 'approval': a GitLab merge request approval (its id is the approver's user id); absent: a GitHub review. */
  kind?: 'approval';
}

export interface PrReviews {
  /** Where they came from, e.g. "github owner/repo#12" or "gitlab group/app!7". */
  source: string;
  reviews: PrReview[];
  /** Approvals that did not count, and why (no write access, superseded). */
  ignored: Array<{ id: number; user: string; why: string }>;
}

/**
 * The one author_association that means write access by itself: the owner of
 * the repository (a user's repository, or an owner of the organization).
 * MEMBER only says the account is in the owning organization and
 * COLLABORATOR that it was invited: either may hold read or triage alone
 * (https://docs.github.com/en/graphql/reference/enums#commentauthorassociation),
 * so for them, as for everyone else, the permission endpoint decides.
 */
const WRITERS = new Set(['OWNER']);
/** Collaborator permission levels that can merge (GET /repos/{o}/{r}/collaborators/{u}/permission). */
const WRITE_PERMISSIONS = new Set(['admin', 'maintain', 'write']);
/** Review states that replace a person's earlier say; COMMENTED and PENDING do not. */
const VERDICTS = new Set(['APPROVED', 'CHANGES_REQUESTED', 'DISMISSED']);
const MAX_PAGES = 10;
/** Permission lookups per run, newest approvers first: the number of requests stays bounded. */
const MAX_PERMISSION_LOOKUPS = 20;

interface RawReview {
  id: number;
  user: { login: string; type?: string } | null;
  state: string;
  commit_id: string | null;
  author_association?: string;
  html_url?: string;
  submitted_at?: string;
}

/** Is there a GitHub pull request and a token to ask about it with? What to ask, or why not. */
export function githubTarget(
  env: NodeJS.ProcessEnv,
): { api: string; repo: string; pr: number; token: string } | { missing: string } {
  const token = env.GITHUB_TOKEN ?? env.GH_TOKEN;
  const repo = env.GITHUB_REPOSITORY;
  if (!token) return { missing: 'no GITHUB_TOKEN' };
  if (!repo || !/^[\w.-]+\/[\w.-]+$/.test(repo)) return { missing: 'no GITHUB_REPOSITORY' };
  let pr = Number(env.GUARD_PR_NUMBER ?? NaN);
  if (!Number.isInteger(pr) && env.GITHUB_EVENT_PATH) {
    try {
      const event = JSON.parse(readFileSync(env.GITHUB_EVENT_PATH, 'utf8')) as {
        pull_request?: { number?: number };
        number?: number;
      };
      pr = Number(event.pull_request?.number ?? NaN);
    } catch {
      return { missing: `GITHUB_EVENT_PATH ${env.GITHUB_EVENT_PATH} is not readable JSON` };
    }
  }
  if (!Number.isInteger(pr) || pr <= 0)
    return { missing: 'no pull request number (not a pull_request or pull_request_review event)' };
  return {
    api: (env.GITHUB_API_URL ?? 'https://api.github.com').replace(/\/+$/, ''),
    repo,
    pr,
    token,
  };
}

/** The approvals that count on a GitHub pull request. Throws with a one-line message when the API cannot be read. */
export async function githubReviews(t: GitHubTarget): Promise<PrReviews> {
  const get = githubGet(t);
  const raw = await allReviews(t, get);
  const out: PrReviews = { source: `github ${t.repo}#${t.pr}`, reviews: [], ignored: [] };
  const candidates = approvalsByPeople(raw, out.ignored);
  // the permission of the newest MAX_PERMISSION_LOOKUPS approvers GitHub does not vouch for, in parallel
  // (one approval per person is left: at most that many requests, however many reviews)
  const ask = candidates
    .filter((r) => !WRITERS.has(r.author_association ?? ''))
    .reverse()
    .slice(0, MAX_PERMISSION_LOOKUPS);
  const permission = new Map<string, string>();
  await Promise.all(
    ask.map(async (r) => {
      const p = await get(
        `${t.api}/repos/${t.repo}/collaborators/${encodeURIComponent(r.user!.login)}/permission`,
      ).catch(() => null);
      permission.set(
        r.user!.login,
        String((p?.body as { permission?: string } | undefined)?.permission ?? ''),
      );
    }),
  );
  for (const r of candidates) {
    const login = r.user!.login;
    if (!WRITERS.has(r.author_association ?? '') && !permission.has(login)) {
      out.ignored.push({
        id: r.id,
        user: login,
        why: `not checked: more than ${MAX_PERMISSION_LOOKUPS} approvers need a permission lookup`,
      });
      continue;
    }
    if (
      !WRITERS.has(r.author_association ?? '') &&
      !WRITE_PERMISSIONS.has(permission.get(login)!)
    ) {
      out.ignored.push({
        id: r.id,
        user: login,
        why: `no write access (${r.author_association ?? 'unknown'})`,
      });
      continue;
    }
    out.reviews.push({
      id: r.id,
      user: login,
      commit: r.commit_id!.toLowerCase(),
      ...(r.html_url ? { url: r.html_url } : {}),
      ...(r.submitted_at ? { submittedAt: r.submitted_at } : {}),
    });
  }
  return out;
}

interface GitHubTarget {
  api: string;
  repo: string;
  pr: number;
  token: string;
}

type GitHubGet = (url: string) => Promise<{ body: unknown; next: string | null }>;

/** One GET of the GitHub API, with the page after it (the Link header's rel="next"). */
function githubGet(t: GitHubTarget): GitHubGet {
  return async (url) => {
    const headers = {
      authorization: `Bearer ${t.token}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'user-agent': 'guard-ci',
    };
    const res = await getJson(url, headers, {
      name: 'GitHub API',
      shown: url.replace(t.api, ''),
      follow: true,
    });
    const next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1] ?? null;
    return { body: res.body, next };
  };
}

/** Every review of the pull request, page by page; fails closed when a page is left unread. */
async function allReviews(t: GitHubTarget, get: GitHubGet): Promise<RawReview[]> {
  const raw: RawReview[] = [];
  let url: string | null = `${t.api}/repos/${t.repo}/pulls/${t.pr}/reviews?per_page=100`;
  for (let page = 0; url && page < MAX_PAGES; page++) {
    const r: { body: unknown; next: string | null } = await get(url);
    if (!Array.isArray(r.body)) throw new Error('GitHub API: the reviews are not a list');
    raw.push(...(r.body as RawReview[]));
    // only follow a next page on the same API host; one elsewhere is a page not read: fail closed
    if (r.next && !r.next.startsWith(t.api + '/'))
      throw new Error(`GitHub API: the next page of reviews is not on ${t.api}: not all read`);
    url = r.next;
  }
  // unread pages could hold a later "changes requested": fail closed
  if (url) throw new Error(`more than ${MAX_PAGES * 100} reviews: not all read`);
  return raw;
}

/** Each person's latest verdict if it approves a named commit; the rest goes to `ignored`, with why. */
function approvalsByPeople(raw: RawReview[], ignored: PrReviews['ignored']): RawReview[] {
  // each person's latest verdict (the API lists reviews oldest first)
  const latest = new Map<string, RawReview>();
  for (const r of raw) if (r.user?.login && VERDICTS.has(r.state)) latest.set(r.user.login, r);
  const candidates: RawReview[] = [];
  for (const r of raw) {
    if (r.state !== 'APPROVED' || !r.user?.login || latest.get(r.user.login) !== r) {
      if (r.state === 'APPROVED' && r.user?.login)
        ignored.push({
          id: r.id,
          user: r.user.login,
          why: 'a later review by the same person replaces it',
        });
      continue;
    }
    // a person's review: an app (github-actions[bot], an agent's own app) that may approve is no person
    if (r.user.type === 'Bot' || r.user.login.endsWith('[bot]')) {
      ignored.push({ id: r.id, user: r.user.login, why: 'a bot, not a person' });
      continue;
    }
    if (!r.commit_id || !/^[0-9a-f]{40}([0-9a-f]{24})?$/i.test(r.commit_id)) {
      ignored.push({ id: r.id, user: r.user.login, why: 'names no commit' });
      continue;
    }
    candidates.push(r);
  }
  return candidates;
}
