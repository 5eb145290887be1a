import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCodexPatch, patchInShell } from '../../src/harness/codex-patch.js';
import {
  applyInsertLine,
  applyPatchChunks,
  applySearchReplace,
  applyStringEdits,
  parseSearchReplace,
} from '../../src/harness/edits.js';
import type { Change } from '../../src/harness/types.js';
import { PayloadError } from '../../src/harness/types.js';
import { withBudget } from '../../src/runtime/deadline.js';

const ok = (text: string) => ({ ok: true, text });

describe('exact-string edits (Claude Edit/MultiEdit, Gemini replace)', () => {
  it('replaces the one occurrence', () => {
    expect(
      applyStringEdits('alpha\nbeta\ngamma\n', [
        { oldString: 'beta', newString: 'BETA', replaceAll: false },
      ]),
    ).toEqual(ok('alpha\nBETA\ngamma\n'));
  });
  it('cannot apply: not found, found twice without replace_all, same text', () => {
    expect(
      applyStringEdits('a\n', [{ oldString: 'x', newString: 'y', replaceAll: false }]),
    ).toEqual({ ok: false, why: expect.stringContaining('old_string is not in the file') });
    expect(
      applyStringEdits('a a', [{ oldString: 'a', newString: 'b', replaceAll: false }]),
    ).toMatchObject({ ok: false, why: expect.stringContaining('2 times') });
    expect(applyStringEdits('a', [{ oldString: 'a', newString: 'a', replaceAll: false }]).ok).toBe(
      false,
    );
  });
  it('replace_all, in order, and `$` in the new text stays literal', () => {
    expect(
      applyStringEdits('a a a', [{ oldString: 'a', newString: '$&b', replaceAll: true }]),
    ).toEqual(ok('$&b $&b $&b'));
    expect(
      applyStringEdits('one two', [
        { oldString: 'one', newString: 'two', replaceAll: false },
        { oldString: 'two two', newString: 'x', replaceAll: false },
      ]),
    ).toEqual(ok('x'));
    expect(applyStringEdits('x', [{ oldString: 'x', newString: "$'", replaceAll: false }])).toEqual(
      ok("$'"),
    );
  });
  it('an empty old_string creates a file (only on an empty one)', () => {
    expect(
      applyStringEdits('', [{ oldString: '', newString: 'new\n', replaceAll: false }]),
    ).toEqual(ok('new\n'));
    expect(
      applyStringEdits('x', [{ oldString: '', newString: 'new\n', replaceAll: false }]).ok,
    ).toBe(false);
  });
});

describe('Cline SEARCH/REPLACE blocks', () => {
  it('parses both markers and applies blocks in order', () => {
    const diff =
      '------- SEARCH\nb\n=======\nB\n+++++++ REPLACE\n<<<<<<< SEARCH\nd\n=======\nD\n>>>>>>> REPLACE';
    const blocks = parseSearchReplace(diff)!;
    expect(blocks).toEqual([
      { search: 'b\n', replace: 'B\n' },
      { search: 'd\n', replace: 'D\n' },
    ]);
    expect(applySearchReplace('a\nb\nc\nd\n', blocks)).toEqual(ok('a\nB\nc\nD\n'));
    expect(applySearchReplace('a\n', blocks)).toEqual({
      ok: false,
      why: 'SEARCH block 1 not found',
    });
  });
  it('an unfinished block is not a diff', () => {
    expect(parseSearchReplace('------- SEARCH\nb\n=======\nB\n')).toBeNull();
  });
});

/** Parse one patch and apply its single update to `text`. */
function update(patch: string, text: string) {
  const [f] = parseCodexPatch(patch);
  const c = f!.change as Extract<Change, { kind: 'chunks' }>;
  return applyPatchChunks(text, c.chunks);
}

