import { REFS, type RefRecord } from '../../git/records.js';
import type { ChainCut, Cuts, Link } from '../../git/session-chain.js';

/**
 * `guard log --prune` over the session chains (git/session-chain.ts): a hook call's checkpoint
 * and decision records that only a chain holds are pruned like records with refs (by age, or past
 * the newest N), and the chain is cut: its links kept are written again on a new root, the
 * pruned ones left out (gc takes them), a chain with nothing kept removed. A pruned step's
 * decision records that are kept get a ref of their own.
 */
export async function allLinks(repo: { root: string; commonDir: string }): Promise<Link[]> {
  const { chainTips, readLinks } = await import('../../git/session-chain.js');
  const tips = await chainTips(repo);
  return tips.length === 0 ? [] : readLinks(repo.root, tips);
}

/** The records the links hold, as refs would (named as their refs would have been). */
export function chainedRecordsOf(links: readonly Link[]): Map<RefRecord, Link> {
  const out = new Map<RefRecord, Link>();
  for (const l of links) {
    const at = { time: l.time, parent: null, message: '' };
    if (l.held)
      out.set({ ref: REFS.checkpoints + l.event.checkpoint, oid: `${l.event.commit}^`, ...at }, l);
    for (const r of l.records) out.set({ ref: REFS.decisions + r.name, oid: r.commit, ...at }, l);
  }
  return out;
}

export interface CutInput {
  /** The chained records pruned, by name. */
  doomed: ReadonlySet<string>;
  /** The checkpoint ids pruned (with refs or not): their steps go. */
  gone: ReadonlySet<string>;
  /** Whether a link's time (unix seconds) is past the age pruned. */
  tooOld: (time: number) => boolean;
}

/** The chains to cut: a link goes with its checkpoint or its age; a decision record alone leaves its link. */
export function cutChainsOf(links: readonly Link[], x: CutInput): Cuts {
  const byChain = new Map<string, Link[]>();
  for (const l of links) byChain.set(l.chain, [...(byChain.get(l.chain) ?? []), l]);
  const out: Cuts = { chains: [], revive: [], gone: [] };
  for (const [ref, newestFirst] of byChain) {
    const cp = (l: Link) => REFS.checkpoints + l.event.checkpoint;
    const dropped = (l: Link) =>
      (l.held && x.doomed.has(cp(l))) || x.gone.has(l.event.checkpoint) || x.tooOld(l.time);
    const kept = (r: { name: string }) => !x.doomed.has(REFS.decisions + r.name);
    if (!newestFirst.some((l) => dropped(l) || !l.records.every(kept))) continue;
    const keep: ChainCut['keep'] = [];
    for (const l of [...newestFirst].reverse()) {
      if (dropped(l)) {
        out.gone.push(l.event.ref);
        out.revive.push(
          ...l.records.filter(kept).map((r) => ({ ref: REFS.decisions + r.name, oid: r.commit })),
        );
        continue;
      }
      const records = l.records.filter(kept);
      keep.push({ message: withRecords(l.message, records), step: l.event.commit, records });
    }
    out.chains.push({ ref, old: newestFirst[0]!.link, keep });
  }
  return out;
}

/** A link's message with its `records` named again (some pruned). */
function withRecords(message: string, records: ReadonlyArray<{ name: string }>): string {
  const at = message.indexOf('\n\n');
  const body = JSON.parse(message.slice(at + 2)) as Record<string, unknown>;
  return `${message.slice(0, at)}\n\n${JSON.stringify({ ...body, records: records.map((r) => r.name) })}\n`;
}
