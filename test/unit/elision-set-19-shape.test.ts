import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Set 19's frozen shape (`heldout-19-real.json`, `heldout-19-comments.json`):
 * its counts, its item format, and that it holds no text an earlier set holds
 * (lower-cased, whitespace collapsed). No placeholder rule is imported or run
 * here: set 19 is held out until the lead measures it once at the merge
 * (docs/reliability.md, "Set 19").
 */

const DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../corpus/elision');
const REAL = 'heldout-19-real.json';
const COMMENTS = 'heldout-19-comments.json';

interface Item {
  text: string;
  language: string;
  search: string;
  source: string;
  next?: string;
}

function read<T>(name: string): T {
  return JSON.parse(readFileSync(path.join(DIR, name), 'utf8')) as T;
}

function norm(text: string): string {
  return text.trim().toLowerCase().replace(/\s+/g, ' ');
}

/** Every string an earlier set holds as a text (not its about, source, search, language or next). */
function earlierTexts(): Set<string> {
  const seen = new Set<string>();
  const skip = new Set(['about', 'source', 'search', 'language', 'next']);
  const walk = (value: unknown): void => {
    if (typeof value === 'string') seen.add(norm(value));
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) if (!skip.has(key)) walk(inner);
    }
  };
  for (const name of readdirSync(DIR)) {
    if (name.endsWith('.json') && !name.startsWith('heldout-19')) walk(read<unknown>(name));
  }
  return seen;
}

const real = read<{ about: string; placeholders: Item[]; nearMisses: Item[] }>(REAL);
const comments = read<{ about: string; comments: { text: string; source: string }[] }>(COMMENTS);

describe('held-out set 19, frozen', () => {
  it('keeps its counts', () => {
    expect(real.placeholders).toHaveLength(206);
    expect(real.nearMisses).toHaveLength(101);
    expect(comments.comments).toHaveLength(2160);
  });

  it('names each item its search word, source and language, at most 5 of each kind per word', () => {
    for (const kind of [real.placeholders, real.nearMisses]) {
      const perWord = new Map<string, number>();
      for (const item of kind) {
        expect(Object.keys(item).sort()).toEqual(
          Object.keys(item)
            .filter((key) => ['text', 'language', 'search', 'source', 'next'].includes(key))
            .sort(),
        );
        expect(item.text.trim()).not.toBe('');
        expect(item.language).not.toBe('');
        expect(item.source).toMatch(
          /^(search tool code index, file id \d+|https:\/\/github\.com\/[^/]+\/[^/]+\/issues\/\d+)$/,
        );
        perWord.set(item.search, (perWord.get(item.search) ?? 0) + 1);
      }
      for (const count of perWord.values()) expect(count).toBeLessThanOrEqual(5);
    }
    for (const line of comments.comments) {
      expect(line.source).toMatch(/^github:[^/]+\/[^@]+@[0-9a-f]{12}\/.+:\d+$/);
      expect(line.text.length).toBeLessThanOrEqual(200);
    }
  });

  it('holds no text twice and none an earlier set holds', () => {
    const earlier = earlierTexts();
    const all = [...real.placeholders, ...real.nearMisses, ...comments.comments].map((item) =>
      norm(item.text),
    );
    expect(new Set(all).size).toBe(all.length);
    expect(all.filter((text) => earlier.has(text))).toEqual([]);
  });
});
