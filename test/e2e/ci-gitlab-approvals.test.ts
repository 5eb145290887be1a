/**
 * issue 23 item 1, the GitLab half: a person's merge request approval is an
 * approval in `guard ci`. GitLab's API is a fake server on 127.0.0.1
 * (CI_API_V4_URL points at it), the repositories are real; the CLI runs in process
 * without blocking this thread (test/inproc.ts guardAsync) so the server can answer.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { guardAsync } from '../inproc.js';
import { cleanEnv, cleanupRepos, makeRepo, type TestRepo } from '../helpers.js';

afterAll(cleanupRepos);

const AUTHOR = 99;
const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

interface Approval {
  user: { id: number; username: string; state?: string };
  approved_at?: string;
}
interface Version {
  id: number;
  head_commit_sha: string;
  created_at: string;
}
let approvals: Approval[] = [];
/** Newest first, as GitLab lists them. */
let versions: Version[] = [];
let reviewers: Array<{ user: { id: number; username: string }; state: string }> = [];
let members: Array<{ id: number; username: string; access_level: number; state: string }> = [];
let moreVersions = false;
let ghReviews: unknown[] = [];
/** Replace one endpoint's answer (a raw body string) by its path suffix: '/approvals', '/versions'. */
let broken: Record<string, string> = {};
let status = 200;
const seen: Array<{ url: string; token: string | undefined; job: string | undefined }> = [];
let server: Server;
let api = '';
let closedPort = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = req.url ?? '';
    seen.push({
      url,
      token: req.headers['private-token'] as string | undefined,
      job: req.headers['job-token'] as string | undefined,
    });
    const send = (code: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(code, { 'content-type': 'application/json', ...headers });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    // GitHub's two endpoints, for the GitHub path's own test below
    if (url === '/repos/acme/app/pulls/7/reviews?per_page=100') return send(200, ghReviews);
    if (/^\/repos\/acme\/app\/collaborators\/[^/]+\/permission$/.test(url))
      return send(200, { permission: 'write' });
    if (
      req.headers['private-token'] !== 'glpat-123' &&
      req.headers['private-token'] !== 'glpat-guard'
    )
      return send(401, { message: '401 Unauthorized' });
    if (status !== 200) return send(status, { message: 'down' });
    const mr = '/api/v4/projects/12/merge_requests/7';
    for (const [suffix, body] of Object.entries(broken))
      if (url.startsWith(mr + suffix)) return send(200, body);
    if (url === mr)
      return send(200, {
        id: 1007,
        iid: 7,
        project_id: 12,
        author: { id: AUTHOR, username: 'renovate' },
        sha: versions[0]?.head_commit_sha,
        web_url: 'https://gitlab.example/acme/app/-/merge_requests/7',
      });
    if (url === `${mr}/approvals`)
      return send(200, { approved: approvals.length > 0, approved_by: approvals });
    if (url === `${mr}/versions?per_page=100`)
      return send(200, versions, { 'x-next-page': moreVersions ? '2' : '' });
    if (url === `${mr}/reviewers?per_page=100`) return send(200, reviewers, { 'x-next-page': '' });
    const m = /^\/api\/v4\/projects\/12\/members\/all\?per_page=100&user_ids=([\d,]+)$/.exec(url);
    if (m) {
      const ids = m[1]!.split(',').map(Number);
      return send(
        200,
        members.filter((x) => ids.includes(x.id)),
      );
    }
    send(404, { message: '404 Not Found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  api = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/api/v4`;
  // a port nothing listens on: the API down
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const paddr = probe.address();
  closedPort = typeof paddr === 'object' && paddr ? paddr.port : 1;
  await new Promise<void>((r) => probe.close(() => r()));
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

beforeEach(() => {
  approvals = [];
  versions = [];
  reviewers = [];
  members = [
    { id: 1, username: 'alice', access_level: 30, state: 'active' },
    { id: 2, username: 'rita', access_level: 20, state: 'active' },
    { id: 3, username: 'mona', access_level: 40, state: 'active' },
    { id: 4, username: 'bob', access_level: 30, state: 'blocked' },
    { id: AUTHOR, username: 'renovate', access_level: 30, state: 'active' },
    { id: 50, username: 'project_12_bot_3f2a9c', access_level: 40, state: 'active' },
  ];
  moreVersions = false;
  broken = {};
  status = 200;
  seen.length = 0;
});

const gitlabEnv = (extra: Record<string, string | undefined> = {}) => ({
  CI: 'true',
  GITLAB_CI: 'true',
  CI_API_V4_URL: api,
  CI_PROJECT_ID: '12',
  CI_PROJECT_PATH: 'acme/app',
  CI_MERGE_REQUEST_IID: '7',
  CI_JOB_TOKEN: 'job-token-that-cannot-read-approvals',
  GITLAB_TOKEN: 'glpat-123',
  ...extra,
});

function ciRun(
  repo: TestRepo,
  env: Record<string, string | undefined> = {},
  format = 'json',
): Promise<{ code: number; stdout: string; stderr: string; json: any }> {
  const e = cleanEnv(gitlabEnv(env));
  // in process (test/inproc.ts), not blocking this thread: the fake API answers from it
  return guardAsync(['ci', '--base', 'main', '--format', format], {
    cwd: repo.dir,
    env: { ...e, CI: e.CI },
  }).then(({ code, stdout, stderr }) => {
    let json: any;
    try {
      json = JSON.parse(stdout);
    } catch {
      json = undefined;
    }
    return { code, stdout, stderr, json };
  });
}

/** main with a workflow; the merge request bumps a pin in it (a protected path). */
function botMr(): { repo: TestRepo; head: string } {
  const repo = makeRepo({
    '.github/workflows/ci.yml': 'steps:\n  - uses: actions/checkout@v3\n',
    '.gitlab-ci.yml': 'test:\n  script: npm test\n',
    'app.js': 'one\n',
  });
  repo.git(['checkout', '-q', '-b', 'mr']);
  repo.write('.github/workflows/ci.yml', 'steps:\n  - uses: actions/checkout@v4\n');
  const head = repo.commitAll('bump actions/checkout to v4');
  return { repo, head };
}

const approval = (id: number, username: string, minutes: number | undefined): Approval => ({
  user: { id, username, state: 'active' },
  ...(minutes === undefined ? {} : { approved_at: at(minutes) }),
});
const version = (id: number, sha: string, minutes: number): Version => ({
  id,
  head_commit_sha: sha,
  created_at: at(minutes),
});
const byPath = (json: any) => Object.fromEntries(json.files.map((f: any) => [f.path, f.decision]));

describe('guard ci on GitLab: a merge request approval is an approval', () => {
  it('a bot pin bump fails without an approval and passes once a Developer approves its head; JSON and text say which approval cleared what; five requests', async () => {
    const { repo, head } = botMr();
    versions = [version(1, head, 0)];
    const before = await ciRun(repo);
    expect(before.code).toBe(1);
    expect(before.json.files[0]).toMatchObject({
      path: '.github/workflows/ci.yml',
      decision: 'blocked',
      rules: ['protected'],
    });
    expect(before.json.reviews).toMatchObject({
      source: 'gitlab acme/app!7',
      counted: [],
      ignored: [],
    });

    approvals = [approval(1, 'alice', 5)];
    seen.length = 0;
    const after = await ciRun(repo);
    expect(after.code).toBe(0);
    expect(after.json.files[0]).toMatchObject({
      decision: 'approved',
      review: {
        id: 1,
        user: 'alice',
        commit: head,
        kind: 'approval',
        url: 'https://gitlab.example/acme/app/-/merge_requests/7',
      },
    });
    expect(after.json.reviews.counted).toEqual([
      expect.objectContaining({
        id: 1,
        user: 'alice',
        commit: head,
        kind: 'approval',
        cleared: ['.github/workflows/ci.yml'],
      }),
    ]);
    // the MR, its approvals, versions, reviewers, then one members lookup; the token as PRIVATE-TOKEN, never the job token
    expect(seen.map((s) => s.url.replace(/\?.*$/, '')).sort()).toEqual(
      ['', '/approvals', '/reviewers', '/versions']
        .map((p) => `/api/v4/projects/12/merge_requests/7${p}`)
        .concat('/api/v4/projects/12/members/all')
        .sort(),
    );
    expect(new Set(seen.map((s) => s.token))).toEqual(new Set(['glpat-123']));
    expect(seen.every((s) => s.job === undefined)).toBe(true);

    const text = await ciRun(repo, {}, 'text');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`approved by the approval of alice (of ${head.slice(0, 10)})`);
    const md = await ciRun(repo, {}, 'markdown');
    expect(md.stdout).toContain('approved by the approval of alice');
  });

  it('the number of requests does not grow with the number of approvers', async () => {
    const { repo, head } = botMr();
    versions = [version(1, head, 0)];
    approvals = [
      approval(1, 'alice', 5),
      approval(3, 'mona', 6),
      approval(2, 'rita', 7),
      approval(4, 'bob', 8),
    ];
    const r = await ciRun(repo);
    expect(r.code).toBe(0);
    expect(seen).toHaveLength(5);
    expect(seen.filter((s) => s.url.includes('/members/all'))[0]!.url).toContain(
      'user_ids=1,3,2,4',
    );
    // the newest approval that saw the content clears it; mona (Maintainer) counts too
    expect(r.json.reviews.counted.map((c: any) => c.user)).toEqual(['mona', 'alice']);
  });

  it('GUARD_GITLAB_TOKEN is preferred over GITLAB_TOKEN', async () => {
    const { repo, head } = botMr();
    versions = [version(1, head, 0)];
    approvals = [approval(1, 'alice', 5)];
    const r = await ciRun(repo, { GUARD_GITLAB_TOKEN: 'glpat-guard' });
    expect(r.code).toBe(0);
    expect(new Set(seen.map((s) => s.token))).toEqual(new Set(['glpat-guard']));
  });

  it('an approval of an older head covers only what that head changed: a push after it needs a new approval', async () => {
    const { repo, head: reviewed } = botMr();
    repo.write('.github/workflows/release.yml', 'on: push\n');
    const second = repo.commitAll('add a release workflow');
    // alice approved at minute 5, while the merge request was at its first head; the push came at minute 10
    versions = [version(2, second, 10), version(1, reviewed, 0)];
    approvals = [approval(1, 'alice', 5)];
    const r1 = await ciRun(repo);
    expect(r1.code).toBe(1);
    expect(byPath(r1.json)).toEqual({
      '.github/workflows/ci.yml': 'approved',
      '.github/workflows/release.yml': 'blocked',
    });
    expect(r1.json.reviews.counted[0]).toMatchObject({
      user: 'alice',
      commit: reviewed,
      cleared: ['.github/workflows/ci.yml'],
    });

    // the approved path changes again after the approval: blocked again (GitLab kept the approval: no reset on push)
    repo.write('.github/workflows/ci.yml', 'steps:\n  - uses: evil/checkout@v1\n');
    const third = repo.commitAll('swap the action');
    versions = [version(3, third, 20), ...versions];
    const r2 = await ciRun(repo);
    expect(byPath(r2.json)['.github/workflows/ci.yml']).toBe('blocked');

    // the same approval given after the last push clears everything
    approvals = [approval(1, 'alice', 25)];
    const r3 = await ciRun(repo);
    expect(r3.code).toBe(0);
  });

  it('an approval within a minute of a push is tied to the head before it (a page loaded before the push)', async () => {
    const { repo, head: first } = botMr();
    repo.write('.github/workflows/ci.yml', 'steps:\n  - uses: evil/checkout@v1\n');
    const second = repo.commitAll('swap the action');
    versions = [version(2, second, 10), version(1, first, 0)];
    for (const minutes of [10, 10.5, 10.99]) {
      approvals = [approval(1, 'alice', minutes)];
      const r = await ciRun(repo);
      expect(r.code).toBe(1);
      expect(r.json.reviews.counted[0]).toMatchObject({ commit: first, cleared: [] });
    }
    approvals = [approval(1, 'alice', 11)];
    expect((await ciRun(repo)).code).toBe(0);
    // within a minute of the first version: tied to nothing, said so
    versions = [version(1, first, 0)];
    approvals = [approval(1, 'alice', 0.5)];
    const r = await ciRun(repo);
    expect(r.json.reviews.ignored[0].why).toMatch(
      /less than 60 s after the merge request's first version/,
    );
  });

  it('does not count: a Reporter, a non-member, the author, a bot, a reviewer who requested changes, a blocked account, an approval without a time', async () => {
    const { repo, head } = botMr();
    versions = [version(1, head, 0)];
    const expectIgnored = async (a: Approval[], why: RegExp) => {
      approvals = a;
      const r = await ciRun(repo);
      expect(r.code).toBe(1);
      expect(r.json.files[0].decision).toBe('blocked');
      expect(r.json.reviews.counted).toEqual([]);
      expect(r.json.reviews.ignored).toEqual([
        expect.objectContaining({
          id: a[0]!.user.id,
          user: a[0]!.user.username,
          why: expect.stringMatching(why),
        }),
      ]);
      return r;
    };
    await expectIgnored([approval(2, 'rita', 5)], /no Developer access or more \(Reporter\)/);
    await expectIgnored([approval(7, 'stranger', 5)], /not a member/);
    // GitLab lets an author approve where the project allows it; like GitHub, guard never counts it
    await expectIgnored([approval(AUTHOR, 'renovate', 5)], /author/);
    await expectIgnored([approval(50, 'project_12_bot_3f2a9c', 5)], /a bot/);
    await expectIgnored([approval(4, 'bob', 5)], /blocked/);
    await expectIgnored([approval(1, 'alice', undefined)], /did not say when/);
    reviewers = [{ user: { id: 1, username: 'alice' }, state: 'requested_changes' }];
    const r = await expectIgnored([approval(1, 'alice', 5)], /requested changes/);
    const text = await ciRun(repo, {}, 'text');
    expect(text.stdout).toContain(
      'The approval of alice does not count: the same person requested changes',
    );
    expect(text.stdout).toContain(
      'Or a member with the Developer role or higher approves the merge request (not its author); then retry this job.',
    );
    expect(r.json.reviews.unavailable).toBeUndefined();
  });

  it('an approval older than every version GitLab lists does not count when more versions exist', async () => {
    const { repo, head } = botMr();
    versions = [version(1, head, 10)];
    moreVersions = true;
    approvals = [approval(1, 'alice', 5)];
    const r = await ciRun(repo);
    expect(r.code).toBe(1);
    expect(r.json.reviews.ignored[0].why).toMatch(/older than the 100 newest/);
  });

  it('an approval given while the newest version had no head commit is tied to nothing, not to the version before', async () => {
    const { repo, head: first } = botMr();
    repo.write('.github/workflows/ci.yml', 'steps:\n  - uses: evil/checkout@v1\n');
    repo.commitAll('swap the action');
    versions = [
      { id: 2, head_commit_sha: null as unknown as string, created_at: at(10) },
      version(1, first, 0),
    ];
    approvals = [approval(1, 'alice', 15)];
    const r = await ciRun(repo);
    expect(r.code).toBe(1);
    expect(r.json.reviews.ignored).toEqual([
      expect.objectContaining({
        user: 'alice',
        why: expect.stringMatching(/without its head commit/),
      }),
    ]);
  });

  it('an approved head that is not in the clone does not count', async () => {
    const { repo } = botMr();
    versions = [version(1, 'f'.repeat(40), 0)];
    approvals = [approval(1, 'alice', 5)];
    const r = await ciRun(repo);
    expect(r.code).toBe(1);
    expect(r.json.reviews.ignored[0].why).toMatch(/not in this clone/);
  });

  it('a malformed answer fails closed and says which', async () => {
    const { repo, head } = botMr();
    versions = [version(1, head, 0)];
    approvals = [approval(1, 'alice', 5)];
    const cases: Array<[Record<string, string>, RegExp]> = [
      [
        { '/approvals': JSON.stringify({ approved_by: { user: 1 } }) },
        /the approvals are not a list/,
      ],
      [
        { '/versions': '<html>oops</html>' },
        /GitLab API: the answer for \/projects\/12\/merge_requests\/7\/versions is not JSON/,
      ],
      [
        {
          '/versions': JSON.stringify([{ id: 1, head_commit_sha: head, created_at: 'yesterday' }]),
        },
        /version has no created_at/,
      ],
      [{ '/reviewers': JSON.stringify({}) }, /reviewers are not a list/],
    ];
    for (const [answer, message] of cases) {
      broken = answer;
      const r = await ciRun(repo);
      expect(r.code).toBe(1);
      expect(r.json.files[0].decision).toBe('blocked');
      expect(r.json.reviews.unavailable).toMatch(message);
      expect(r.json.reviews.hint).toMatch(/retry the job/);
    }
    broken = { '': JSON.stringify({ iid: 7 }) };
    // the merge request without an author: self-approval could not be told apart
    const r = await ciRun(repo);
    expect(r.code).toBe(1);
  });

  it('the API down or refusing the token: one line and a hint, the change stays blocked, no stack trace', async () => {
    const { repo, head } = botMr();
    versions = [version(1, head, 0)];
    approvals = [approval(1, 'alice', 5)];
    const down = await ciRun(
      repo,
      { CI_API_V4_URL: `http://127.0.0.1:${closedPort}/api/v4` },
      'text',
    );
    expect(down.code).toBe(1);
    expect(down.stdout).toMatch(
      /Merge request approvals not read: GitLab API did not answer for \/projects\/12\/merge_requests\/7\S*: ECONNREFUSED\./,
    );
    expect(down.stdout).toMatch(/\nhint: .*retry the job/);
    expect(down.stdout + down.stderr).not.toMatch(/\n\s+at /);

    status = 503;
    const r = await ciRun(repo);
    expect(r.code).toBe(1);
    expect(r.json.reviews.unavailable).toMatch(
      /^GitLab API 503 for \/projects\/12\/merge_requests\/7/,
    );

    status = 200;
    const bad = await ciRun(repo, { GITLAB_TOKEN: 'wrong' });
    expect(bad.code).toBe(1);
    expect(bad.json.reviews.unavailable).toMatch(/GitLab API 401/);
  });

  it('no token: nothing is asked (CI_JOB_TOKEN is not used), the change stays blocked, the output says what to set', async () => {
    const { repo, head } = botMr();
    versions = [version(1, head, 0)];
    approvals = [approval(1, 'alice', 5)];
    const r = await ciRun(repo, { GITLAB_TOKEN: undefined });
    expect(r.code).toBe(1);
    expect(r.json.reviews).toMatchObject({
      source: 'gitlab acme/app!7',
      unavailable: expect.stringContaining('no GUARD_GITLAB_TOKEN or GITLAB_TOKEN'),
      hint: expect.stringContaining('read_api'),
    });
    expect(seen).toEqual([]);
    const text = await ciRun(repo, { GITLAB_TOKEN: undefined }, 'text');
    expect(text.stdout).toContain(
      'Merge request approvals not read: no GUARD_GITLAB_TOKEN or GITLAB_TOKEN',
    );
    const md = await ciRun(repo, { GITLAB_TOKEN: undefined }, 'markdown');
    expect(md.stdout).toContain(
      '- Merge request approvals not read: no GUARD\\_GITLAB\\_TOKEN or GITLAB\\_TOKEN',
    );
  });

  it('not a merge request pipeline: nothing is asked and nothing is said', async () => {
    const { repo } = botMr();
    const r = await ciRun(repo, { CI_MERGE_REQUEST_IID: undefined }, 'text');
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain('approvals not read');
    expect(seen).toEqual([]);
  });

  it('the Guard-Approved trailer still works offline: nothing blocked, nothing asked', async () => {
    const { repo } = botMr();
    const blob = repo.git(['rev-parse', 'HEAD:.github/workflows/ci.yml']).trim();
    repo.git([
      'commit',
      '-q',
      '--no-verify',
      '--allow-empty',
      '-m',
      `approve\n\nGuard-Approved: .github/workflows/ci.yml ${blob}`,
    ]);
    const r = await ciRun(repo, { CI_API_V4_URL: `http://127.0.0.1:${closedPort}/api/v4` });
    expect(r.code).toBe(0);
    expect(r.json.files[0]).toMatchObject({ decision: 'approved' });
    expect(r.json.reviews).toBeUndefined();
    expect(seen).toEqual([]);
  });
});

describe('guard ci on GitHub: bounded requests, and the API down said in one line with a hint', () => {
  it('looks up the permission of at most 20 approvers, newest first, whatever the number of reviews', async () => {
    const { repo, head } = botMr();
    ghReviews = Array.from({ length: 23 }, (_, i) => ({
      id: 500 + i,
      user: { login: `dev${i}` },
      state: 'APPROVED',
      commit_id: head,
      author_association: 'CONTRIBUTOR',
    }));
    const e = cleanEnv({
      CI: 'true',
      GITHUB_TOKEN: 'tok',
      GITHUB_REPOSITORY: 'acme/app',
      GITHUB_API_URL: api.replace(/\/api\/v4$/, ''),
      GUARD_PR_NUMBER: '7',
    });
    const out = await guardAsync(['ci', '--base', 'main', '--json'], {
      cwd: repo.dir,
      env: { ...e, CI: e.CI },
    });
    ghReviews = [];
    expect(out.code).toBe(0);
    const json = JSON.parse(out.stdout);
    expect(seen.filter((x) => x.url.endsWith('/permission'))).toHaveLength(20);
    expect(json.reviews.ignored).toEqual(
      [0, 1, 2].map((i) => ({
        id: 500 + i,
        user: `dev${i}`,
        why: 'not checked: more than 20 approvers need a permission lookup',
      })),
    );
    expect(json.reviews.counted[0]).toMatchObject({ id: 522, user: 'dev22' });
  });

  it('names the host problem instead of "fetch failed"', async () => {
    const { repo } = botMr();
    const e = cleanEnv({
      CI: 'true',
      GITHUB_TOKEN: 'tok',
      GITHUB_REPOSITORY: 'acme/app',
      GITHUB_API_URL: `http://127.0.0.1:${closedPort}`,
      GUARD_PR_NUMBER: '7',
    });
    const out = await guardAsync(['ci', '--base', 'main'], {
      cwd: repo.dir,
      env: { ...e, CI: e.CI },
    });
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(
      /Pull request reviews not read: GitHub API did not answer for \/repos\/acme\/app\/pulls\/7\/reviews\S*: ECONNREFUSED\./,
    );
    expect(out.stdout).toMatch(/\nhint: .*re-run the job/);
  });
});
