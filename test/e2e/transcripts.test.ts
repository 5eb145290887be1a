import {
  existsSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ROOT,
  TestRepo as TestRepoClass,
  cleanupRepos,
  fixture,
  laneWrite,
  lines,
  makeRepo,
  outsideDir,
  startLane,
  type Run,
  type TestRepo,
} from '../helpers.js';
import { TRANSCRIPTS } from './transcripts.expected.js';

afterAll(cleanupRepos);

/**
 * Whole transcripts of the main outputs (exit code, stdout, stderr), with
 * what changes from run to run normalised: times, object ids, ref ids, the
 * temporary folder. A change of wording shows as a diff of
 * transcripts.expected.ts (TRANSCRIPTS_PRINT=1 prints the new ones).
 */
function normalise(repo: TestRepo, r: Run): string {
  const clean = (s: string) =>
    s
      .split(repo.dir)
      .join('<repo>')
      .replace(/\d{8}T\d{6}Z-[0-9a-f]+/g, '<id>')
      .replace(/\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
      .replace(/\b[0-9a-f]{40}\b/g, '<oid>')
      .replace(/\b[0-9a-f]{7,12}\b/g, '<short>')
      // node's JSON.parse messages differ between node versions
      .replace(/is not valid JSON: .*$/gm, 'is not valid JSON: <parse error>');
  return `exit ${r.code}\n--- stdout\n${clean(r.stdout)}--- stderr\n${clean(r.stderr)}`;
}

const seen: Record<string, string> = {};
function expectTranscript(name: string, repo: TestRepo, r: Run): void {
  seen[name] = normalise(repo, r);
  if (process.env.TRANSCRIPTS_PRINT) return;
  expect(seen[name], `transcript ${name}`).toBe((TRANSCRIPTS as Record<string, string>)[name]);
}
afterAll(() => {
  if (process.env.TRANSCRIPTS_PRINT)
    writeFileSync(process.env.TRANSCRIPTS_PRINT, JSON.stringify(seen, null, 2));
});

describe('transcripts of the main outputs', () => {
  it('check: blocked, and allowed (silent)', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py'), 'notes.txt': 'a\n' });
    repo.write('state.py', fixture('state_replacement.py'));
    repo.write('notes.txt', 'a\nb\n');
    repo.git(['add', '-A']);
    expectTranscript('checkBlocked', repo, repo.guard(['check']));
    repo.git(['reset', '-q', '--', 'state.py']);
    expectTranscript('checkAllowed', repo, repo.guard(['check']));
  });

  it('write: allowed, then blocked', () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'state.py': fixture('state.py') });
    expectTranscript('writeAllowed', repo, repo.guard(['write', 'a.txt'], { input: 'a\nb\n' }));
    expectTranscript(
      'writeBlocked',
      repo,
      repo.guard(['write', 'state.py'], { input: fixture('state_replacement.py') }),
    );
  });

  it('lanes, review --dry-run, review, log', () => {
    const repo = makeRepo({
      'state.py': fixture('state.py'),
      'a.txt': 'a\n',
      'guard.config.json': '{}',
    });
    const lane = startLane(repo);
    laneWrite(lane, 'state.py', fixture('state_replacement.py'));
    laneWrite(lane, 'a.txt', 'a\nb\n');
    laneWrite(lane, 'new.txt', lines(3));
    expectTranscript('lanes', repo, repo.guard(['lanes']));
    expectTranscript('reviewDryRun', repo, repo.guard(['review', 'agent', '--dry-run']));
    writeFileSync(
      path.join(repo.dir, '.git', 'decisions.json'),
      JSON.stringify([{ path: 'state.py', action: 'approve', strategy: 'append' }]),
    );
    expectTranscript(
      'review',
      repo,
      repo.guard(['review', 'agent', '--decisions', '.git/decisions.json']),
    );
    expectTranscript('reviewAgain', repo, repo.guard(['review', 'agent']));
    expectTranscript('log', repo, repo.guard(['log']));
  });

  it('doctor', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    expectTranscript('doctor', repo, repo.guard(['doctor']));
  });
});

