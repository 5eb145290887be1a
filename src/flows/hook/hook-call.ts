import { GuardError } from '../../core/errors.js';
import { failReason } from '../../harness/decide.js';
import { PayloadError, type HookEvent } from '../../harness/types.js';
import type { HookResult } from './hook.js';

/**
 * One translated tool call judged, for every door into the hook: `guard
 * hook HARNESS` (a process per call, src/cli/hook.ts) and the plugins that
 * run guard inside the harness (src/plugin). Same checks, same flow; a
 * failure is the caller's to answer in its blocking form, with the words of
 * reasonFor.
 */
export async function judgeEvent(
  event: HookEvent,
  auto: boolean,
  projectDir?: string,
): Promise<HookResult> {
  if (typeof event.cwd !== 'string' || !event.cwd.startsWith('/'))
    throw new PayloadError(`cwd ${JSON.stringify(event.cwd)} is not an absolute path`);
  // a tool guard does not gate (Read, Grep, ...): answered before git or the flow is loaded
  if (event.action.kind === 'other') return { outcome: { kind: 'none' }, notes: [] };
  const [{ runHook }, { withCallCatFile }] = await Promise.all([
    import('./hook.js'),
    import('../../git/resident.js'),
  ]);
  // projectDir: the folder the harness runs the hook for, judged too when the agent moved cwd away
  return withCallCatFile(() => runHook({ event, auto, ...(projectDir ? { projectDir } : {}) }));
}

/** The reason a refused call gives the model when guard itself failed (fail closed). */
export function reasonFor(err: unknown, harness: string): string {
  if (err instanceof PayloadError)
    return failReason(
      `the ${harness} payload is not what guard expects: ${err.message}`,
      'guard may be older than the harness: update guard',
    );
  if (err instanceof GuardError) {
    if (err.code === 'E_PATH_ESCAPE')
      return `guard refused this write: ${err.message}. Write files inside the repository, never into .git/ or through a link that leads out of it.`;
    return failReason(err.message, err.hint);
  }
  const e = err instanceof Error ? err : new Error(String(err));
  if (process.env.GUARD_DEBUG === '1') process.stderr.write(`${e.stack ?? e.message}\n`);
  return failReason(`internal error: ${e.message}`, 'this is a bug in guard');
}
