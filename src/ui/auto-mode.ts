/**
 * Auto mode: no person is there to ask, so what needs approval is blocked.
 * On with --auto, GUARD_AUTO=1, CI=true (any CI value but empty, 0, false).
 * (No terminal at all also means auto mode: that is found out when guard
 * tries to open /dev/tty, see terminal.ts.) Kept apart from terminal.ts so
 * the hook's path does not load readline and tty.
 */
export function isAutoMode(flag: boolean | undefined): boolean {
  if (flag) return true;
  if (process.env.GUARD_AUTO === '1' || process.env.GUARD_AUTO === 'true') return true;
  const ci = process.env.CI;
  if (ci !== undefined && ci !== '' && ci !== '0' && ci !== 'false') return true;
  return false;
}
