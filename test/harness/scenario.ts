/**
 * The scenario every harness plays (HARNESSES.md, "Testing against the real
 * thing"), in a temporary git repository:
 *
 *   committed:    state.py (270 lines), small.py (49), big_module.py (its
 *                 first 20 lines), the harness's hook configuration
 *   uncommitted:  the user's work: big_module.py grown to 200 lines
 *
 *   turn 1  a small legitimate edit of small.py (one line)
 *   turn 2  state.py rewritten as its first 40 lines and an elision comment
 *           (Codex: once with its apply_patch tool, once as the
 *           `apply_patch <<'EOF'` heredoc it sometimes sends through the shell)
 *   turn 3  `git checkout -- .` from the shell tool, over the uncommitted work
 *   turn 4  the end
 */
import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { CLI, fixture, makeRepo, outsideDir, type TestRepo } from '../helpers.js';
import type { HarnessName, RealHarness } from './install.js';
import type { Action } from './model-server.js';

export const STATE = fixture('state.py');
export const SMALL = fixture('small.py');
/**
 * big_module.py as committed: a 20-line start. The user's uncommitted work
 * is the whole 200-line module (a day of work), so the checkout that wipes
 * it replaces a 200-line file: a loss that would need approval, which guard
 * must report, not a small modification it may pass over in silence.
 */
export const BIG = `${fixture('big_module.py').split('\n').slice(0, 20).join('\n')}\n`;
export const USER_WORK = fixture('big_module_modified.py');

export const ELISION = '    # ... rest of the code unchanged ...';
export const KEPT_LINES = 40;
export const TRUNCATED = `${STATE.split('\n').slice(0, KEPT_LINES).join('\n')}\n${ELISION}\n`;

export const SMALL_OLD = '_UNITS = ["B", "KiB", "MiB", "GiB", "TiB"]';
export const SMALL_NEW = '_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]';
export const SMALL_EDITED = SMALL.replace(SMALL_OLD, SMALL_NEW);

export const CHECKOUT = 'git checkout -- .';

/** The truncation as a Codex patch: every line after the first 40 removed, the comment added. */
export function truncationPatch(): string {
  const gone = STATE.split('\n').slice(KEPT_LINES, -1); // the file ends in \n
  return [
    '*** Begin Patch',
    '*** Update File: state.py',
    '@@',
    ...gone.map((l) => `-${l}`),
    `+${ELISION}`,
    '*** End Patch',
    '',
  ].join('\n');
}

export function smallEditPatch(): string {
  return [
    '*** Begin Patch',
    '*** Update File: small.py',
    '@@',
    `-${SMALL_OLD}`,
    `+${SMALL_NEW}`,
    '*** End Patch',
    '',
  ].join('\n');
}

/** Named steps, so assertions can find "the request after the truncation". */
export interface Step {
  name: 'read' | 'edit' | 'read-state' | 'truncate' | 'truncate-heredoc' | 'checkout' | 'end';
  action: Action;
}

export function scriptFor(harness: HarnessName, dir: string): Step[] {
  const abs = (f: string) => path.join(dir, f);
  if (harness === 'codex') {
    return [
      { name: 'edit', action: { kind: 'patch', patch: smallEditPatch() } },
      { name: 'truncate', action: { kind: 'patch', patch: truncationPatch() } },
      {
        name: 'truncate-heredoc',
        action: { kind: 'shell', command: `apply_patch <<'EOF'\n${truncationPatch()}EOF\n` },
      },
      { name: 'checkout', action: { kind: 'shell', command: CHECKOUT } },
      { name: 'end', action: { kind: 'end', text: 'Done.' } },
    ];
  }
  return [
    {
      name: 'edit',
      action: { kind: 'edit', file: abs('small.py'), old: SMALL_OLD, new: SMALL_NEW },
    },
    { name: 'truncate', action: { kind: 'write', file: abs('state.py'), content: TRUNCATED } },
    { name: 'checkout', action: { kind: 'shell', command: CHECKOUT } },
    { name: 'end', action: { kind: 'end', text: 'Done.' } },
  ];
}

/**
 * The Chat Completions harnesses (Copilot CLI, Qwen Code, Continue CLI): a
 * read before each change (Qwen and Continue refuse to edit a file the model
 * has not read), and the reads must pass untouched. Copilot's truncation is
 * an `edit` whose old text is the whole file (its `create` is for new
 * files); with `patch` set (a GPT-5 model) both changes are apply_patch
 * calls carrying the raw patch.
 */
export function chatScriptFor(
  harness: Exclude<RealHarness, HarnessName>,
  dir: string,
  patch = false,
): Step[] {
  const abs = (f: string) => path.join(dir, f);
  // Copilot's create and Droid's Create are for new files: the truncation is an edit of the whole text
  const truncate: Action =
    harness === 'copilot' || harness === 'droid'
      ? { kind: 'edit', file: abs('state.py'), old: STATE, new: TRUNCATED }
      : { kind: 'write', file: abs('state.py'), content: TRUNCATED };
  return [
    { name: 'read', action: { kind: 'read', file: abs('small.py') } },
    {
      name: 'edit',
      action: patch
        ? { kind: 'patch', patch: smallEditPatch() }
        : { kind: 'edit', file: abs('small.py'), old: SMALL_OLD, new: SMALL_NEW },
    },
    { name: 'read-state', action: { kind: 'read', file: abs('state.py') } },
    { name: 'truncate', action: patch ? { kind: 'patch', patch: truncationPatch() } : truncate },
    { name: 'checkout', action: { kind: 'shell', command: CHECKOUT } },
    { name: 'end', action: { kind: 'end', text: 'Done.' } },
  ];
}

export function stepIndex(steps: Step[], name: Step['name']): number {
  const i = steps.findIndex((s) => s.name === name);
  if (i < 0) throw new Error(`no step ${name}`);
  return i;
}

/**
 * The repository before the session: the committed files, guard installed
 * as a user would have it (node_modules/.bin/guard), the hook configuration
 * written by `configure` and committed, then the user's uncommitted work.
 */
export function buildProject(configure: (repo: TestRepo) => void): TestRepo {
  const repo = makeRepo({
    'state.py': STATE,
    'small.py': SMALL,
    'big_module.py': BIG,
    '.gitignore': 'node_modules/\n',
  });
  mkdirSync(path.join(repo.dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(CLI, path.join(repo.dir, 'node_modules', '.bin', 'guard'));
  configure(repo);
  // The project as its user committed it, before the session (a broken config
  // included): past every hook, the branch gate too, which is not under test here.
  repo.git(['add', '-A']);
  repo.git([
    '-c',
    'core.hooksPath=/dev/null',
    'commit',
    '-q',
    '--no-verify',
    '-m',
    'hook configuration',
  ]);
  repo.write('big_module.py', USER_WORK);
  return repo;
}

/** A fresh HOME for one run, outside every repository; removed by cleanupRepos. */
export function freshHome(): string {
  return outsideDir();
}
