/**
 * Colour only on a terminal, never with NO_COLOR (https://no-color.org) or
 * --no-color. Eight SGR codes do not warrant a dependency.
 */
export interface Colors {
  enabled: boolean;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
  bold(s: string): string;
  dim(s: string): string;
}

const wrap = (on: boolean, open: number, close: number) => (s: string) =>
  on ? `\u001b[${open}m${s}\u001b[${close}m` : s;

export function makeColors(enabled: boolean): Colors {
  return {
    enabled,
    red: wrap(enabled, 31, 39),
    green: wrap(enabled, 32, 39),
    yellow: wrap(enabled, 33, 39),
    cyan: wrap(enabled, 36, 39),
    bold: wrap(enabled, 1, 22),
    dim: wrap(enabled, 2, 22),
  };
}

export function colorWanted(isTTY: boolean | undefined, flag: boolean | undefined): boolean {
  if (flag === false) return false;
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') return false;
  if (flag === true && process.env.FORCE_COLOR !== undefined) return true;
  return Boolean(isTTY);
}
