import { lstat, readFile, readdir } from 'node:fs/promises';
import { commonDirOf } from '../../git/journal.js';
import path from 'node:path';
import { parseRecordMessage } from '../../core/record.js';
import type { Checkpoint } from '../../git/checkpoint.js';
import { RAW, emptyTree, keptParent, parseRaw } from '../../git/restore.js';
import { git } from '../../git/run.js';

/**
 * After a shell command: what it took from outside the work tree's own tree
 * (git/kept.ts), read from the checkpoint taken before it. Kept files that
 * are gone (or overwritten, outside wholly ignored folders such as build
 * output) can be put back; files the checkpoint could not keep (over the
 * size cap or the budget) and lanes whose work trees vanished cannot, and
 * are named so that nobody carries on as if they were there.
 *
 * Git processes: none when nothing kept changed; one diff-tree otherwise.
 */
export interface CoverageLoss {
  /** Kept by the checkpoint before: `guard restore CP -- PATH` brings each back. */
  kept: Array<{ path: string; how: 'removed' | 'overwritten'; kind: 'ignored' | 'nested' }>;
  /** Gone, and in no checkpoint: only named. */
  notKept: Array<{ path: string; why: string }>;
  /** Lanes whose work trees the command removed, with the last checkpoint of each that guard knows, and the main checkpoint it was taken with (flows/hook/lane-keep.ts). */
  lanes: Array<{ name: string; checkpoint: string | null; keptWith?: string }>;
}

interface PreBody {
  skipped?: Array<{ path?: unknown; reason?: unknown; bytes?: unknown; kind?: unknown }>;
  kept?: { parent?: unknown; folders?: unknown; nested?: unknown };
  lanes?: unknown;
}

/** A raw commit object: its parents and the JSON body of its message. */
function parseCommit(raw: Buffer): { parents: string[]; body: PreBody | null } {
  const text = raw.toString('utf8');
  const cut = text.indexOf('\n\n');
  const head = cut < 0 ? text : text.slice(0, cut);
  const parents = head
    .split('\n')
    .filter((l) => l.startsWith('parent '))
    .map((l) => l.slice(7));
  const body =
    cut < 0 ? null : (parseRecordMessage(text.slice(cut + 2).replace(/\n$/, '')) as PreBody | null);
  return { parents, body };
}

const MB = (n: number) => `${(n / (1 << 20)).toFixed(n < 10 << 20 ? 1 : 0)} MB`;

function whyNotKept(reason: string, bytes: number | undefined, kind: unknown): string {
  const what =
    kind === 'ignored'
      ? 'an ignored file'
      : kind === 'nested'
        ? 'in a nested repository'
        : 'an untracked file';
  switch (reason) {
    case 'size':
      return `${what}${bytes !== undefined ? ` of ${MB(bytes)}` : ''}, over the checkpoint's size cap`;
    case 'budget':
      return `${what}, past the checkpoint's budget for files outside git`;
    case 'folder':
      return kind === 'nested'
        ? 'a nested repository too large to keep'
        : 'an ignored folder too large to keep';
    case 'time':
      return `${what}, past the checkpoint's time budget`;
    case 'name':
      return `${what} whose name git refuses`;
    case 'unreadable':
      return `${what} guard could not read`;
    default:
      return what;
  }
}

export async function coverageLoss(
  root: string,
  preRaw: Buffer | null,
  post: Checkpoint,
): Promise<CoverageLoss> {
  const loss: CoverageLoss = { kept: [], notKept: [], lanes: [] };
  if (!preRaw) return loss;
  const { parents, body } = parseCommit(preRaw);
  if (!body) return loss;
  const gone = async (p: string) => (await lstat(path.join(root, p)).catch(() => null)) === null;

  const preKept = keptParent(parents.join(' '), body.kept?.parent);
  const postKept = post.kept ?? null;
  if (preKept && preKept !== postKept) {
    const folders = Array.isArray(body.kept?.folders)
      ? body.kept.folders.filter((f): f is string => typeof f === 'string')
      : [];
    const inFolder = (p: string) => folders.some((f) => p.startsWith(f));
    const nested = Array.isArray(body.kept?.nested)
      ? body.kept.nested.filter((f): f is string => typeof f === 'string')
      : [];
    const kindOf = (p: string): 'ignored' | 'nested' =>
      nested.some((n) => p.startsWith(n)) ? 'nested' : 'ignored';
    const r = await git(['diff-tree', ...RAW, preKept, postKept ?? emptyTree(preKept)], {
      cwd: root,
    });
    for (const e of parseRaw(r.stdout)) {
      if (e.letter === 'D' && (await gone(e.path)))
        loss.kept.push({ path: e.path, how: 'removed', kind: kindOf(e.path) });
      // T: a file swapped for a link (or a link for a file): its text is gone as well (adv10)
      else if ((e.letter === 'M' || e.letter === 'T') && !inFolder(e.path))
        loss.kept.push({ path: e.path, how: 'overwritten', kind: kindOf(e.path) });
    }
  }
  for (const s of body.skipped ?? []) {
    if (typeof s.path !== 'string' || typeof s.reason !== 'string' || s.reason === 'repository')
      continue;
    if (await gone(s.path))
      loss.notKept.push({
        path: s.path,
        why: whyNotKept(s.reason, typeof s.bytes === 'number' ? s.bytes : undefined, s.kind),
      });
  }
  const lanes = Array.isArray(body.lanes)
    ? body.lanes.filter((l): l is string => typeof l === 'string')
    : [];
  for (const l of lanes)
    if (await gone(path.join('.guard', 'lanes', l, '.git')))
      loss.lanes.push({ name: l, ...(await laneCheckpoint(root, l)) });
  return loss;
}

