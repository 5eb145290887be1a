import { spawnSync } from 'node:child_process';
import { symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  claudeDecision,
  claudeRepo,
  cleanEnv,
  cleanupRepos,
  lines,
  makeRepo,
  outsideDir,
  type TestRepo,
} from '../helpers.js';
import { codex, codexRun, copilotPayload, patch } from './codex-payload.js';

/**
 * adv12 (docs/reliability/adv12.md): the doors merged last (s2h's gated after event of Claude
 * Code's writes, realbg's Copilot still-running text, adv11's `wait` exemption, `guard log`'s LOST
 * paths) attacked through the real door: `guard hook HARNESS` as its own process with the payloads
 * the harness sends, real git in a temp repository. What a process left running does after the
 * call's after event is done by the test (each spelling was run for real in bash 5.2 first: the
 * shell returned at once and its job ran on).
 */
afterAll(cleanupRepos);

describe("adv12: adv11's `wait` exemption (a & b & wait), attacked", () => {
  // `wait` made a function by code the command runs (eval, source, .): the raw text never says
  // `wait()`, and the shell returns at once with the job running (bash: `eval 'wai''t() { :; }';
  // sleep 39 & wait` returned in 7 ms, sleep 39 still running)
  it.each([
    "eval 'wai''t() { :; }'; (sleep 1; rm keep.py) > /dev/null 2>&1 & wait",
    "printf 'wai%s() { :; }' t > /tmp/adv12-w.sh; . /tmp/adv12-w.sh; (sleep 1; rm keep.py) & wait",
    'source ./wait-helpers.sh; (sleep 1; rm keep.py) & wait',
    // a DEBUG trap runs before each command in this shell (bash: returned in 4 ms, the job ran on)
    "trap 'wai''t() { :; }' DEBUG; (sleep 1; rm keep.py) > /dev/null 2>&1 & wait",
    // `.` after a keyword (it was read as an option's value there)
    'if true; then . ./wait-helpers.sh; fi; (sleep 1; rm keep.py) & wait',
  ])('codex: wait redefined by code run before it: %s', (command) => {
    expect(codexRun(command)).toContain('keep.py');
  });

  // was a hole while adv11's exemption stood: the shell exits at once (`kill $$`, exit 143), the
  // job runs on. Which job ends the shell cannot be read from the text (a script's own `kill
  // $PPID`, python's os.kill), so the exemption is gone: every background `&` is read as detached,
  // a wait after it or not (the price: checkpoints for 30 minutes, never a refusal)
  it.each([
    '(sleep 1; rm keep.py) > /dev/null 2>&1 & kill $$ & wait',
    '(sleep 1; rm keep.py) > /dev/null 2>&1 & kill -KILL $$ & wait',
  ])('codex: a job that ends the shell before its wait: %s', (command) => {
    expect(codexRun(command)).toContain('keep.py');
  });

  // what the exemption let through is read as detached again: a later loss is told as the command's
  it.each(['npm run lint & npm run test & wait', 'cp a.txt . & cp b.txt . & wait'])(
    'codex, jobs waited for, still read as open: %s',
    (command) => {
      expect(codexRun(command)).toContain('keep.py');
    },
  );
});

const copilot = (repo: TestRepo, tool: string, args: object, post = false, text?: string) => {
  const p = copilotPayload(repo, tool, args, post);
  if (text !== undefined) p.toolResult = { resultType: 'success', textResultForLlm: text };
  const r = repo.guard(['hook', 'copilot'], { input: JSON.stringify(p) });
  return { ...r, json: r.stdout.trim() ? JSON.parse(r.stdout) : null };
};

describe("adv12: Copilot's still-running text (realbg), attacked", () => {
  /** A sync bash whose post event carries `text`; then keep.py goes; then the next call. */
  function run(text: string, command = 'echo building; sleep 36; rm keep.py') {
    const repo = makeRepo({ 'keep.py': lines(300), 'small.py': 'a\n' });
    const bash = { command, description: 'x', mode: 'sync' };
    copilot(repo, 'bash', bash);
    copilot(repo, 'bash', bash, true, text);
    unlinkSync(path.join(repo.dir, 'keep.py'));
    const edit = { path: path.join(repo.dir, 'small.py'), old_str: 'a', new_str: 'b' };
    return copilot(repo, 'edit', edit).json?.permissionDecisionReason ?? '';
  }
  const notice =
    '<command with shellId: 0 is still running after 30 seconds. The command is still running. You will be automatically notified when it completes; if you need the command to complete end your response with no tool calls to wait for the notification. Use stop_bash to stop it.>';

  // Copilot 1.0.102's own words (its runtime.node): "If a command hasn't completed within
  // initial_wait, it returns partial output and continues running", and a finished command's text
  // is its output then `<shellId: 0 completed ...>`: a command that printed a line in its first
  // 30 s has its output before the notice. Read only at the text's start, it was hidden.
  it('the notice after partial output: the command is still read as running on', () => {
    expect(run(`building\n${notice}`)).toContain('keep.py was deleted (300 lines)');
  });

  // the notice first, then output the command printed ending in a finished command's tag: read
  it('the notice first, then output that ends like a finished command: still read as running on', () => {
    expect(run(`${notice}\nbuilding\n<shellId: 0 completed with exit code 0>`)).toContain(
      'keep.py was deleted (300 lines)',
    );
  });

  // the command's own output, on a line of its own, on a command that completed: not read
  it("the command's output naming the notice on a later line, on a command that completed: not read as running on", () => {
    const fake = `building\n${notice.replace('shellId: 0', 'shellId: 7')}\n<shellId: 0 completed with exit code 0>`;
    expect(run(fake, `echo building; echo '${notice}'`)).toBe('');
  });

  // ... but output that opens with it is Copilot's own notice-first text as far as guard can
  // tell (the order with output was not seen): read as running on, a cost (its call open 30
  // minutes, a person's later deletion told as the command's), never a loss untold. Pinned.
  it.fails("the command's own output opening with the notice, on a command that completed: not read as running on", () => {
    const fake = `${notice.replace('shellId: 0', 'shellId: 7')}\n<shellId: 0 completed with exit code 0>`;
    expect(run(fake, `echo '${notice}'`)).toBe('');
  });
});