describe('words', () => {
  it('discard honours --quiet; ci --help describes --format', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    startLane(repo, 'gone');
    const quiet = repo.guard(['discard', 'gone', '--quiet']);
    expect([quiet.code, quiet.stdout, quiet.stderr]).toEqual([0, '', '']);
    const help = repo.guard(['ci', '--help']);
    expect(help.stdout).toMatch(/--format\s+text for people; json/);
  });
});

/* ------------------------------------------------------------------ */
/* Every harness protocol: `guard hook NAME` answers an allowed write, a
 * blocked one (a 270-line module replaced: needs a person, auto mode denies)
 * and a payload it cannot read, each in the harness's own words. */

const SAMPLES = path.join(ROOT, 'fixtures', 'harness-samples');
/** A recorded payload with its project folder moved to `dir`. */
function sample(name: string, dir: string): any {
  return JSON.parse(
    readFileSync(path.join(SAMPLES, `${name}.json`), 'utf8')
      .split('/home/dev/project')
      .join(dir),
  );
}

type Write = (dir: string, file: string, content: string) => object;
const claudeStyle =
  (name: string, tool: string, input: (p: string, c: string) => object): Write =>
  (dir, file, content) => ({
    ...sample(name, dir),
    tool_name: tool,
    tool_input: input(path.join(dir, file), content),
  });
const patch = (file: string, content: string, exists: boolean) =>
  exists
    ? `*** Begin Patch\n*** Delete File: ${file}\n*** End Patch\n`
    : `*** Begin Patch\n*** Add File: ${file}\n${content.replace(/^/gm, '+').replace(/\+$/, '')}*** End Patch\n`;

/** Per harness: the payload of a write of `file` (a patch deletes it when it exists). */
const WRITES: Record<string, Write> = {
  claude: claudeStyle('claude-Write-PreToolUse', 'Write', (p, c) => ({ file_path: p, content: c })),
  gemini: claudeStyle('gemini-write_file-BeforeTool', 'write_file', (p, c) => ({
    file_path: p,
    content: c,
  })),
  codex: (dir, file, content) => ({
    ...sample('codex-apply_patch-PreToolUse', dir),
    tool_input: { command: patch(file, content, file === 'state.py') },
  }),
  copilot: (dir, file, content) => ({
    ...sample('copilot-create-preToolUse', dir),
    toolArgs: { path: path.join(dir, file), file_text: content },
  }),
  cursor: (dir, file, content) => ({
    hook_event_name: 'preToolUse',
    conversation_id: 'conv-1',
    generation_id: 'gen-1',
    workspace_roots: [dir],
    tool_name: 'Write',
    tool_input: { file_path: path.join(dir, file), contents: content },
  }),
  cline: (dir, file, content) => {
    const p = sample('cline-apply_patch-PreToolUse', dir);
    const input = { input: patch(file, content, file === 'state.py') };
    return {
      ...p,
      tool_call: { ...p.tool_call, input },
      preToolUse: { toolName: 'apply_patch', parameters: input },
    };
  },
  continue: claudeStyle('claude-Write-PreToolUse', 'Write', (p, c) => ({
    filepath: p,
    content: c,
  })),
  qwen: claudeStyle('qwen-write_file-PreToolUse', 'write_file', (p, c) => ({
    file_path: p,
    content: c,
  })),
  auggie: (dir, file, content) => ({
    hook_event_name: 'PreToolUse',
    conversation_id: 'conv-1',
    workspace_roots: [dir],
    tool_name: 'save-file',
    tool_input: { path: path.join(dir, file), file_content: content },
  }),
  droid: claudeStyle('droid-Create-PreToolUse', 'Create', (p, c) => ({ file_path: p, content: c })),
  crush: claudeStyle('claude-Write-PreToolUse', 'write', (p, c) => ({ file_path: p, content: c })),
};

