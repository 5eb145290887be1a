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

  it('catches every tuning phrasing of issue 20 (tuning-issue20.json)', () => {
    const f = elisionFigures(corpus('tuning-issue20.json').placeholders, []);
    expect(f.missed).toEqual([]);
  });

  // issue 20, first held-out set: written before this round's rules were tuned and measured once
  // (2026-11-24): 199 of 215 caught (92.6%); 12 of 5,748 real comments flagged (0.21%). Tuned on since.
  it('on the first held-out set (heldout-placeholders.json, tuned on after its one measurement) it catches at least 98%, and flags at most 0.5% of real comments (express, guard, node_modules)', () => {
    const held: string[] = corpus('heldout-placeholders.json').placeholders;
    const real: Array<{ text: string; source: string }> = corpus('heldout-comments.json').comments;
    expect(new Set(held).size).toBeGreaterThanOrEqual(200);
    expect(real.filter((c) => c.source.startsWith('express@')).length).toBeGreaterThanOrEqual(2000);
    const f = elisionFigures(held, [...comments.map((c) => c.text), ...real.map((c) => c.text)]);
    expect(f.recall).toBeGreaterThanOrEqual(0.98);
    expect(f.falsePositiveRate).toBeLessThanOrEqual(0.005);
  });

  // issue 20, second held-out set: written after the first was measured, before any further tuning,
  // measured once (2026-11-24): 193 of 202 caught (95.5%); 1 of 1,242 fresh real comments flagged (0.08%).
  // Never tuned on: the floors keep the figure from sliding; the next round writes a fresh heldout-* set.
  it('on the second held-out set (heldout-2-placeholders.json, never tuned on) it catches at least 95%, and flags at most 0.5% of fresh real comments', () => {
    const held: string[] = corpus('heldout-2-placeholders.json').placeholders;
    const real: Array<{ text: string; source: string }> = corpus('heldout-2-comments.json').comments;
    expect(new Set(held).size).toBeGreaterThanOrEqual(200);
    expect(real.length).toBeGreaterThanOrEqual(1000);
    const f = elisionFigures(held, real.map((c) => c.text));
    expect(f.recall).toBeGreaterThanOrEqual(0.95);
    expect(f.falsePositiveRate).toBeLessThanOrEqual(0.005);
  });
});
