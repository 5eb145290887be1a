import path from 'node:path';
import { parseRecordMessage } from '../core/record.js';
import { readRegular } from './journal.js';
import { git } from './run.js';

/**
 * History cut by hand (docs/reliability/adv6.md): `.git/shallow` names commits git then reads as
 * having no parents, in every command, guard's reads and `git gc` alike. One line naming a session
 * chain's tip, then `git gc --prune=now`, and every earlier link, checkpoint and decision record of
 * the session is deleted while the chain's ref stays where guard left it: the journal, which
 * checks refs, has nothing to notice. (Grafts, `.git/info/grafts`, guard reads past:
 * git/run.ts gitEnv; gc ignores them.)
 *
 * A shallow clone's own lines name commits whose parents were never fetched, and never a commit
 * guard wrote. So a listed commit that is one of guard's records (its message is a record's), or
 * whose parents are here (its history is in the object store: cut, and gc would delete it), was
 * put there by hand (or by `git fetch --depth` over a complete history, which cuts it the same
 * way). Only when the file is there: two git processes (the listed commits, then their parents).
 */
export interface HistoryCut {
  /** Listed commits that are guard's records. */
  guards: string[];
  /** Listed commits whose parents are in the object store. */
  cut: string[];
}

/** How many of the file's lines are looked at (a shallow clone of many branches lists one per boundary). */
const MAX = 2_000;
const OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

export async function historyCut(commonDir: string): Promise<HistoryCut | null> {
  const text = (await readRegular(path.join(commonDir, 'shallow')))?.toString('utf8') ?? '';
  const ids = [...new Set(text.split('\n').map((l) => l.trim()))].filter((l) => OID.test(l));
  if (ids.length === 0) return null;
  const listed = await batch(commonDir, ids.slice(0, MAX), '--batch');
  const guards: string[] = [];
  const parentsOf = new Map<string, string[]>();
  for (const [id, body] of listed) {
    if (body === null) continue;
    const at = body.indexOf('\n\n');
    const head = at < 0 ? body : body.slice(0, at);
    parentsOf.set(
      id,
      [...head.matchAll(/^parent ([0-9a-f]+)$/gm)].map((m) => m[1]!),
    );
    if (at >= 0 && parseRecordMessage(body.slice(at + 2)) !== null) guards.push(id);
  }
  const parents = [...new Set([...parentsOf.values()].flat())];
  const here = parents.length === 0 ? new Map() : await batch(commonDir, parents, '--batch-check');
  const cut = [...parentsOf]
    .filter(([, ps]) => ps.some((p) => here.get(p) !== null))
    .map(([id]) => id);
  return guards.length > 0 || cut.length > 0 ? { guards, cut } : null;
}

/** `git cat-file --batch` (each object's text) or `--batch-check` (''), by id; null: missing. */
async function batch(
  commonDir: string,
  ids: readonly string[],
  mode: '--batch' | '--batch-check',
): Promise<Map<string, string | null>> {
  const r = await git(['cat-file', mode], { cwd: commonDir, input: ids.join('\n') + '\n' });
  const out = new Map<string, string | null>();
  const buf = r.stdout;
  let at = 0;
  for (const id of ids) {
    const eol = buf.indexOf(10, at);
    if (eol < 0) break;
    const header = buf.subarray(at, eol).toString('utf8').split(' ');
    at = eol + 1;
    if (header[1] === 'missing' || header.length < 3) {
      out.set(id, null);
      continue;
    }
    if (mode === '--batch-check') {
      out.set(id, '');
      continue;
    }
    const size = Number(header[2]);
    out.set(id, header[1] === 'commit' ? buf.subarray(at, at + size).toString('utf8') : null);
    at += size + 1;
  }
  return out;
}

/**
 * The session chains whose history cannot be read whole: a link, or a step or decision record a
 * link names, missing from the object store (`.git/shallow` written, `git gc --prune=now`, the
 * line taken out again: the chain's ref is where guard left it, the commits behind the cut are
 * gone). For doctor: one `git log` of every chain, one `cat-file --batch-check` of what the links
 * name, and a `git log` per chain only when the first failed.
 */
export async function brokenChains(commonDir: string): Promise<string[]> {
  const { chainTips } = await import('./session-chain.js');
  const tips = await chainTips({ root: commonDir, commonDir });
  if (tips.length === 0) return [];
  const walk = (refs: readonly string[]) =>
    git(['log', '--first-parent', '--format=%P', ...refs, '--'], {
      cwd: commonDir,
      okCodes: [128],
    });
  const all = await walk(tips.map((t) => t.tip));
  if (all.code !== 0) {
    const each = await Promise.all(
      tips.map(async (t) => ((await walk([t.tip])).code ? t.chain : null)),
    );
    return each.filter((c): c is string => c !== null);
  }
  // (past the first parent: each link's step and records)
  const named = all.stdout
    .toString('utf8')
    .split('\n')
    .flatMap((l) => l.split(' ').slice(1))
    .filter((id) => OID.test(id));
  if (named.length === 0) return [];
  const here = await batch(commonDir, [...new Set(named)], '--batch-check');
  return [...here.values()].some((v) => v === null) ? tips.map((t) => t.chain) : [];
}
