import { approvalKey, parseRecordMessage, type DecisionRecord } from '../core/record.js';
import { REFS } from './records.js';
import { git } from './run.js';

/**
 * Approvals guard trusts: a person's decision in a record guard wrote itself.
 * A record counts only when
 * - it is the tip of a ref under refs/guard/decisions/ (not any object name
 *   handed in: an object anyone can hash is not an approval),
 * - guard committed it (guard's own committer identity),
 * - the person approved exactly that path with exactly that blob of the same
 *   kind (a regular file, a symlink, a gitlink: core/record.ts approvalKey),
 *   or, for a deletion, no blob,
 * - it was made at or after `notBefore` (the committer time of the base the
 *   change is measured against), so an approval cannot outlive the content it
 *   was about: a file deleted with approval, then written again, needs a new one.
 * What this does not stop: a process that can write .git can forge such a
 * record with git plumbing. docs/reliability/backdoors.md says why `guard ci`
 * is the final gate.
 */
const GUARD_COMMITTER = 'guard <guard@localhost>';

export { approvalKey };

export interface TrustedRecord {
  ref: string;
  oid: string;
  time: number;
  command: string | undefined;
  decisions: DecisionRecord[];
}

/**
 * "refs/guard/decisions/X\0<oid>\0guard <guard@localhost>\0<unix>\0<message>\0\x01\n"
 */
const FORMAT =
  '%(refname)%00%(objectname)%00%(committername) %(committeremail)%00%(committerdate:unix)%00%(contents)%00%01';

async function trustedRecords(cwd: string, extra: string[] = []): Promise<TrustedRecord[]> {
  const r = await git(['for-each-ref', `--format=${FORMAT}`, ...extra, REFS.decisions], {
    cwd,
    okCodes: [129],
  });
  const out: TrustedRecord[] = [];
  for (const rec of r.stdout.toString('utf8').split('\0\x01\n')) {
    const [ref, oid, committer, time, ...rest] = rec.split('\0');
    if (!ref || !oid || committer !== GUARD_COMMITTER) continue;
    const parsed = parseRecordMessage(rest.join('\0').replace(/\n$/, ''));
    if (parsed?.kind !== 'decisions' || !parsed.decisions) continue;
    out.push({
      ref,
      oid,
      time: Number(time) || 0,
      command: parsed.command,
      decisions: parsed.decisions,
    });
  }
  return out;
}

/** Every path+blob+kind a person approved in a trusted record made at or after `notBefore`. One git process. */
export async function personApprovals(cwd: string, notBefore: number): Promise<Set<string>> {
  const out = new Set<string>();
  for (const rec of await trustedRecords(cwd)) {
    if (rec.time < notBefore) continue;
    for (const d of rec.decisions)
      if (d.decision === 'approved' && d.decider === 'person')
        out.add(approvalKey(d.path, d.blob, d.mode));
  }
  return out;
}

/**
 * The record `guard review --commit` names in GUARD_APPROVED_RECORD (a ref
 * name or an object id; `oid` is what it resolved to), if it is
 * one guard wrote for a review (the tip of a decisions ref, guard's identity,
 * made at or after `notBefore`); otherwise null, and the hook asks or blocks
 * as if nothing had been handed in.
 */
export async function trustedReviewRecord(
  cwd: string,
  oid: string,
  notBefore: number,
): Promise<TrustedRecord | null> {
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(oid)) return null;
  const [rec] = await trustedRecords(cwd, [`--points-at=${oid}`]);
  if (!rec || rec.oid !== oid || rec.command !== 'review' || rec.time < notBefore) return null;
  return rec;
}
