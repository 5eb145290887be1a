/**
 * issue 23 item 1: a person's pull request review is an approval in `guard ci`.
 * GitHub's API is a mock server on 127.0.0.1 (GITHUB_API_URL points at it); the
 * CLI runs in process without blocking this thread (test/inproc.ts guardAsync) so the server can answer.
 */
import { guardAsync } from '../inproc.js';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, cleanupRepos, makeRepo, type TestRepo } from '../helpers.js';

afterAll(cleanupRepos);

interface Review {
  id: number;
  user: { login: string; type?: string };
  state: string;
  commit_id: string;
  author_association: string;
  html_url?: string;
}
let reviews: Review[] = [];
let page2: Review[] = [];
let permissions: Record<string, string> = {};
let status = 200;
const seen: Array<{ url: string; auth: string | undefined }> = [];
let server: Server;
let api = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', auth: req.headers.authorization });
    const send = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (status !== 200) return send(status, { message: 'Bad credentials' });
    let m = /^\/repos\/acme\/app\/pulls\/7\/reviews\?per_page=100(&page=2)?$/.exec(req.url ?? '');
    if (m && m[1]) return send(200, page2);
    if (m) {
      if (page2.length)
        res.setHeader(
          'link',
          `<${api}/repos/acme/app/pulls/7/reviews?per_page=100&page=2>; rel="next"`,
        );
      return send(200, reviews);
    }
    m = /^\/repos\/acme\/app\/collaborators\/([^/]+)\/permission$/.exec(req.url ?? '');
    if (m) return send(200, { permission: permissions[decodeURIComponent(m[1]!)] ?? 'read' });
    send(404, { message: 'Not Found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  api = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function eventFile(): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'guard-ev-')));
  const f = path.join(dir, 'event.json');
  writeFileSync(f, JSON.stringify({ action: 'submitted', pull_request: { number: 7 } }));
  return f;
}

function ciRun(
  repo: TestRepo,
  env: Record<string, string | undefined> = {},
  format = 'json',
): Promise<{ code: number; stdout: string; json: any }> {
  const e = cleanEnv({
    CI: 'true',
    GITHUB_TOKEN: 'tok-123',
    GITHUB_REPOSITORY: 'acme/app',
    GITHUB_API_URL: api,
    GITHUB_EVENT_PATH: eventFile(),
    ...env,
  });
  // in process (test/inproc.ts), not blocking this thread: the fake API answers from it
  return guardAsync(['ci', '--base', 'main', '--format', format], {
    cwd: repo.dir,
    env: { ...e, CI: e.CI },
  }).then(({ code, stdout }) => {
    let json: any;
    try {
      json = JSON.parse(stdout);
    } catch {
      json = undefined;
    }
    return { code, stdout, json };
  });
}

/** main with a workflow; the PR bumps a pin in it (protected), then more commits on top. */
function botPr(): { repo: TestRepo; head: string } {
  const repo = makeRepo({
    '.github/workflows/ci.yml': 'steps:\n  - uses: actions/checkout@v3\n',
    'app.js': 'one\n',
  });
  repo.git(['checkout', '-q', '-b', 'pr']);
  repo.write('.github/workflows/ci.yml', 'steps:\n  - uses: actions/checkout@v4\n');
  const head = repo.commitAll('bump actions/checkout to v4');
  return { repo, head };
}

const review = (
  id: number,
  login: string,
  commit: string,
  state = 'APPROVED',
  association = 'OWNER',
): Review => ({
  id,
  user: { login },
  state,
  commit_id: commit,
  author_association: association,
  html_url: `https://github.com/acme/app/pull/7#pullrequestreview-${id}`,
});

describe('guard ci: a pull request review is an approval', () => {
  it('a bot pin bump fails without a review and passes once a member approves its head; the JSON says which review cleared what', async () => {
    const { repo, head } = botPr();
    reviews = [];
    const before = await ciRun(repo);
    expect(before.code).toBe(1);
    expect(before.json.files[0]).toMatchObject({
      path: '.github/workflows/ci.yml',
      decision: 'blocked',
      rules: ['protected'],
    });

    reviews = [review(11, 'alice', head)];
    seen.length = 0;
    const after = await ciRun(repo);
    expect(after.code).toBe(0);
    expect(after.json.files[0]).toMatchObject({
      decision: 'approved',
      review: { id: 11, user: 'alice', commit: head },
    });
    expect(after.json.reviews.counted).toEqual([
      expect.objectContaining({
        id: 11,
        user: 'alice',
        commit: head,
        cleared: ['.github/workflows/ci.yml'],
      }),
    ]);
    expect(seen[0]!.auth).toBe('Bearer tok-123');

    const text = await ciRun(repo, {}, 'text');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`approved by review 11 of alice (of ${head.slice(0, 10)})`);
  });

  it('a review of an older head covers only the content it saw: a path changed since stays blocked, an unchanged one is approved', async () => {
    const { repo, head: reviewed } = botPr();
    repo.write('.github/workflows/release.yml', 'on: push\n');
    repo.commitAll('add a release workflow');
    reviews = [review(12, 'alice', reviewed)];
    const r1 = await ciRun(repo);
    expect(r1.code).toBe(1);
    const byPath = Object.fromEntries(r1.json.files.map((f: any) => [f.path, f.decision]));
    expect(byPath).toEqual({
      '.github/workflows/ci.yml': 'approved',
      '.github/workflows/release.yml': 'blocked',
    });

    // the reviewed path changed again after the review: blocked again
    repo.write('.github/workflows/ci.yml', 'steps:\n  - uses: evil/checkout@v1\n');
    repo.commitAll('swap the action');
    const r2 = await ciRun(repo);
    expect(r2.json.files.find((f: any) => f.path === '.github/workflows/ci.yml').decision).toBe(
      'blocked',
    );
  });

  it("a review of an older head never covers what it saw only as unchanged content: a revert of main's later change, a deletion of a file main added later", async () => {
    const repo = makeRepo({
      '.github/workflows/ci.yml': 'steps:\n  - uses: actions/checkout@v3\n',
      '.github/workflows/lint.yml': 'on: push\n',
      'app.js': 'one\n',
    });
    repo.git(['checkout', '-q', '-b', 'pr']);
    repo.write('.github/workflows/ci.yml', 'steps:\n  - uses: actions/checkout@v4\n');
    const reviewed = repo.commitAll('bump actions/checkout to v4'); // lint.yml untouched: the reviewer saw no change to it
    // main moves on after the review: it hardens lint.yml and adds a protected workflow
    repo.git(['checkout', '-q', 'main']);
    repo.write('.github/workflows/lint.yml', 'on: push\npermissions: {}\n');
    repo.write('.github/workflows/audit.yml', 'on: schedule\n');
    repo.commitAll('main: harden lint, add audit');
    repo.git(['checkout', '-q', 'pr']);
    repo.git(['merge', '-q', '--no-edit', 'main']);
    // the PR puts lint.yml back as the reviewer saw it at C, and deletes main's new workflow
    repo.write('.github/workflows/lint.yml', 'on: push\n');
    repo.git(['rm', '-q', '.github/workflows/audit.yml']);
    repo.commitAll("undo main's hardening");
    reviews = [review(30, 'alice', reviewed)];
    const r = await ciRun(repo);
    expect(r.code).toBe(1);
    const byPath = Object.fromEntries(r.json.files.map((f: any) => [f.path, f.decision]));
    // ci.yml: the reviewer saw exactly this change; the other two they never saw
    expect(byPath).toEqual({
      '.github/workflows/ci.yml': 'approved',
      '.github/workflows/lint.yml': 'blocked',
      '.github/workflows/audit.yml': 'blocked',
    });
  });

  it('a deletion the reviewer saw in an older head stays approved while it stays deleted', async () => {
    const repo = makeRepo({ '.github/workflows/old.yml': 'on: push\n', 'app.js': 'one\n' });
    repo.git(['checkout', '-q', '-b', 'pr']);
    repo.git(['rm', '-q', '.github/workflows/old.yml']);
    const reviewed = repo.commitAll('drop the old workflow');
    repo.write('app.js', 'two\n');
    repo.commitAll('later small edit');
    reviews = [review(31, 'alice', reviewed)];
    const r = await ciRun(repo);
    expect(r.code).toBe(0);
    expect(r.json.files.find((f: any) => f.path === '.github/workflows/old.yml')).toMatchObject({
      status: 'delete',
      decision: 'approved',
      review: { id: 31 },
    });
  });

  it('does not count: no write access, a later "changes requested", a review not approving, a reviewed commit missing here, a failing API', async () => {
    const { repo, head } = botPr();
    permissions = {};
    reviews = [review(20, 'mallory', head, 'APPROVED', 'CONTRIBUTOR')];
    let r = await ciRun(repo);
    expect(r.code).toBe(1);
    expect(r.json.reviews.ignored).toEqual([
      { id: 20, user: 'mallory', why: 'no write access (CONTRIBUTOR)' },
    ]);

    // the permission endpoint can vouch for an account GitHub lists as CONTRIBUTOR
    permissions = { mallory: 'write' };
    r = await ciRun(repo);
    expect(r.code).toBe(0);
    permissions = {};

    // an app with write access (github-actions may approve pull requests when a repository allows it) is no person
    reviews = [
      {
        ...review(26, 'github-actions[bot]', head),
        user: { login: 'github-actions[bot]', type: 'Bot' } as Review['user'],
      },
      {
        ...review(27, 'agent-app', head, 'APPROVED', 'OWNER'),
        user: { login: 'agent-app', type: 'Bot' } as Review['user'],
      },
    ];
    r = await ciRun(repo);
    expect(r.code).toBe(1);
    expect(r.json.reviews.ignored.map((i: any) => i.why)).toEqual([
      'a bot, not a person',
      'a bot, not a person',
    ]);

    reviews = [review(21, 'alice', head), review(22, 'alice', head, 'CHANGES_REQUESTED')];
    r = await ciRun(repo);
    expect(r.code).toBe(1);

    reviews = [review(23, 'alice', head, 'COMMENTED')];
    expect((await ciRun(repo)).code).toBe(1);

    reviews = [review(24, 'alice', 'f'.repeat(40))];
    r = await ciRun(repo);
    expect(r.code).toBe(1);
    expect(r.json.reviews.ignored[0].why).toMatch(/not in this clone/);

    reviews = [review(25, 'alice', head)];
    status = 401;
    r = await ciRun(repo);
    status = 200;
    expect(r.code).toBe(1);
    expect(r.json.reviews.unavailable).toMatch(/GitHub API 401/);

    // no token: nothing is asked, the change stays blocked
    seen.length = 0;
    r = await ciRun(repo, { GITHUB_TOKEN: undefined });
    expect(r.code).toBe(1);
    expect(r.json.reviews.unavailable).toBe('no GITHUB_TOKEN');
    expect(seen).toEqual([]);
  });

  it('reads every page: a "changes requested" on the second page replaces an approval on the first', async () => {
    const { repo, head } = botPr();
    reviews = [review(40, 'alice', head)];
    page2 = [review(41, 'alice', head, 'CHANGES_REQUESTED')];
    const r = await ciRun(repo);
    page2 = [];
    expect(r.code).toBe(1);
    expect(r.json.reviews.ignored).toEqual([
      { id: 40, user: 'alice', why: 'a later review by the same person replaces it' },
    ]);
  });

  it('asks nothing when nothing is blocked', async () => {
    const repo = makeRepo({ 'app.js': 'one\n' });
    repo.git(['checkout', '-q', '-b', 'pr']);
    repo.write('app.js', 'two\n');
    repo.commitAll('small');
    seen.length = 0;
    const r = await ciRun(repo);
    expect(r.code).toBe(0);
    expect(r.json.reviews).toBeUndefined();
    expect(seen).toEqual([]);
  });
});
