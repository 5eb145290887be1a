import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Issue 20 (holes4): guard writes a ref under refs/guard/ one way only,
 * git/journal.ts journaledRefWrite (named in the journal as coming, written,
 * noted), so a new writer cannot forget a step: a ref written without it is
 * one the doors cannot tell from a forged one, and a journal that does not
 * name most refs reads as replaced. Every git command in src/ that creates
 * or moves a ref (update-ref other than deletions, fast-import, a fetch into
 * a refspec) runs inside a journaledRefWrite callback; the journal's lower
 * notes are not exported.
 */
const SRC = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');
const files = (readdirSync(SRC, { recursive: true }) as string[])
  .filter((f) => f.endsWith('.ts'))
  .map((f) => path.join(SRC, f));

/** Sites that only delete refs, or put back refs the journal already names (guard recover). */
const NOT_WRITES: Record<string, string> = {
  'apply/refs-target.ts':
    "guard recover: creates only refs the journal names (they are its word), journaled by recover's startJournal",
};

describe('refs are written the one journaled way', () => {
  it('every git command that writes a ref runs inside journaledRefWrite', () => {
    const outside: string[] = [];
    for (const file of files) {
      const rel = path.relative(SRC, file);
      if (NOT_WRITES[rel]) continue;
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, i) => {
        const m = /git\(\s*\[\s*'(update-ref|fast-import|fetch)'/.exec(line);
        if (!m) return;
        const call = lines.slice(i, i + 4).join('\n');
        // deletions: `-d`, or a transaction of `delete` lines (built as `del` / deleteRefs' input)
        if (
          /'-d'/.test(call) ||
          /input: del\b/.test(call) ||
          /delete \$\{/.test(lines.slice(i - 3, i).join('\n'))
        )
          return;
        const above = lines.slice(Math.max(0, i - 8), i).join('\n');
        // records' fast-import is its own function: it counts if its only call is inside journaledRefWrite
        const fn = /async function (\w+)\(/.exec(
          lines.slice(Math.max(0, i - 8), i).join('\n'),
        )?.[1];
        const text = lines.join('\n');
        const callers = fn ? [...text.matchAll(new RegExp(`(?<!function )\\b${fn}\\(`, 'g'))] : [];
        const inside =
          callers.length === 1 &&
          /journaledRefWrite\([^]*$/.test(
            text.slice(Math.max(0, callers[0]!.index! - 200), callers[0]!.index!),
          );
        if (!/journaledRefWrite\(/.test(above) && !inside) outside.push(`${rel}:${i + 1} ${m[1]}`);
      });
    }
    expect(outside).toEqual([]);
  });

  it("the journal's own notes of a written ref are not exported", () => {
    const text = readFileSync(path.join(SRC, 'git', 'journal.ts'), 'utf8');
    expect(text).not.toMatch(/export function noteTips\b/);
    expect(text).not.toMatch(/export function ensureJournal\b/);
    expect(text).toMatch(/export async function journaledRefWrite\b/);
  });
});
