/**
 * What counts as guard's hook in a harness's settings (setup/hook-command.ts):
 * exactly what `guard init --agent` writes. init, doctor and the net share it.
 */
import { describe, expect, it } from 'vitest';
import {
  askGate,
  fallback,
  isGuardAskGatedCommand,
  isGuardHookCommand,
} from '../../src/flows/setup/hook-command.js';
import { HARNESSES, isPluginHarness } from '../../src/harness/types.js';

const FILE = '/home/me/app/.claude/settings.json';
/** Each form init writes, with a settings file of the project it names. */
const programs: Array<[string, string]> = [
  ['"$CLAUDE_PROJECT_DIR"/node_modules/.bin/guard', FILE],
  ['/home/me/app/node_modules/.bin/guard', FILE],
  ["'/home/me/my app/node_modules/.bin/guard'", '/home/me/my app/.gemini/settings.json'],
  ["'/home/me/it'\\''s/node_modules/.bin/guard'", "/home/me/it's/.codex/hooks.json"],
  ['cd /home/me/app && yarn guard', FILE],
  ['cd "$CLAUDE_PROJECT_DIR" && yarn guard', FILE],
  ['/usr/bin/node /usr/lib/node_modules/guard-cli/dist/cli/main.js', FILE],
  ["'/opt/node 24/bin/node' '/opt/guard cli/dist/cli/main.js'", FILE],
];
const wrote = (prog: string, h = 'claude') => `${prog} hook ${h}${fallback(h as never)}`;

describe('isGuardHookCommand', () => {
  it("takes every form init writes, for every command-hook harness, in the project's settings", () => {
    for (const h of HARNESSES.filter((x) => !isPluginHarness(x)))
      for (const [p, file] of programs) {
        expect(isGuardHookCommand(wrote(p, h), h, file), `${h}: ${p}`).toBe(true);
        expect(isGuardHookCommand(wrote(p, h)), `${h}: ${p} (any harness)`).toBe(true);
      }
  });

  it.each([
    ['a mention', `echo guard hook claude; true${fallback('claude')}`],
    ['a mention, no fallback', 'echo guard hook claude; true'],
    [
      'its failure turned into success',
      '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/guard hook claude || true',
    ],
    ['no fallback', '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/guard hook claude'],
    ['in the background', '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/guard hook claude & '],
    [
      'in the background, then the fallback',
      `"$CLAUDE_PROJECT_DIR"/node_modules/.bin/guard hook claude & true${fallback('claude')}`,
    ],
    [
      'a variable set for it',
      `GUARD_HOOK_TIMEOUT=1 "$CLAUDE_PROJECT_DIR"/node_modules/.bin/guard hook claude${fallback('claude')}`,
    ],
    ['another program named guard', `/tmp/evil/guard hook claude${fallback('claude')}`],
    ['guard on PATH', `guard hook claude${fallback('claude')}`],
    ['npx', `npx guard hook claude${fallback('claude')}`],
    [
      'a fallback that lets the tool run',
      `"$CLAUDE_PROJECT_DIR"/node_modules/.bin/guard hook claude || { echo 'x' >&2; exit 0; }`,
    ],
    [
      'a second command after it',
      `"$CLAUDE_PROJECT_DIR"/node_modules/.bin/guard hook claude${fallback('claude')}; true`,
    ],
    [
      'a subshell prefix',
      `(true) && "$CLAUDE_PROJECT_DIR"/node_modules/.bin/guard hook claude${fallback('claude')}`,
    ],
    ['a main.js that is not a path', `node main.js hook claude${fallback('claude')}`],
  ])('refuses %s', (_, command) => {
    expect(isGuardHookCommand(command, 'claude', FILE)).toBe(false);
    expect(isGuardHookCommand(command)).toBe(false);
  });

  it("guard's hook for another harness is not this harness's", () => {
    const gemini = `"$CLAUDE_PROJECT_DIR"/node_modules/.bin/guard hook gemini${fallback('gemini')}`;
    expect(isGuardHookCommand(gemini, 'claude', FILE)).toBe(false);
    expect(isGuardHookCommand(gemini, 'gemini', FILE)).toBe(true);
  });

  it("an absolute guard or yarn folder outside the project holding the settings file is not the project's guard", () => {
    expect(isGuardHookCommand(wrote('/tmp/evil/node_modules/.bin/guard'), 'claude', FILE)).toBe(
      false,
    );
    expect(isGuardHookCommand(wrote('cd /tmp/evil && yarn guard'), 'claude', FILE)).toBe(false);
    expect(isGuardHookCommand(wrote('/home/me/app/node_modules/.bin/guard'), 'claude', FILE)).toBe(
      true,
    );
  });
});

describe('isGuardAskGatedCommand (the after event of a write, Claude Code alone)', () => {
  const gate = askGate('claude')!;
  it('takes the gate then any form init writes, and only for a harness that can ask', () => {
    for (const [p, file] of programs)
      expect(isGuardAskGatedCommand(gate + wrote(p), 'claude', file), p).toBe(true);
    for (const h of HARNESSES.filter((x) => x !== 'claude')) expect(askGate(h), h).toBeNull();
  });

  it.each([
    [
      'the plain hook (it is isGuardHookCommand)',
      wrote('"$CLAUDE_PROJECT_DIR"/node_modules/.bin/guard'),
    ],
    [
      'a gate that always skips',
      `true || ${wrote('"$CLAUDE_PROJECT_DIR"/node_modules/.bin/guard')}`,
    ],
    [
      'a gate on another folder',
      gate.replace(/guard-asked/, 'nothing') +
        wrote('"$CLAUDE_PROJECT_DIR"/node_modules/.bin/guard'),
    ],
    ['the gate before something else', `${gate}/tmp/evil/guard hook claude${fallback('claude')}`],
  ])('refuses %s', (_, command) => {
    expect(isGuardAskGatedCommand(command, 'claude', FILE)).toBe(false);
  });

  it("is never guard's hook as a before event reads it: doctor and the net count it as not guard's there", () => {
    const command = gate + wrote('"$CLAUDE_PROJECT_DIR"/node_modules/.bin/guard');
    expect(isGuardHookCommand(command, 'claude', FILE)).toBe(false);
    expect(isGuardHookCommand(command)).toBe(false);
  });
});
