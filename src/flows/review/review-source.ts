import type { PrReviews } from '../gates/pr-approvals.js';

/**
 * Where `guard ci` reads a person's approvals from: GitLab merge request
 * approvals in a GitLab pipeline (GITLAB_CI=true), else GitHub pull request
 * reviews. Either the approvals, or why none were read (`source` null when
 * this is no pull or merge request job at all, so nothing needs saying) and,
 * where it helps, what to do.
 */
export type ReviewsRead = PrReviews | { source: string | null; unavailable: string; hint?: string };

export async function readReviews(env: NodeJS.ProcessEnv): Promise<ReviewsRead> {
  if (env.GITLAB_CI === 'true') {
    const { gitlabTarget, gitlabApprovals } = await import('../gates/mr-approvals.js');
    const target = gitlabTarget(env);
    if ('missing' in target)
      return {
        source: target.source,
        unavailable: target.missing,
        ...(target.hint ? { hint: target.hint } : {}),
      };
    try {
      return await gitlabApprovals(target);
    } catch (err) {
      return { source: target.source, unavailable: (err as Error).message, hint: GITLAB_HINT };
    }
  }
  const { githubTarget, githubReviews } = await import('../gates/pr-approvals.js');
  const target = githubTarget(env);
  if ('missing' in target) return { source: null, unavailable: target.missing };
  try {
    return await githubReviews(target);
  } catch (err) {
    return {
      source: `github ${target.repo}#${target.pr}`,
      unavailable: (err as Error).message,
      hint: GITHUB_HINT,
    };
  }
}

const GITLAB_HINT =
  'nothing was cleared by an approval: retry the job once GitLab answers; the token needs the read_api scope and the Reporter role';
const GITHUB_HINT =
  'nothing was cleared by a review: re-run the job once GitHub answers; the token needs pull-requests: read';
