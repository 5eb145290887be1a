import type { FileChange, PatchChunk } from './types.js';
import { PayloadError } from './types.js';

/**
 * Codex's patch format (codex-rs/apply-patch, the `apply_patch` tool):
 *
 *   *** Begin Patch
 *   *** Add File: path          then lines, each prefixed "+"
 *   *** Delete File: path
 *   *** Update File: path
 *   *** Move to: other/path     (optional)
 *   @@ optional context line
 *    context / -removed / +added lines
 *   *** End of File             (optional: the chunk ends the file)
 *   *** End Patch
 *
 * Paths are relative to the call's working folder.
 */
export function parseCodexPatch(text: string): FileChange[] {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  // the tool's input may be wrapped in blank lines; a heredoc body has none
  while (lines.length && lines[lines.length - 1]!.trim() === '') lines.pop();
  while (lines.length && lines[0]!.trim() === '') lines.shift();
  if (lines[0]?.trim() !== '*** Begin Patch')
    throw new PayloadError('the patch does not start with "*** Begin Patch"');
  if (lines[lines.length - 1]?.trim() !== '*** End Patch')
    throw new PayloadError('the patch does not end with "*** End Patch"');
  const at: Cursor = { body: lines.slice(1, -1), i: 0 };
  const files: FileChange[] = [];
  while (at.i < at.body.length) {
    const line = at.body[at.i]!;
    let p: string | null;
    if ((p = header(line, 'Add File')) !== null) {
      at.i++;
      const added: string[] = [];
      while (at.i < at.body.length && at.body[at.i]!.startsWith('+'))
        added.push(at.body[at.i++]!.slice(1));
      files.push({
        path: p,
        change: { kind: 'content', content: added.length ? added.join('\n') + '\n' : '' },
      });
    } else if ((p = header(line, 'Delete File')) !== null) {
      at.i++;
      files.push({ path: p, change: { kind: 'delete' } });
    } else if ((p = header(line, 'Update File')) !== null) {
      at.i++;
      files.push(...readUpdate(at, p));
    } else if (line.trim() === '') {
      at.i++;
    } else {
      throw new PayloadError(
        `patch line ${at.i + 2}: expected "*** Add File:", "*** Delete File:" or "*** Update File:", got ${JSON.stringify(line.slice(0, 60))}`,
      );
    }
  }
  if (files.length === 0) throw new PayloadError('the patch changes no file');
  return files;
}

/** The patch's lines between Begin and End, and the line being read. */
interface Cursor {
  body: string[];
  i: number;
}

function header(line: string, tag: string): string | null {
  return line.startsWith(`*** ${tag}: `) ? line.slice(tag.length + 6).trim() : null;
}

/** An `Update File` section after its header: its chunks, and a move (`Move to`) as the new path plus a delete. */
function readUpdate(at: Cursor, p: string): FileChange[] {
  let moveTo: string | null = null;
  if (at.i < at.body.length && (moveTo = header(at.body[at.i]!, 'Move to')) !== null) at.i++;
  const chunks: PatchChunk[] = [];
  while (at.i < at.body.length && !at.body[at.i]!.startsWith('*** ')) {
    const chunk = readChunk(at, chunks.length === 0);
    if (chunk.oldLines.length === 0 && chunk.newLines.length === 0 && chunk.context === null)
      continue;
    chunks.push(chunk);
  }
  if (chunks.length === 0 && moveTo === null)
    throw new PayloadError(`patch: Update File ${p} has no changes`);
  if (moveTo !== null && moveTo !== p) {
    return [
      { path: moveTo, change: { kind: 'chunks', chunks, from: p } },
      { path: p, change: { kind: 'delete' } },
    ];
  }
  return [{ path: p, change: { kind: 'chunks', chunks } }];
}

/** One chunk: `@@ context`, then context, removed and added lines, perhaps `*** End of File`. */
function readChunk(at: Cursor, first: boolean): PatchChunk {
  const chunk: PatchChunk = { context: null, oldLines: [], newLines: [], endOfFile: false };
  const start = at.body[at.i]!;
  if (start === '@@' || start.startsWith('@@ ')) {
    chunk.context = start === '@@' ? null : start.slice(3);
    at.i++;
  } else if (!first || start.startsWith('@@')) {
    // ("@@x" is no chunk header, and taken as a line it would never be read: the loop would not move on)
    throw new PayloadError(
      `patch line ${at.i + 2}: expected "@@" to start a chunk, got ${JSON.stringify(start.slice(0, 60))}`,
    );
  }
  // (the first chunk may start without "@@", as codex accepts)
  while (at.i < at.body.length) {
    const l = at.body[at.i]!;
    if (l === '*** End of File') {
      chunk.endOfFile = true;
      at.i++;
      break;
    }
    if (l.startsWith('@@') || l.startsWith('*** ')) break;
    if (l === '' || l.startsWith(' ')) {
      chunk.oldLines.push(l.slice(1));
      chunk.newLines.push(l.slice(1));
    } else if (l.startsWith('-')) chunk.oldLines.push(l.slice(1));
    else if (l.startsWith('+')) chunk.newLines.push(l.slice(1));
    else
      throw new PayloadError(
        `patch line ${at.i + 2}: a chunk line must start with " ", "-" or "+", got ${JSON.stringify(l.slice(0, 60))}`,
      );
    at.i++;
  }
  return chunk;
}

/**
 * Codex may send a patch through its shell tool instead of the apply_patch
 * tool (HARNESSES.md): `apply_patch <<'EOF' ... EOF`, possibly after a
 * `cd DIR &&`. The patch text, and the folder it was applied in when a cd
 * says so; null when the command is not such a heredoc.
 */
export function patchInShell(command: string): { patch: string; cd: string | null } | null {
  const m =
    /^\s*(?:cd\s+("[^"]*"|'[^']*'|\S+)\s*&&\s*)?(?:apply_patch|applypatch)\s*<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\2[ \t]*\n/.exec(
      command,
    );
  if (m) {
    const tag = m[3]!;
    const rest = command.slice(m[0].length);
    const end = new RegExp(`^${tag}\\s*$`, 'm').exec(rest);
    const patch = end ? rest.slice(0, end.index) : rest;
    const cd = m[1] ? m[1].replace(/^["']|["']$/g, '') : null;
    return { patch, cd };
  }
  // `apply_patch '*** Begin Patch ...'` as one argument
  const arg =
    /^\s*(?:apply_patch|applypatch)\s+(['"])(\*\*\* Begin Patch[\s\S]*\*\*\* End Patch\s*)\1\s*$/.exec(
      command,
    );
  return arg ? { patch: arg[2]!, cd: null } : null;
}