describe('transcripts of every harness protocol (guard hook NAME)', () => {
  for (const [name, write] of Object.entries(WRITES)) {
    it(`${name}: an allowed write, a blocked one, a payload it cannot read`, () => {
      const repo = makeRepo({ 'state.py': fixture('state.py') });
      const hook = (payload: object | string) =>
        repo.guard(['hook', name], {
          input: typeof payload === 'string' ? payload : JSON.stringify(payload),
        });
      expectTranscript(
        `hook_${name}_allow`,
        repo,
        hook(write(repo.dir, 'hello.txt', 'hello from the rig\n')),
      );
      expectTranscript(
        `hook_${name}_deny`,
        repo,
        hook(write(repo.dir, 'state.py', fixture('state_replacement.py'))),
      );
      // JSON of another shape (not broken JSON: node's parse errors differ between versions)
      expectTranscript(`hook_${name}_malformed`, repo, hook('{"not": "a payload"}'));
    });
  }

  it('claude: a shell call before and after (checkpoint; what it lost)', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py'), 'a.txt': 'a\n' });
    const bash = (event: string, command: string) => ({
      ...sample('claude-Bash-PreToolUse', repo.dir),
      hook_event_name: event,
      tool_input: { command },
    });
    expectTranscript(
      'hook_claude_shell_pre',
      repo,
      repo.guard(['hook', 'claude'], { input: JSON.stringify(bash('PreToolUse', 'rm state.py')) }),
    );
    rmSync(path.join(repo.dir, 'state.py'));
    expectTranscript(
      'hook_claude_shell_post',
      repo,
      repo.guard(['hook', 'claude'], { input: JSON.stringify(bash('PostToolUse', 'rm state.py')) }),
    );
  });
});

/* ------------------------------------------------------------------ */
/* Every `guard ci --format`: a pull request with one change that needs
 * approval and one that does not. */

describe('transcripts of guard ci, each format', () => {
  it('text, json, github, markdown, sarif', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py'), 'a.txt': 'a\n' });
    repo.write('state.py', fixture('state_replacement.py'));
    repo.write('a.txt', 'a\nb\n');
    repo.commitAll('agent work');
    // no runner here: the github format prints its annotations, and writes no job summary
    const env = {
      GITHUB_ACTIONS: undefined,
      GITHUB_STEP_SUMMARY: undefined,
      GITHUB_EVENT_PATH: undefined,
      GITHUB_REPOSITORY: undefined,
    };
    const version = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
      .version as string;
    for (const format of ['text', 'json', 'github', 'markdown', 'sarif']) {
      const r = repo.guard(['ci', '--base', 'HEAD~1', '--format', format], { env });
      expectTranscript(`ci_${format}`, repo, {
        ...r,
        stdout: r.stdout.split(`"version": "${version}"`).join('"version": "<guard version>"'),
      });
    }
  });
});

/* ------------------------------------------------------------------ */
/* Each error code with its hint: one line naming the problem, one hint, the
 * exit code; and the same under --json. */

