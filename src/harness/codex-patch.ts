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
  if (lines[0]?.trim() !== '*** Begin Patch') throw new PayloadError('the patch does not start with "*** Begin Patch"');
  if (lines[lines.length - 1]?.trim() !== '*** End Patch') throw new PayloadError('the patch does not end with "*** End Patch"');
  const body = lines.slice(1, -1);
  const files: FileChange[] = [];
  let i = 0;
  const header = (line: string, tag: string): string | null => (line.startsWith(`*** ${tag}: `) ? line.slice(tag.length + 6).trim() : null);
  while (i < body.length) {
    const line = body[i]!;
    let p: string | null;
    if ((p = header(line, 'Add File')) !== null) {
      i++;
      const added: string[] = [];
      while (i < body.length && body[i]!.startsWith('+')) added.push(body[i++]!.slice(1));
      files.push({ path: p, change: { kind: 'content', content: added.length ? added.join('\n') + '\n' : '' } });
    } else if ((p = header(line, 'Delete File')) !== null) {
      i++;
      files.push({ path: p, change: { kind: 'delete' } });
    } else if ((p = header(line, 'Update File')) !== null) {
      i++;
      let moveTo: string | null = null;
      if (i < body.length && (moveTo = header(body[i]!, 'Move to')) !== null) i++;
      const chunks: PatchChunk[] = [];
      while (i < body.length && !body[i]!.startsWith('*** ') ) {
        const chunk: PatchChunk = { context: null, oldLines: [], newLines: [], endOfFile: false };
        const at = body[i]!;
        if (at === '@@' || at.startsWith('@@ ')) {
          chunk.context = at === '@@' ? null : at.slice(3);
          i++;
        } else if (chunks.length > 0) {
          throw new PayloadError(`patch line ${i + 2}: expected "@@" to start a chunk, got ${JSON.stringify(at.slice(0, 60))}`);
        }
        // (the first chunk may start without "@@", as codex accepts)
        while (i < body.length) {
          const l = body[i]!;
          if (l === '*** End of File') {
            chunk.endOfFile = true;
            i++;
            break;
          }
          if (l.startsWith('@@') || l.startsWith('*** ')) break;
          if (l === '' || l.startsWith(' ')) {
            chunk.oldLines.push(l.slice(1));
            chunk.newLines.push(l.slice(1));
          } else if (l.startsWith('-')) chunk.oldLines.push(l.slice(1));
          else if (l.startsWith('+')) chunk.newLines.push(l.slice(1));
          else throw new PayloadError(`patch line ${i + 2}: a chunk line must start with " ", "-" or "+", got ${JSON.stringify(l.slice(0, 60))}`);
          i++;
        }
        if (chunk.oldLines.length === 0 && chunk.newLines.length === 0 && chunk.context === null) continue;
        chunks.push(chunk);
      }
      if (chunks.length === 0 && moveTo === null) throw new PayloadError(`patch: Update File ${p} has no changes`);
      if (moveTo !== null && moveTo !== p) {
        files.push({ path: moveTo, change: { kind: 'chunks', chunks, from: p } });
        files.push({ path: p, change: { kind: 'delete' } });
      } else files.push({ path: p, change: { kind: 'chunks', chunks } });
    } else if (line.trim() === '') {
      i++;
    } else {
      throw new PayloadError(`patch line ${i + 2}: expected "*** Add File:", "*** Delete File:" or "*** Update File:", got ${JSON.stringify(line.slice(0, 60))}`);
    }
  }
  if (files.length === 0) throw new PayloadError('the patch changes no file');
  return files;
}

/**
 * Codex may send a patch through its shell tool instead of the apply_patch
 * tool (HARNESSES.md): `apply_patch <<'EOF' ... EOF`, possibly after a
 * `cd DIR &&`. The patch text, and the folder it was applied in when a cd
 * says so; null when the command is not such a heredoc.
 */
export function patchInShell(command: string): { patch: string; cd: string | null } | null {
  const m = /^\s*(?:cd\s+("[^"]*"|'[^']*'|\S+)\s*&&\s*)?(?:apply_patch|applypatch)\s*<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\2[ \t]*\n/.exec(command);
  if (m) {
    const tag = m[3]!;
    const rest = command.slice(m[0].length);
    const end = new RegExp(`^${tag}\\s*$`, 'm').exec(rest);
    const patch = end ? rest.slice(0, end.index) : rest;
    const cd = m[1] ? m[1].replace(/^["']|["']$/g, '') : null;
    return { patch, cd };
  }
  // `apply_patch '*** Begin Patch ...'` as one argument
  const arg = /^\s*(?:apply_patch|applypatch)\s+(['"])(\*\*\* Begin Patch[\s\S]*\*\*\* End Patch\s*)\1\s*$/.exec(command);
  return arg ? { patch: arg[2]!, cd: null } : null;
}
