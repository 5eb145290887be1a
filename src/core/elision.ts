/**
 * Elision placeholders: the lines an agent writes where it meant "the rest
 * stays as it was" and so truncates a file. Each pattern is matched against
 * one trimmed line. Add to the list; every entry is tested in
 * test/unit/elision.test.ts.
 */
const COMMENT = String.raw`(?:\/\/|#|--|;|\/\*+|<!--|\{\/\*|\*)`;
const DOTS = String.raw`(?:\.{3,}|…)`;
const REST = String.raw`(?:rest|remainder|remaining|others?)`;
const CODE = String.raw`(?:code|file|implementation|methods?|functions?|logic|content|lines?|body|class|module|tests?|imports?|definitions?)`;
const SAME = String.raw`(?:unchanged|the same|as before|as is|omitted|elided|not shown|truncated|remains?|stays?|kept)`;
const END = String.raw`\s*(?:\*\/|-->|\*\/\})?\s*$`;

export const ELISION_PATTERNS: readonly RegExp[] = [
  // // ... existing code ...      # ... rest of the code here ...
  new RegExp(String.raw`^${COMMENT}\s*${DOTS}\s*(?:\(?\s*)?(?:existing|previous|original|other|${REST}|same|more|unchanged)\b.*${END}`, 'i'),
  // # rest of code here      // rest of the file unchanged
  new RegExp(String.raw`^${COMMENT}\s*(?:the\s+)?${REST}\s+(?:of\s+(?:the\s+)?)?(?:existing\s+)?${CODE}\b.*${END}`, 'i'),
  // /* unchanged */     // existing code unchanged      # keep existing methods
  new RegExp(String.raw`^${COMMENT}\s*(?:${DOTS}\s*)?(?:(?:existing|previous|original|other)\s+${CODE}\s*)?${SAME}\s*${DOTS}?${END}`, 'i'),
  new RegExp(String.raw`^${COMMENT}\s*(?:keep|keeping)\s+(?:the\s+)?(?:existing|previous|original|${REST})\b.*${END}`, 'i'),
  new RegExp(String.raw`^${COMMENT}\s*(?:existing|previous|original)\s+${CODE}\b.*${DOTS}?${END}`, 'i'),
  // a line that is only "..." inside a comment:  // ...   # …
  new RegExp(String.raw`^${COMMENT}\s*${DOTS}${END}`, 'i'),
];

export function isElisionLine(line: string): boolean {
  const t = line.trim();
  if (t.length < 3 || t.length > 160) return false;
  return ELISION_PATTERNS.some((re) => re.test(t));
}

export interface Elision {
  line: number; // 1-based, in the new content
  text: string;
}

/**
 * Placeholder lines in `newText` that do not already stand in `oldText`:
 * a placeholder the file always had is not a truncation. Stops at `limit`.
 */
export function findElisions(newText: string, oldText: string, limit = 3): Elision[] {
  const found: Elision[] = [];
  let oldLines: Set<string> | undefined;
  const lines = newText.split('\n');
  for (let i = 0; i < lines.length && found.length < limit; i++) {
    const line = lines[i]!;
    if (!isElisionLine(line)) continue;
    oldLines ??= new Set(oldText.split('\n').map((l) => l.trim()));
    if (oldLines.has(line.trim())) continue;
    found.push({ line: i + 1, text: line.trim() });
  }
  return found;
}
