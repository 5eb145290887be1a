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

const corpus = (name: string) => JSON.parse(readFileSync(path.join(ROOT, 'test', 'corpus', 'elision', name), 'utf8'));
const placeholders: Array<{ text: string; syntax: string }> = corpus('placeholders.json').placeholders;
const comments: Array<{ text: string; source: string }> = corpus('real-comments.json').comments;

describe('elision corpus', () => {
  it('is as large and as varied as the issue asks, and every real comment says where it came from', () => {
    expect(new Set(placeholders.map((p) => p.text)).size).toBeGreaterThanOrEqual(150);
    expect(new Set(placeholders.map((p) => p.syntax)).size).toBeGreaterThanOrEqual(10);
    expect(new Set(comments.map((c) => c.text)).size).toBeGreaterThanOrEqual(1000);
    for (const c of comments) expect(c.source).toMatch(/^(npm:(?:@[^/]+\/)?[^/@]+@\d[^/]*|github:[^/]+\/[^@]+@[0-9a-f]{12})\/.+:\d+$/);
    expect(new Set(comments.map((c) => c.source.replace(/@\d.*|@[0-9a-f]{12}.*/, ''))).size).toBeGreaterThanOrEqual(10);
  });

  it('catches at least 98% of truncations and flags at most 0.5% of real comments', () => {
    const f = elisionFigures(placeholders.map((p) => p.text), comments.map((c) => c.text));
    expect(f.missed).toEqual([]); // today: all caught; the floor below is the contract
    expect(f.recall).toBeGreaterThanOrEqual(0.98);
    expect(f.falsePositiveRate).toBeLessThanOrEqual(0.005);
  });

  it('on phrasings written after the last tuning (held-out.json) it catches at least 75%', () => {
    const held: string[] = corpus('held-out.json').placeholders;
    const f = elisionFigures(held, []);
    expect(f.recall).toBeGreaterThanOrEqual(0.75);
  });

  // issue 20: written before this round's rules were tuned, measured once at the end (2026-11-24):
  // 199 of 215 caught (92.6%); 12 of 5,748 real comments flagged (0.21%) as if each stood where code was removed.
  // The floors below keep that figure from sliding; the next round writes a fresh heldout-* set.
  it('on the held-out set (heldout-placeholders.json, never tuned on) it catches at least 92%, and flags at most 0.5% of real comments (express, guard, node_modules)', () => {
    const held: string[] = corpus('heldout-placeholders.json').placeholders;
    const real: Array<{ text: string; source: string }> = corpus('heldout-comments.json').comments;
    expect(new Set(held).size).toBeGreaterThanOrEqual(200);
    expect(real.filter((c) => c.source.startsWith('express@')).length).toBeGreaterThanOrEqual(2000);
    const f = elisionFigures(held, [...comments.map((c) => c.text), ...real.map((c) => c.text)]);
    expect(f.recall).toBeGreaterThanOrEqual(0.92);
    expect(f.falsePositiveRate).toBeLessThanOrEqual(0.005);
  });
});