describe('transcripts of errors and their hints', () => {
  it('not a repository', () => {
    const repo = new TestRepoOutside();
    // git stops looking for a repository at the temp folder (a stray /tmp/.git must not count)
    const env = { GIT_CEILING_DIRECTORIES: path.dirname(repo.dir) };
    expectTranscript('err_not_a_repo', repo, repo.guard(['check'], { env }));
    expectTranscript('err_not_a_repo_json', repo, repo.guard(['log', '--json'], { env }));
  });

  it('bad config, unknown lane, lane exists, no checkpoint, usage', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    repo.write('guard.config.json', '{"lineThreshold": "many"}\n');
    repo.write('a.txt', 'a\nb\n');
    repo.git(['add', '-A']);
    expectTranscript('err_bad_config', repo, repo.guard(['check']));
    repo.write('guard.config.json', '{ not json\n');
    repo.git(['add', 'guard.config.json']);
    expectTranscript('err_config_not_json', repo, repo.guard(['check']));
    repo.git(['reset', '-q', '--', 'guard.config.json']);
    rmSync(path.join(repo.dir, 'guard.config.json'));
    expectTranscript('err_unknown_lane', repo, repo.guard(['review', 'nope']));
    expectTranscript('err_unknown_lane_json', repo, repo.guard(['discard', 'nope', '--json']));
    startLane(repo, 'agent');
    expectTranscript('err_lane_exists', repo, repo.guard(['start', 'agent']));
    expectTranscript(
      'err_no_checkpoint',
      repo,
      repo.guard(['restore', '20200101T000000Z-00000000']),
    );
    expectTranscript('err_usage_flag', repo, repo.guard(['check', '--no-such-flag']));
    expectTranscript('err_usage_command', repo, repo.guard(['frobnicate']));
    expectTranscript(
      'err_ci_format',
      repo,
      repo.guard(['ci', '--base', 'HEAD', '--format', 'xml']),
    );
  });

  it('bad decisions files', () => {
    const repo = makeRepo({ 'state.py': fixture('state.py') });
    const lane = startLane(repo);
    laneWrite(lane, 'state.py', fixture('state_replacement.py'));
    const decisions = (name: string, content: string) => {
      writeFileSync(path.join(repo.dir, '.git', name), content);
      return repo.guard(['review', 'agent', '--decisions', `.git/${name}`]);
    };
    expectTranscript(
      'err_decisions_missing',
      repo,
      repo.guard(['review', 'agent', '--decisions', '.git/none.json']),
    );
    expectTranscript('err_decisions_not_json', repo, decisions('d1.json', '[{"path": '));
    expectTranscript(
      'err_decisions_bad_action',
      repo,
      decisions('d2.json', JSON.stringify([{ path: 'state.py', action: 'maybe' }])),
    );
    expectTranscript(
      'err_decisions_unknown_path',
      repo,
      decisions('d3.json', JSON.stringify([{ path: 'other.py', action: 'approve' }])),
    );
  });

  it('paths escaping the tree', () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    expectTranscript(
      'err_write_escape',
      repo,
      repo.guard(['write', '../outside.txt'], { input: 'x\n' }),
    );
    expectTranscript(
      'err_write_escape_json',
      repo,
      repo.guard(['write', '../outside.txt', '--json'], { input: 'x\n' }),
    );
    const { json } = repo.guardJson(['write', 'a.txt'], { input: 'a\nb\n' });
    expectTranscript(
      'err_restore_escape',
      repo,
      repo.guard(['restore', json.checkpoint, '--', '../outside.txt']),
    );
    const hook = (p: string) =>
      repo.guard(['hook', 'claude'], { input: JSON.stringify(WRITES.claude!(repo.dir, p, 'x\n')) });
    // a write outside the project is not guard's to judge: allowed, silently
    expectTranscript('hook_claude_outside_project', repo, hook('../outside.txt'));
    expectTranscript('err_hook_git_dir', repo, hook('.git/hooks/pre-commit'));
  });
});

/** A folder that is no git repository, with the TestRepo calls the transcripts use. */
class TestRepoOutside extends TestRepoClass {
  constructor() {
    // not under /tmp: guard's hook-integrity warning walks up to any stray /tmp/.git (other tests have left one)
    super(
      existsSync('/var/tmp') ? realpathSync(mkdtempSync('/var/tmp/guard-outside-')) : outsideDir(),
    );
    cleanupLater(this);
  }
}
const outside: TestRepoClass[] = [];
function cleanupLater(r: TestRepoClass): void {
  outside.push(r);
}
afterAll(() => {
  for (const r of outside.splice(0)) r.cleanup();
});