describe('Codex patches: any text ends in a result or a PayloadError', () => {
  // "@@x" as a chunk's first line was taken for a line no branch consumed: the parser looped
  // forever, and a synchronous loop starves guard's own deadline (found splitting the parser).
  it('"@@x" where a chunk starts is refused, not read forever', () => {
    const patch = [
      '*** Begin Patch',
      '*** Update File: a.ts',
      '@@x',
      '-a',
      '+b',
      '*** End Patch',
    ].join('\n');
    expect(() => parseCodexPatch(patch)).toThrow(PayloadError);
  });

  it('never loops, whatever lines sit between Begin and End (property)', () => {
    const line = fc.constantFrom(
      '@@',
      '@@ ctx',
      '@@x',
      '@@@',
      '-a',
      '+b',
      ' c',
      '',
      '*** End of File',
      '*** Update File: a.ts',
      '*** Add File: b.ts',
      '*** Delete File: c.ts',
      '*** Move to: d.ts',
      '*** Bogus',
      'plain',
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), (body) => {
        const patch = ['*** Begin Patch', ...body, '*** End Patch'].join('\n');
        try {
          expect(Array.isArray(parseCodexPatch(patch))).toBe(true);
        } catch (e) {
          expect(e).toBeInstanceOf(PayloadError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('Codex patches: real shapes', () => {
  it('add, delete, update with move, several files in one patch', () => {
    const patch = [
      '*** Begin Patch',
      '*** Add File: docs/new.md',
      '+# Title',
      '+',
      '+body',
      '*** Delete File: old/gone.py',
      '*** Update File: src/app.py',
      '*** Move to: src/main.py',
      '@@ def main():',
      '-    print("hi")',
      '+    print("hello")',
      '*** End Patch',
    ].join('\n');
    const files = parseCodexPatch(patch);
    expect(files.map((f) => [f.path, f.change.kind])).toEqual([
      ['docs/new.md', 'content'],
      ['old/gone.py', 'delete'],
      ['src/main.py', 'chunks'],
      ['src/app.py', 'delete'],
    ]);
    expect(files[0]!.change).toEqual({ kind: 'content', content: '# Title\n\nbody\n' });
    expect(files[2]!.change).toMatchObject({
      from: 'src/app.py',
      chunks: [
        { context: 'def main():', oldLines: ['    print("hi")'], newLines: ['    print("hello")'] },
      ],
    });
  });
  it('context hunks apply below their @@ line; several chunks in order', () => {
    const text =
      'class A:\n    def f(self):\n        return 1\n\nclass B:\n    def f(self):\n        return 1\n';
    const patch =
      '*** Begin Patch\n*** Update File: m.py\n@@ class B:\n     def f(self):\n-        return 1\n+        return 2\n*** End Patch\n';
    expect(update(patch, text)).toEqual(
      ok(
        'class A:\n    def f(self):\n        return 1\n\nclass B:\n    def f(self):\n        return 2\n',
      ),
    );
    const two =
      '*** Begin Patch\n*** Update File: m.py\n@@\n-class A:\n+class AA:\n@@\n-class B:\n+class BB:\n*** End Patch';
    expect(update(two, text)).toMatchObject({
      ok: true,
      text: expect.stringMatching(/^class AA:[\s\S]*class BB:/),
    });
  });
  it('a file without a trailing newline gets one (as codex writes it)', () => {
    expect(
      update('*** Begin Patch\n*** Update File: a\n@@\n-b\n+B\n*** End Patch', 'a\nb'),
    ).toEqual(ok('a\nB\n'));
  });
  it('*** End of File anchors the chunk at the end', () => {
    const text = 'x\nend\nx\nend\n';
    expect(
      update(
        '*** Begin Patch\n*** Update File: a\n@@\n x\n-end\n+END\n*** End of File\n*** End Patch',
        text,
      ),
    ).toEqual(ok('x\nend\nx\nEND\n'));
  });
  it('trailing whitespace differences still match (codex seeks loosely)', () => {
    expect(
      update('*** Begin Patch\n*** Update File: a\n@@\n-b\n+B\n*** End Patch', 'a\nb   \nc\n'),
    ).toEqual(ok('a\nB\nc\n'));
  });
  it('a chunk whose lines are gone cannot apply', () => {
    expect(
      update('*** Begin Patch\n*** Update File: a\n@@\n-zzz\n+y\n*** End Patch', 'a\n').ok,
    ).toBe(false);
  });
  it('a pure insertion (no old lines) goes at the end', () => {
    expect(update('*** Begin Patch\n*** Update File: a\n@@\n+z\n*** End Patch', 'a\n')).toEqual(
      ok('a\nz\n'),
    );
  });
  it('rejects what is not a patch', () => {
    expect(() => parseCodexPatch('hello')).toThrow(/Begin Patch/);
    expect(() => parseCodexPatch('*** Begin Patch\n*** End Patch')).toThrow(/changes no file/);
  });
  it('finds a patch in a shell heredoc (<<EOF, <<"EOF", <<-EOF, cd first), not in other commands', () => {
    const body = '*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n';
    expect(patchInShell(`apply_patch <<'EOF'\n${body}EOF\n`)).toEqual({ patch: body, cd: null });
    expect(patchInShell(`apply_patch <<"PATCH"\n${body}PATCH`)).toEqual({ patch: body, cd: null });
    expect(patchInShell(`cd "my dir" && apply_patch <<EOF\n${body}EOF`)).toEqual({
      patch: body,
      cd: 'my dir',
    });
    expect(patchInShell('cat <<EOF > a\nx\nEOF')).toBeNull();
    expect(patchInShell('git checkout -- .')).toBeNull();
  });
});

describe('Cline editor insert_line (as @cline/core 3.0.65 does it)', () => {
  it('inserts before the line, keeps CRLF, refuses a line out of range', () => {
    expect(applyInsertLine('a\nb\n', 1, 'x')).toEqual({ ok: true, text: 'x\na\nb\n' });
    expect(applyInsertLine('a\nb\n', 2, 'x\ny')).toEqual({ ok: true, text: 'a\nx\ny\nb\n' });
    // "a\nb\n" is three pieces, so line 4 is past the final newline
    expect(applyInsertLine('a\nb\n', 4, 'x')).toEqual({ ok: true, text: 'a\nb\n\nx' });
    expect(applyInsertLine('a\r\nb', 2, 'x\n')).toEqual({ ok: true, text: 'a\r\nx\r\n\r\nb' });
    expect(applyInsertLine('a\n', 0, 'x').ok).toBe(false);
    expect(applyInsertLine('a\n', 4, 'x').ok).toBe(false);
  });
});

describe("long pure work checks the call's budget", () => {
  it('a patch whose lines are sought lines x pattern times throws E_TIMEOUT once the budget passes', () => {
    const file = Array.from({ length: 4_000 }, () => 'x').join('\n') + '\n';
    const chunk = {
      context: null,
      oldLines: [...Array.from({ length: 1_000 }, () => 'x'), 'y'],
      newLines: ['z'],
      endOfFile: false,
    };
    expect(() => withBudget(0.01, () => applyPatchChunks(file, [chunk]))).toThrow(
      expect.objectContaining({
        code: 'E_TIMEOUT',
        message: expect.stringContaining('ran out of time (0.01 s)'),
      }),
    );
  });

  it('without a budget the same work runs to its end (nothing fails outside a hook call)', () => {
    const file = Array.from({ length: 400 }, () => 'x').join('\n') + '\n';
    const chunk = {
      context: null,
      oldLines: [...Array.from({ length: 100 }, () => 'x'), 'y'],
      newLines: ['z'],
      endOfFile: false,
    };
    expect(applyPatchChunks(file, [chunk])).toMatchObject({ ok: false });
  });

  it('a loose replace-all over a large CRLF file gives what replacing each line gives (one pass, not one copy per find)', () => {
    const file = 'a\r\nb\r\n'.repeat(20_000);
    const r = applyStringEdits(file, [{ oldString: 'a\nb\n', newString: 'c\n', replaceAll: true }]);
    expect(r).toMatchObject({ ok: true, text: 'c\r\n'.repeat(20_000) });
  });
});
