/**
 * The placeholder rules' probes, shared by the elision round tests: a file of code lines no
 * placeholder or comment can equal, and a comment put in place of some of them (or beside them),
 * asking whether findElisions flags it. `end` is what ends each code line (`;` or nothing: some
 * rounds tried their rules on lines without one).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { findElisions } from '../src/core/elision.js';
import { ROOT } from './helpers.js';

export function elisionProbe(end = ';') {
  const code = (i: number) => `    total_${i} = weigh(value_${i}, ${i})${end}`;
  const file = (n: number) => Array.from({ length: n }, (_, i) => code(i));
  const flagged = (neu: readonly string[], old: readonly string[]) =>
    findElisions(neu.join('\n'), old.join('\n')).length > 0;

  /** `lines` in place of `removed` lines of code from line 10 of a `size`-line file: flagged? */
  function replacing(lines: string | readonly string[], removed: number, size = 40): boolean {
    const old = file(size);
    return flagged([...old.slice(0, 10), ...[lines].flat(), ...old.slice(10 + removed)], old);
  }

  /** `line` and `fresh` new lines of code in place of `removed` lines of code: flagged? */
  function besideNewCode(line: string, removed: number, fresh: number): boolean {
    const old = file(40);
    const added = Array.from({ length: fresh }, (_, i) => `    total_${i} = rescale(total_${i});`);
    return flagged([...old.slice(0, 10), line, ...added, ...old.slice(10 + removed)], old);
  }

  /** `line` added above line 12, which is rewritten (the hard case of the real-comment figures): flagged? */
  function besideRewrite(line: string): boolean {
    const old = file(40);
    const rewritten = '    total_12 = adjust(weigh(value_12, 12));';
    return flagged([...old.slice(0, 12), line, rewritten, ...old.slice(13)], old);
  }

  /** `line` added between lines 20 and 21 of a `size`-line file, nothing removed: flagged? */
  function addedOnly(line: string, size = 40): boolean {
    const old = file(size);
    return flagged([...old.slice(0, 20), line, ...old.slice(20)], old);
  }

  /** Each line is a placeholder alone where 20 lines of code went, and never where nothing went. */
  function onlyAlone(lines: readonly string[]): void {
    for (const line of lines) {
      expect(replacing(line, 20), line).toBe(true);
      expect(addedOnly(line), `${line} (nothing removed)`).toBe(false);
    }
  }

  /** Each line is no placeholder even alone where 20 lines of code went. */
  function never(lines: readonly string[]): void {
    for (const line of lines) expect(replacing(line, 20), line).toBe(false);
  }

  return { code, file, replacing, besideNewCode, besideRewrite, addedOnly, onlyAlone, never };
}

/** A set of test/corpus/elision/. */
export const elisionCorpus = (name: string) =>
  JSON.parse(readFileSync(path.join(ROOT, 'test', 'corpus', 'elision', name), 'utf8')) as {
    placeholders: Array<{ text: string; search?: string }>;
    nearMisses: Array<{ text: string; search?: string }>;
  };