describe("adv12: Claude Code's gated after event of a write (s2h), attacked", () => {
  type Group = { matcher: string; hooks: Array<{ command: string }> };
  const commandFor = (repo: TestRepo, event: string, tool: string): string => {
    const hooks: Record<string, Group[]> = JSON.parse(repo.read('.claude/settings.json')).hooks;
    const found = hooks[event]!.filter((g) => new RegExp(g.matcher).test(tool));
    expect(found).toHaveLength(1);
    return found[0]!.hooks[0]!.command;
  };
  const payload = (repo: TestRepo, input: object, id: string, post: boolean) =>
    JSON.stringify({
      session_id: 'adv12-gate',
      transcript_path: '/tmp/t.jsonl',
      cwd: repo.dir,
      permission_mode: 'default',
      hook_event_name: post ? 'PostToolUse' : 'PreToolUse',
      tool_name: 'Write',
      tool_input: input,
      tool_use_id: id,
      ...(post ? { tool_response: {} } : {}),
    });
  /** The installed command run as Claude Code runs it: through sh, its project variable set. */
  const run = (repo: TestRepo, command: string, input: string) =>
    spawnSync('sh', ['-c', command], {
      cwd: repo.dir,
      input,
      encoding: 'utf8',
      env: cleanEnv({ CLAUDE_PROJECT_DIR: repo.dir, CLAUDE_CODE_ENTRYPOINT: 'cli', CI: undefined }),
    });

  // `[ ! -e LINK ]` is true for a link that leads nowhere, and guard's before event would not make
  // its folder through it: one `ln -s /nowhere .git/guard-asked` by the agent closed the gate for
  // every later write put to a person (removing the folder loses one approval: this lost all)
  it('a dangling link planted at .git/guard-asked: a write the person approved is still recorded', () => {
    const repo = claudeRepo({ 'state.py': lines(200) });
    symlinkSync(path.join(outsideDir(), 'nowhere'), path.join(repo.dir, '.git', 'guard-asked'));
    const input = { file_path: path.join(repo.dir, 'state.py'), content: lines(10) };
    const pre = run(
      repo,
      commandFor(repo, 'PreToolUse', 'Write'),
      payload(repo, input, 'w1', false),
    );
    expect(claudeDecision({ json: JSON.parse(pre.stdout) })).toBe('ask');
    writeFileSync(input.file_path, input.content);
    run(repo, commandFor(repo, 'PostToolUse', 'Write'), payload(repo, input, 'w1', true));
    const log = repo.guardJson(['log', '--session', 'adv12-gate']).json;
    expect(log.entries.find((e: { kind: string }) => e.kind === 'decision')).toMatchObject({
      path: 'state.py',
      decision: 'approved',
    });
  });
});

describe('adv12: held (run so that a change that opens them fails)', () => {
  // three background commands open, two files taken: each told once, at the next call, none never
  it('codex: three background commands open, two files lost: each told once, then the call runs', () => {
    const repo = makeRepo({ 'keep.py': lines(300), 'state.py': lines(200), 'x.py': 'x\n' });
    for (const [i, f] of ['a.py', 'b.py', 'c.py'].entries()) {
      const command = `(sleep 3; rm ${f}) > /dev/null 2>&1 &`;
      codex(repo, 'PreToolUse', 'Bash', { command }, `b${i}`);
      codex(repo, 'PostToolUse', 'Bash', { command }, `b${i}`);
    }
    unlinkSync(path.join(repo.dir, 'keep.py'));
    unlinkSync(path.join(repo.dir, 'state.py'));
    const r = codex(repo, 'PreToolUse', 'apply_patch', patch, 'p1');
    const why: string = r.json?.hookSpecificOutput?.permissionDecisionReason ?? '';
    expect(why.match(/keep\.py was deleted/g), why).toHaveLength(1);
    expect(why.match(/state\.py was deleted/g), why).toHaveLength(1);
    expect(codex(repo, 'PreToolUse', 'apply_patch', patch, 'p1').json).toBeNull();
  });

  // the gate put before the shells' after event (a command's losses would go untold), or the two
  // after groups' matchers swapped: the net's entries differ from what init wrote
  it.each(['gate on the shells', 'matchers swapped'])('claude settings: %s', (how) => {
    const repo = claudeRepo({ 'app.py': lines(20) });
    const s = JSON.parse(repo.read('.claude/settings.json'));
    const [shells, writes] = s.hooks.PostToolUse.slice(-2);
    if (how === 'gate on the shells') shells.hooks[0].command = writes.hooks[0].command;
    else [shells.matcher, writes.matcher] = [writes.matcher, shells.matcher];
    repo.write('.claude/settings.json', JSON.stringify(s, null, 2));
    expect(repo.guardJson(['doctor']).json.checks).toContainEqual(
      expect.objectContaining({ id: 'integrity:agent', severity: 'error' }),
    );
  });
});
