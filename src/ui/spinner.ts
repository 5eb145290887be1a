/**
 * A progress spinner (ora) on stderr for work that turns out to be long:
 * only on a terminal, never with --json, --quiet or in CI, and ora is loaded
 * only once the work has taken longer than DELAY_MS, so a quick command
 * (the usual `guard check`) never pays for it.
 */
const DELAY_MS = 400;

export interface Spinner {
  stop(): void;
}

export function spinnerWanted(flags: { json?: boolean; quiet?: boolean }): boolean {
  if (flags.json || flags.quiet || !process.stderr.isTTY) return false;
  const ci = process.env.CI;
  return ci === undefined || ci === '' || ci === '0' || ci === 'false';
}

export function delayedSpinner(text: string, color: boolean): Spinner {
  let stopped = false;
  let spinner: { stop(): unknown } | null = null;
  const timer = setTimeout(() => {
    void import('ora').then(({ default: ora }) => {
      if (stopped) return;
      spinner = ora({
        text,
        stream: process.stderr,
        color: color ? 'cyan' : false,
        discardStdin: false,
      }).start();
    });
  }, DELAY_MS);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      spinner?.stop();
    },
  };
}
