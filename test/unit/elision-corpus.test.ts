/**
 * The placeholder rule measured on its corpus (issue 13 item 10): at least
 * 150 distinct truncation placeholders in many comment syntaxes, at least
 * 1,000 real comment lines from third-party open-source code (each with its
 * source; scripts/elision-corpus.mjs rebuilds them). At least 98% of
 * truncations caught, at most 0.5% of real comments flagged.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { elisionFigures } from '../../src/core/elision.js';
import { ROOT } from '../helpers.js';

const corpus = (name: string) =>
  JSON.parse(readFileSync(path.join(ROOT, 'test', 'corpus', 'elision', name), 'utf8'));
const placeholders: Array<{ text: string; syntax: string }> =
  corpus('placeholders.json').placeholders;
const comments: Array<{ text: string; source: string }> = corpus('real-comments.json').comments;

describe('elision corpus', () => {
  it('is as large and as varied as the issue asks, and every real comment says where it came from', () => {
    expect(new Set(placeholders.map((p) => p.text)).size).toBeGreaterThanOrEqual(150);
    expect(new Set(placeholders.map((p) => p.syntax)).size).toBeGreaterThanOrEqual(10);
    expect(new Set(comments.map((c) => c.text)).size).toBeGreaterThanOrEqual(1000);
    for (const c of comments)
      expect(c.source).toMatch(
        /^(npm:(?:@[^/]+\/)?[^/@]+@\d[^/]*|github:[^/]+\/[^@]+@[0-9a-f]{12})\/.+:\d+$/,
      );
    expect(
      new Set(comments.map((c) => c.source.replace(/@\d.*|@[0-9a-f]{12}.*/, ''))).size,
    ).toBeGreaterThanOrEqual(10);
  });

  it('catches at least 98% of truncations and flags at most 0.5% of real comments', () => {
    const f = elisionFigures(
      placeholders.map((p) => p.text),
      comments.map((c) => c.text),
    );
    expect(f.missed).toEqual([]); // today: all caught; the floor below is the contract
    expect(f.recall).toBeGreaterThanOrEqual(0.98);
    expect(f.falsePositiveRate).toBeLessThanOrEqual(0.005);
  });

  it('on phrasings written after the last tuning (held-out.json) it catches at least 75%', () => {
    const held: string[] = corpus('held-out.json').placeholders;
    const f = elisionFigures(held, []);
    expect(f.recall).toBeGreaterThanOrEqual(0.75);
  });

  it('catches every tuning phrasing of issue 20 (tuning-issue20.json)', () => {
    const f = elisionFigures(corpus('tuning-issue20.json').placeholders, []);
    expect(f.missed).toEqual([]);
  });

  // issue 20: four held-out sets, each measured once before it was tuned on (docs/reliability.md has the figures):
  // synthetic heldout-placeholders.json 92.6%, heldout-2-placeholders.json 95.5%; real truncations from
  // public repositories heldout-3-real.json 74.8%, heldout-4-real.json 85.1% (never tuned on).
  const texts = (name: string): string[] =>
    corpus(name).placeholders.map((p: string | { text: string }) =>
      typeof p === 'string' ? p : p.text,
    );
  const realSets = ['heldout-comments.json', 'heldout-2-comments.json', 'heldout-3-comments.json'];

  it('on the sets it was tuned on after their one measurement it catches at least 98%, and flags at most 0.5% of 8,000 real comments (express, guard, node_modules)', () => {
    const tuned = [
      'heldout-placeholders.json',
      'heldout-2-placeholders.json',
      'heldout-3-real.json',
    ].flatMap(texts);
    const real = [
      ...comments.map((c) => c.text),
      ...realSets.flatMap((n) => corpus(n).comments.map((c: { text: string }) => c.text)),
    ];
    expect(real.length).toBeGreaterThanOrEqual(8000);
    const f = elisionFigures(tuned, real);
    expect(f.recall).toBeGreaterThanOrEqual(0.98);
    expect(f.falsePositiveRate).toBeLessThanOrEqual(0.005);
  });

  it('on real truncations it was never tuned on (heldout-4-real.json) it catches at least 85%', () => {
    const held = texts('heldout-4-real.json');
    expect(held.length).toBeGreaterThanOrEqual(60);
    expect(elisionFigures(held, []).recall).toBeGreaterThanOrEqual(0.85);
  });
});
