/**
 * One GET of a JSON API for `guard ci`'s approvals (GitHub reviews, GitLab
 * merge request approvals): node's own fetch, a timeout, and errors that say
 * in one line what went wrong and where (an HTTP status, a host that does not
 * answer, a body that is not JSON), never a bare "fetch failed".
 */

export const API_TIMEOUT_MS = 15_000;

export interface JsonAnswer {
  body: unknown;
  headers: Headers;
}

export interface ApiCall {
  name: string;
  shown: string;
  follow?: boolean;
}

/**
 * GET `url` with `headers`; `name` ("GitHub API") starts every error message,
 * `shown` is the part of the URL the message names (never a token).
 * Redirects are refused unless `follow`: fetch drops `authorization` on a
 * redirect to another origin, but a token in a custom header (GitLab's
 * PRIVATE-TOKEN) would go along.
 */
export async function getJson(
  url: string,
  headers: Record<string, string>,
  { name, shown, follow = false }: ApiCall,
): Promise<JsonAnswer> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers,
      redirect: follow ? 'follow' : 'error',
      signal: AbortSignal.timeout(API_TIMEOUT_MS),
    });
  } catch (err) {
    throw new Error(`${name} did not answer for ${shown}: ${networkCause(err)}`);
  }
  if (!res.ok) throw new Error(`${name} ${res.status} for ${shown}`);
  const text = await res.text().catch(() => '');
  try {
    return { body: JSON.parse(text) as unknown, headers: res.headers };
  } catch {
    throw new Error(`${name}: the answer for ${shown} is not JSON`);
  }
}

/** ECONNREFUSED, a timeout, a refused redirect: what fetch's "fetch failed" hides in its cause. */
function networkCause(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError')
    return `no answer within ${API_TIMEOUT_MS / 1000} s`;
  if (e?.cause?.code) return e.cause.code;
  return e?.cause?.message ?? e?.message ?? String(err);
}