/**
 * A lane's last whole-tree checkpoint, from its git dir
 * (`.git/worktrees/<id>/guard-last-checkpoint`, which `git clean` does not
 * reach): the worktree whose `gitdir` file points into the lane. File reads.
 */
async function laneCheckpoint(
  root: string,
  lane: string,
): Promise<{ checkpoint: string | null; keptWith?: string }> {
  const common = commonDirOf(root);
  if (!common) return { checkpoint: null };
  // kept just before this command (flows/hook/lane-keep.ts): survives git worktree remove too
  const kept = await (await import('./lane-keep.js')).laneKept(common, lane);
  if (kept) return { checkpoint: kept.id, keptWith: kept.for };
  const want = path.join(root, '.guard', 'lanes', lane, '.git');
  const ids = await readdir(path.join(common, 'worktrees')).catch(() => [] as string[]);
  for (const id of ids) {
    const dir = path.join(common, 'worktrees', id);
    const gitdir = (await readFile(path.join(dir, 'gitdir'), 'utf8').catch(() => '')).trim();
    if (path.resolve(dir, gitdir) !== want) continue;
    const last = JSON.parse(
      await readFile(path.join(dir, 'guard-last-checkpoint'), 'utf8').catch(() => 'null'),
    ) as { id?: unknown } | null;
    return { checkpoint: typeof last?.id === 'string' ? last.id : null };
  }
  return { checkpoint: null };
}

/** The sentences the loss report adds for what the checkpoint kept outside git, what it could not, and lanes. */
export function coverageSentences(
  loss: CoverageLoss,
  checkpoint: string,
  shellWord: (p: string) => string,
  also: boolean,
): string[] {
  const out: string[] = [];
  const list = (xs: string[]) =>
    xs.slice(0, 10).join(', ') + (xs.length > 10 ? ` and ${xs.length - 10} more` : '');
  if (loss.kept.length > 0) {
    const what = loss.kept.map(
      (k) => `${k.path} (${k.kind === 'nested' ? 'in a nested repository' : 'ignored'}, ${k.how})`,
    );
    const cmd =
      loss.kept.length <= 20
        ? `guard restore ${checkpoint} -- ${loss.kept.map((k) => shellWord(k.path)).join(' ')}`
        : `guard restore ${checkpoint}`;
    out.push(
      `${also ? 'It also took' : 'What it took'}: ${list(what)}. guard kept them; to bring them back run: ${cmd}.`,
    );
  }
  if (loss.notKept.length > 0) {
    out.push(
      `GONE FOR GOOD, guard could not keep them: ${list(loss.notKept.map((n) => `${n.path} (${n.why})`))}.`,
    );
  }
  // lanes kept just before this command (flows/hook/lane-keep.ts): their uncommitted work comes back whole
  const kept = loss.lanes.filter((l) => l.checkpoint && l.keptWith === checkpoint);
  if (kept.length > 0) {
    const how = kept.map(
      (l) =>
        `${l.name}: git worktree prune && git worktree add ${shellWord(`.guard/lanes/${l.name}`)} ${shellWord(`guard/${l.name}`)} && cd ${shellWord(`.guard/lanes/${l.name}`)} && guard restore ${l.checkpoint}`,
    );
    out.push(
      `It removed the work tree of guard lane${kept.length > 1 ? 's' : ''} ${list(kept.map((l) => l.name))}. guard kept ${kept.length > 1 ? 'each' : 'it'}, uncommitted work included, just before the command; to bring it back run (from the main tree) ${how.join('; ')}.`,
    );
  }
  const rest = loss.lanes.filter((l) => !kept.includes(l));
  if (rest.length > 0) {
    const names = rest.map((l) => l.name);
    const last = rest
      .filter((l) => l.checkpoint)
      .map(
        (l) =>
          `${l.name}: checkpoint ${l.checkpoint} (git show --stat refs/guard/checkpoints/${l.checkpoint})`,
      );
    out.push(
      `It removed the work tree of guard lane${names.length > 1 ? 's' : ''} ${list(names)}: ` +
        `their commits are safe on ${names.map((l) => `guard/${l}`).join(', ')}; ` +
        `uncommitted work after their last checkpoint is gone, guard did not keep it${last.length ? ` (last kept: ${last.join('; ')})` : ''}.`,
    );
  }
  return out;
}
