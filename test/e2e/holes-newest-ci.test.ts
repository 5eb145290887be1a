/**
 * Issue 20, the adversary on the newest doors: `guard ci`'s pull request
 * approvals (src/flows/gates/pr-approvals.ts). GitHub's API is a mock server on
 * 127.0.0.1; the CLI runs in process without blocking this thread (guardAsync) so the server can answer.
 */
import { guardAsync } from '../inproc.js';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, cleanupRepos, makeRepo, type TestRepo } from '../helpers.js';

afterAll(cleanupRepos);

let reviews: unknown[] = [];
let permissions: Record<string, string> = {};
let nextLink: string | null = null;
let server: Server;
let api = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    const send = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (/^\/repos\/acme\/app\/pulls\/7\/reviews\?per_page=100$/.test(req.url ?? '')) {
      if (nextLink) res.setHeader('link', `<${nextLink}>; rel="next"`);
      return send(200, reviews);
    }
    const m = /^\/repos\/acme\/app\/collaborators\/([^/]+)\/permission$/.exec(req.url ?? '');
    if (m) return send(200, { permission: permissions[decodeURIComponent(m[1]!)] ?? 'none' });
    send(404, { message: 'Not Found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  api = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function ciRun(repo: TestRepo): Promise<{ code: number; json: any }> {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'guard-ev-')));
  const ev = path.join(dir, 'event.json');
  writeFileSync(ev, JSON.stringify({ action: 'submitted', pull_request: { number: 7 } }));
  const env = cleanEnv({
    CI: 'true',
    GITHUB_TOKEN: 'tok',
    GITHUB_REPOSITORY: 'acme/app',
    GITHUB_API_URL: api,
    GITHUB_EVENT_PATH: ev,
  });
  // in process (test/inproc.ts), not blocking this thread: the fake API answers from it
  return guardAsync(['ci', '--base', 'main', '--format', 'json'], {
    cwd: repo.dir,
    env: { ...env, CI: env.CI },
  }).then(({ code, stdout }) => ({ code, json: JSON.parse(stdout) }));
}

function pr(): { repo: TestRepo; head: string } {
  const repo = makeRepo({
    '.github/workflows/ci.yml': 'steps:\n  - uses: actions/checkout@v3\n',
    'app.js': 'one\n',
  });
  repo.git(['checkout', '-q', '-b', 'pr']);
  repo.write('.github/workflows/ci.yml', 'steps:\n  - uses: evil/checkout@v1\n');
  return { repo, head: repo.commitAll('swap the checkout action') };
}

const approval = (id: number, login: string, commit: string, association: string) => ({
  id,
  user: { login },
  state: 'APPROVED',
  commit_id: commit,
  author_association: association,
});

describe('guard ci: who may approve a pull request', () => {
  it('an organization MEMBER or a COLLABORATOR with read or triage access only does not approve: the permission endpoint decides', async () => {
    const { repo, head } = pr();
    nextLink = null;
    // GitHub lists an org member with the org's base permission "read" as MEMBER, an invited triager as COLLABORATOR
    reviews = [
      approval(31, 'reader', head, 'MEMBER'),
      approval(32, 'triager', head, 'COLLABORATOR'),
    ];
    permissions = { reader: 'read', triager: 'read' };
    const r = await ciRun(repo);
    expect(r.code).toBe(1);
    expect(r.json.files[0]).toMatchObject({
      path: '.github/workflows/ci.yml',
      decision: 'blocked',
    });
    expect(r.json.reviews.ignored).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: 31, why: 'no write access (MEMBER)' }),
        expect.objectContaining({ id: 32, why: 'no write access (COLLABORATOR)' }),
      ]),
    );
    // the same member with write access does approve
    permissions = { reader: 'write' };
    const ok = await ciRun(repo);
    expect(ok.code).toBe(0);
    expect(ok.json.files[0]).toMatchObject({
      decision: 'approved',
      review: { id: 31, user: 'reader' },
    });
  });

  it('a next page of reviews on another host is a page not read: nothing approves (fail closed)', async () => {
    const { repo, head } = pr();
    permissions = { owner: 'admin' };
    reviews = [approval(41, 'owner', head, 'OWNER')];
    nextLink = 'http://203.0.113.9/repos/acme/app/pulls/7/reviews?per_page=100&page=2';
    const r = await ciRun(repo);
    expect(r.code).toBe(1);
    expect(r.json.files[0]).toMatchObject({ decision: 'blocked' });
    expect(r.json.reviews.unavailable).toMatch(/next page of reviews is not on/);
    nextLink = null;
    expect((await ciRun(repo)).code).toBe(0);
  });
});

/**
 * A commit that turns the approved regular file into a symlink whose target
 * text is the file's content: the same blob, a different thing (git stores a
 * symlink as a blob of its target). Written with update-index so no real link
 * is needed.
 */
function toSymlink(repo: TestRepo, file: string): string {
  const blob = repo.git(['rev-parse', `HEAD:${file}`]).trim();
  repo.git(['update-index', '--cacheinfo', `120000,${blob},${file}`]);
  repo.git(['commit', '-q', '-m', 'same text, now a link']);
  expect(repo.git(['ls-tree', 'HEAD', '--', file])).toMatch(/^120000 blob /);
  return blob;
}

describe('guard ci: an approval covers the mode as well as the blob', () => {
  it('a Guard-Approved: trailer for a regular file does not clear a symlink with the same text at head', async () => {
    const { repo } = pr();
    const file = '.github/workflows/ci.yml';
    const blob = repo.git(['rev-parse', `HEAD:${file}`]).trim();
    repo.git([
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'approve',
      '-m',
      `Guard-Approved: ${file} ${blob}`,
    ]);
    nextLink = null;
    reviews = [];
    expect((await ciRun(repo)).json.files[0]).toMatchObject({ path: file, decision: 'approved' });
    toSymlink(repo, file);
    const r = await ciRun(repo);
    expect(r.code).toBe(1);
    expect(r.json.files[0]).toMatchObject({ path: file, decision: 'blocked' });
    // a trailer that names the symlink's mode does clear it
    repo.git([
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'approve the link',
      '-m',
      `Guard-Approved: ${file} ${blob} 120000`,
    ]);
    const ok = await ciRun(repo);
    expect(ok.code).toBe(0);
    expect(ok.json.files[0]).toMatchObject({ path: file, decision: 'approved' });
  });

  it('a review that saw a regular file does not clear a symlink with the same text at head', async () => {
    const { repo, head } = pr();
    const file = '.github/workflows/ci.yml';
    nextLink = null;
    permissions = { owner: 'admin' };
    reviews = [approval(51, 'owner', head, 'OWNER')];
    expect((await ciRun(repo)).json.files[0]).toMatchObject({
      path: file,
      decision: 'approved',
      review: { id: 51 },
    });
    toSymlink(repo, file);
    const r = await ciRun(repo);
    expect(r.code).toBe(1);
    expect(r.json.files[0]).toMatchObject({ path: file, decision: 'blocked' });
    // a review of the link itself clears it
    reviews = [approval(52, 'owner', repo.git(['rev-parse', 'HEAD']).trim(), 'OWNER')];
    expect((await ciRun(repo)).code).toBe(0);
  });
});
