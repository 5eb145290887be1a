/**
 * Tools that wrote outside guard's matcher, in the real Claude Code (2.1.330)
 * against the scripted model (test/harness/): NotebookEdit, and an MCP
 * server's write_file (test/harness/mcp-fs-server.mjs, given with
 * `--mcp-config`). guard is installed by `guard init --agent claude`, as a
 * user does. docs/reliability/holes3.md.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupRepos, lines, outsideDir, type TestRepo } from '../helpers.js';
import { claudeProject, installClaude, playClaude } from '../harness/claude-project.js';
import type { Installed } from '../harness/install.js';
import type { Action } from '../harness/model-server.js';

const MCP_SERVER = fileURLToPath(new URL('../harness/mcp-fs-server.mjs', import.meta.url));
const WORK = lines(200) + lines(150, 'work');

let installed: Installed;

beforeAll(async () => {
  installed = await installClaude();
}, 300_000);

afterAll(cleanupRepos);

const project = claudeProject;
async function play(repo: TestRepo, actions: Action[], extraArgs: string[] = []) {
  const played = await playClaude(installed, repo, actions, extraArgs);
  return { ...played, last: played.server.requestAtStep(actions.length) };
}

const NB =
  JSON.stringify(
    {
      cells: [
        {
          cell_type: 'code',
          execution_count: 1,
          id: 'intro',
          metadata: {},
          outputs: [],
          source: ['import os\n'],
        },
        {
          cell_type: 'code',
          execution_count: 2,
          id: 'model',
          metadata: {},
          outputs: [],
          source: lines(150, 'weights = weights + 1  # step').split(/(?<=\n)/),
        },
      ],
      metadata: { language_info: { name: 'python' } },
      nbformat: 4,
      nbformat_minor: 5,
    },
    null,
    1,
  ) + '\n';

describe('NotebookEdit, which the matcher did not name', () => {
  it('deleting a 150-line cell is refused (on de3edbb: the cell was gone, guard never asked)', async () => {
    const repo = project({ 'nb.ipynb': NB });
    const nb = path.join(repo.dir, 'nb.ipynb');
    // Claude Code edits a notebook only after reading it
    const { run, last, told } = await play(repo, [
      { kind: 'read', file: nb },
      {
        kind: 'tool',
        name: 'NotebookEdit',
        input: { notebook_path: nb, cell_id: 'model', new_source: '', edit_mode: 'delete' },
      },
    ]);
    expect(last, run.stdout.slice(-3000)).toBeDefined();
    expect(repo.read('nb.ipynb')).toBe(NB);
    expect(told.slice(0, 2000)).toMatch(/guard refused|nb\.ipynb/);
    expect(repo.refs('refs/guard/rejected/').length).toBe(1);
  }, 120_000);
});

describe("an MCP server's write_file, which the matcher did not name", () => {
  it('over 150 lines of uncommitted work: checkpointed before, reported after, restorable (on de3edbb: nothing kept or told)', async () => {
    const repo = project({ 'big.py': lines(200) });
    repo.write('big.py', WORK);
    const config = path.join(outsideDir(), 'mcp.json');
    writeFileSync(
      config,
      JSON.stringify({ mcpServers: { fs: { command: process.execPath, args: [MCP_SERVER] } } }),
    );
    const { run, last, told } = await play(
      repo,
      [
        {
          kind: 'tool',
          name: 'mcp__fs__write_file',
          input: { path: path.join(repo.dir, 'big.py'), content: 'x\n' },
        },
      ],
      ['--mcp-config', config],
    );
    expect(last, run.stdout.slice(-3000)).toBeDefined();
    // the server ran the tool: guard cannot refuse what it cannot read, it kept and told
    expect(repo.read('big.py')).toBe('x\n');
    expect(told).toMatch(/big\.py/);
    const id = /guard restore (\S+)/.exec(told.replace(/\\n/g, '\n'))?.[1];
    expect(id, told).toBeDefined();
    expect(repo.guard(['restore', id!, '--', 'big.py']).code).toBe(0);
    expect(repo.read('big.py')).toBe(WORK);
  }, 120_000);
});

describe("Monitor, Claude Code's background command (adv2), which the matcher did not name", () => {
  it('a Monitor command that removes uncommitted work: checkpointed before it runs and after, restorable', async () => {
    const repo = project({ 'big.py': lines(200) });
    repo.write('big.py', WORK);
    const before = repo.refs('refs/guard/checkpoints/').length;
    const { run, last } = await play(repo, [
      {
        kind: 'tool',
        name: 'Monitor',
        input: { command: 'rm big.py', description: 'watch', timeout_ms: 5000 },
      },
    ]);
    expect(last, run.stdout.slice(-3000)).toBeDefined();
    const after = repo.refs('refs/guard/checkpoints/');
    expect(after.length, run.stdout.slice(-3000)).toBeGreaterThan(before);
    const id = repo
      .guardJson(['log', '--json'])
      .json.entries.find(
        (e: { kind: string; reason?: string }) =>
          e.kind === 'checkpoint' && /^before claude shell: rm big\.py/.test(e.reason ?? ''),
      )?.id;
    const entries = repo.guardJson(['log', '--json']).json.entries;
    expect(id, JSON.stringify(entries)).toBeDefined();
    // its after event too: with Monitor outside the matcher Claude Code 2.1.330 runs only Bash's
    // PreToolUse for the command, so nothing reported what it destroyed
    expect(entries.map((e: { reason?: string }) => e.reason)).toContain(
      'after claude shell: rm big.py',
    );
    expect(repo.guard(['restore', id, '--', 'big.py']).code).toBe(0);
    expect(repo.read('big.py')).toBe(WORK);
  }, 120_000);
});
