/**
 * The hook's outcome and the words it answers with: small and pure. The
 * decision itself is core/plan's (flows/hook/hook.ts plans the call with no
 * answers: what needs a person is `blocked`); this module only maps that
 * plan onto what a harness can say (no opinion, ask, deny) and words it for
 * the model and the person. It imports nothing from the rest of guard.
 */
import type { Outcome } from './types.js';

/** What the flow measured about one file a tool call would write. */
export interface Judged {
  path: string;
  status: string;
  existingLines: number;
  linesDeleted: number;
  changeRatio: number;
  needsApproval: boolean;
  reasons: string[];
  /** Stable ids of the same reasons (core/classify Rule): decisions read these, never the texts. */
  rules: string[];
}

/** One file of a tool call as the plan decided it (allowed, blocked, ...), or as the hook reports it (asked, lost). */
export interface Planned extends Judged {
  decision: string;
}

export type Verdict = 'allow' | 'ask' | 'deny';

/**
 * From the plan of the call made with no answers (nobody has answered yet):
 * allow when the plan blocks nothing; when it blocks something, ask if a
 * person can answer (the harness supports ask, is not headless or
 * bypassing, and guard is not in auto mode), deny otherwise. A call is
 * judged whole: harnesses apply a multi-file patch all or nothing.
 */
export function verdict(files: readonly { decision: string }[], personCanAnswer: boolean): Verdict {
  if (!files.some((f) => f.decision === 'blocked')) return 'allow';
  return personCanAnswer ? 'ask' : 'deny';
}

/**
 * The harness outcome of a write call, and each file as the hook reports it:
 * deny with the reason for the model (where the proposal is `kept`), ask
 * with the reason for the person (the `checkpoint` taken first), or no
 * opinion (the harness's own rules decide; guard never grants a permission).
 */
export function writeOutcome(
  v: Verdict,
  files: readonly Planned[],
  at: { kept?: string | null; checkpoint?: string; sessionBased?: boolean },
): { outcome: Outcome; files: Planned[] } {
  if (v === 'deny')
    return {
      outcome: {
        kind: 'deny',
        reason: denyReason(files, at.kept ?? null, at.sessionBased ?? false),
      },
      files: [...files],
    };
  if (v === 'ask')
    return {
      outcome: { kind: 'ask', reason: askReason(files, at.checkpoint ?? '') },
      files: files.map((f) => ({ ...f, decision: 'asked' })),
    };
  return { outcome: { kind: 'none' }, files: [...files] };
}

function pct(r: number): string {
  return `${Math.round(r * 100)}%`;
}

/** "src/state.py would lose 214 of 270 lines (79%), and ..." */
export function whatHappens(f: Judged, tense: 'would' | 'did'): string {
  const verb = tense === 'would' ? 'would' : '';
  const lose = tense === 'would' ? 'lose' : 'lost';
  let head: string;
  if (f.status === 'delete')
    head = `${f.path} ${tense === 'would' ? 'would be deleted' : 'was deleted'} (${f.existingLines} line${f.existingLines === 1 ? '' : 's'})`;
  else if (f.linesDeleted > 0 && f.existingLines > 0)
    head = `${f.path} ${verb ? verb + ' ' : ''}${lose} ${f.linesDeleted} of ${f.existingLines} lines (${pct(f.changeRatio)})`;
  else head = `${f.path} ${tense === 'would' ? 'would change' : 'changed'}`;
  // the size rules are what the head already says
  const why = f.reasons.filter(
    (_, i) => f.rules[i] !== 'replace-large' && f.rules[i] !== 'delete-large',
  );
  return why.length ? `${head}; ${why.join('; ')}` : head;
}

/** For the model: what was refused, why, where it is kept, what to do instead (HARNESSES.md). */
export function denyReason(
  files: readonly Judged[],
  kept: string | null,
  sessionBased: boolean,
): string {
  const flagged = files.filter((f) => f.needsApproval);
  const parts = [
    `guard refused this write: ${flagged.map((f) => whatHappens(f, 'would')).join('. ')}.`,
  ];
  if (sessionBased)
    parts.push('(Measured against the file as it was when this session first touched it.)');
  if (kept) parts.push(`Your version is kept as ${kept}.`);
  const deletes = flagged.some((f) => f.status === 'delete');
  const placeholder = flagged.some((f) => f.rules.includes('elision'));
  const protectedPath = flagged.some((f) => f.rules.includes('protected'));
  if (protectedPath)
    parts.push(
      'That path is protected: only a person can change it; tell the user what you wanted to change and why.',
    );
  else if (deletes)
    parts.push(
      'Do not delete it: change only the lines you mean to change, or ask the user to delete it.',
    );
  else if (placeholder)
    parts.push(
      'Write the whole file with every line that stays, never a placeholder comment, or change only the lines you mean to change with an edit.',
    );
  else
    parts.push(
      'Write the whole file, or change only the lines you mean to change with an edit; if you really mean to rewrite it, ask the user to approve it.',
    );
  return parts.join(' ');
}

/** For the person at an `ask` prompt. */
export function askReason(files: readonly Judged[], checkpoint: string): string {
  const flagged = files.filter((f) => f.needsApproval);
  return `guard: ${flagged.map((f) => whatHappens(f, 'would')).join('. ')}. Approve only if this is meant; the current version is in checkpoint ${checkpoint} (guard restore ${checkpoint}).`;
}

/** After a shell command: what it destroyed and the one command that brings it back. */
export function lossMessage(
  command: string,
  lost: readonly Judged[],
  { restore, rewind }: { restore: string; rewind: string },
  /** Said after the command, whole however long it is: "(run in the background)". */
  note = '',
): string {
  const shown = command.length > 80 ? command.slice(0, 77) + '...' : command;
  const what = lost
    .slice(0, 10)
    .map((f) => whatHappens(f, 'did'))
    .join('. ');
  const more = lost.length > 10 ? ` (and ${lost.length - 10} more files)` : '';
  return (
    `guard: the command \`${shown}\`${note} deleted or replaced work: ${what}${more}. ` +
    `Nothing was undone. guard kept the earlier state; to bring it back run: ${restore} ` +
    `(or undo everything this session wrote: ${rewind}). ` +
    `Do not carry on as if the files were still there: tell the user, and do not run commands that discard uncommitted work.`
  );
}

/** A failure inside guard, answered in the blocking form (fail closed). */
export function failReason(message: string, hint?: string): string {
  return `guard could not check this tool call and blocked it (fail closed): ${message}.${hint ? ` ${hint}.` : ''} Tell the user; \`guard doctor\` shows what is wrong.`;
}

/** For the model, when guard cannot reproduce an edit: the file is kept, the call refused, and what to send instead. */
export function unmatchedReason(why: readonly string[], checkpoint: string): string {
  return (
    `guard refused this edit: ${why.join('; ')}. guard cannot tell what the file would become, and the harness might still apply it loosely. ` +
    `Nothing was changed (the file is kept in checkpoint ${checkpoint}). Read the file again and send old_string exactly as it stands there ` +
    `(the same quotes, dashes, indentation and line ends), with enough lines around it to be unique, or write the whole file.`
  );
}
