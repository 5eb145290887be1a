import type { Rule } from '../core/classify.js';
import type { Colors } from './color.js';

/**
 * How `guard ci` reports: text for people, GitHub workflow commands and a job
 * summary, Markdown for a PR comment, SARIF 2.1.0 for code scanning. Pure
 * string building; the CLI decides where each string goes.
 *
 * The shapes below are what the renderers read (flows/gates/ci.ts's CiResult fits
 * them); ui does not import flows.
 */
export interface CiReportFile {
  path: string;
  oldPath?: string;
  status: string;
  existingLines: number;
  linesAdded: number;
  linesDeleted: number;
  changeRatio: number;
  binary: boolean;
  protected: boolean;
  symlink: boolean;
  needsApproval: boolean;
  reasons: string[];
  /** The stable ids of `reasons` (core/classify.ts Rule). */
  rules: Rule[];
  decision: 'allowed' | 'approved' | 'blocked';
  approvedBy?: string;
  /** The pull request review that cleared it (flows/ci applyReviews). */
  review?: { id: number; user: string; commit: string; kind?: 'approval' };
  /** Agent sessions that commits changing this path name (Guard-Agent: trailers). */
  writtenBy?: Array<{ harness: string; session: string; commit: string }>;
  line: number;
}

export interface CiReport {
  base: string;
  head: string;
  mergeBase: string;
  bootstrap: boolean;
  files: CiReportFile[];
  blocked: number;
  reviews?: {
    source: string | null;
    unavailable?: string;
    hint?: string;
    ignored: Array<{ id: number; user: string; why: string }>;
  };
}

/** GitHub shows 10 error annotations per step and 50 per job; the summary has all files. */
export const MAX_ANNOTATIONS = 50;
/** The step summary may hold 1 MiB; this many rows stay well under it. */
export const MAX_SUMMARY_ROWS = 2000;

const short = (oid: string) => oid.slice(0, 10);

// ---------------------------------------------------------------- severity

export type RuleId =
  | 'guard/delete'
  | 'guard/replace'
  | 'guard/protected'
  | 'guard/binary'
  | 'guard/symlink'
  | 'guard/aggregate-loss'
  | 'guard/elision'
  | 'guard/too-large'
  | 'guard/needs-approval';

/** The SARIF rule each classification rule reports under (a few share one). */
const SARIF_RULE: Record<Rule, RuleId> = {
  'delete-large': 'guard/delete',
  'replace-large': 'guard/replace',
  protected: 'guard/protected',
  'binary-delete': 'guard/binary',
  'binary-replace': 'guard/binary',
  'symlink-outside': 'guard/symlink',
  'symlink-linebreak': 'guard/symlink',
  'symlink-into-git': 'guard/symlink',
  'aggregate-loss': 'guard/aggregate-loss',
  elision: 'guard/elision',
  'too-large': 'guard/too-large',
  'not-written': 'guard/needs-approval',
  'step-by-step': 'guard/needs-approval',
  dropped: 'guard/needs-approval',
};

/** Why a file needs approval: the most severe of its rules. */
export function ruleOf(f: CiReportFile): RuleId {
  let best: RuleId = 'guard/needs-approval';
  for (const r of f.rules) {
    const id = SARIF_RULE[r] ?? 'guard/needs-approval';
    if (RANK[id] < RANK[best]) best = id;
  }
  return best;
}

const RANK: Record<RuleId, number> = {
  'guard/delete': 0,
  'guard/replace': 1,
  'guard/protected': 2,
  'guard/binary': 3,
  'guard/symlink': 4,
  'guard/aggregate-loss': 5,
  'guard/elision': 6,
  'guard/too-large': 7,
  'guard/needs-approval': 8,
};

/** Lines a change would lose: the whole file for a deletion. */
const loss = (f: CiReportFile) => (f.status === 'delete' ? f.existingLines : f.linesDeleted);

/** Most severe first: delete > replace > protected > others; then the larger loss; then path. */
export function bySeverity(a: CiReportFile, b: CiReportFile): number {
  return (
    RANK[ruleOf(a)] - RANK[ruleOf(b)] ||
    loss(b) - loss(a) ||
    (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  );
}

/** Blocked (most severe first), then approved, then allowed (by path). */
export function reportOrder(files: readonly CiReportFile[]): CiReportFile[] {
  const group = (d: CiReportFile['decision']) => files.filter((f) => f.decision === d);
  const byPath = (a: CiReportFile, b: CiReportFile) =>
    a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
  return [
    ...group('blocked').sort(bySeverity),
    ...group('approved').sort(bySeverity),
    ...group('allowed').sort(byPath),
  ];
}

function metrics(f: CiReportFile): string {
  if (f.binary) return 'binary file';
  if (f.status === 'new') return `${f.linesAdded} lines added`;
  if (f.status === 'delete') return `${f.existingLines} lines deleted (the whole file)`;
  return `${f.existingLines} lines, ${f.linesDeleted} deleted (${Math.round(f.changeRatio * 100)}%), ${f.linesAdded} added`;
}

const displayName = (f: CiReportFile) =>
  f.oldPath !== undefined ? `${f.oldPath} -> ${f.path}` : f.path;

const HOW_TO_PASS =
  'A person reviews the change with `guard review` and commits it with `guard review --commit`, ' +
  'which records a `Guard-Approved: <path> <blob>` trailer for the exact content approved. ' +
  'Any later edit of that file needs a new approval.';

// ---------------------------------------------------------------- text

/** "approved in <commit>" (a trailer), "approved by review 123 of alice (of <commit>)" or "approved by the approval of alice (of <commit>)" (GitLab). */
function approvedHow(f: CiReportFile): string {
  if (f.review?.kind === 'approval')
    return `approved by the approval of ${f.review.user} (of ${short(f.review.commit)})`;
  if (f.review)
    return `approved by review ${f.review.id} of ${f.review.user} (of ${short(f.review.commit)})`;
  return `approved in ${short(f.approvedBy ?? '')}`;
}

/** The other way to pass, where approvals were read: a person approves the head. */
function approvalRead(r: CiReport): string | null {
  if (!r.reviews?.source || r.reviews.unavailable) return null;
  return r.reviews.source.startsWith('gitlab ')
    ? 'Or a member with the Developer role or higher approves the merge request (not its author); then retry this job.'
    : 'Or a person with write access approves the pull request with a review of its head.';
}

/** Why no review was read (and what to do), and each review or approval that did not count. */
function reviewNotes(r: CiReport): string[] {
  const gitlab = r.reviews?.source?.startsWith('gitlab ') ?? false;
  const notes: string[] = [];
  if (r.reviews?.unavailable && r.reviews.source) {
    notes.push(
      `${gitlab ? 'Merge request approvals' : 'Pull request reviews'} not read: ${r.reviews.unavailable}.`,
    );
    if (r.reviews.hint) notes.push(`hint: ${r.reviews.hint}`);
  }
  for (const i of r.reviews?.ignored ?? [])
    notes.push(
      gitlab
        ? `The approval of ${i.user} does not count: ${i.why}.`
        : `Review ${i.id} of ${i.user} does not count: ${i.why}.`,
    );
  return notes;
}

export function renderText(r: CiReport, c: Colors): string {
  const n = r.files.length;
  const approved = r.files.filter((f) => f.decision === 'approved');
  const range = `merge-base ${short(r.mergeBase)}..${short(r.head)}`;
  const lines: string[] = [];
  if (r.blocked === 0) {
    lines.push(
      c.green(
        `guard ci: passed: ${n} changed file${n === 1 ? '' : 's'}, ${approved.length} approved, 0 blocked (${range})`,
      ),
    );
  } else {
    lines.push(
      c.red(
        c.bold(
          `guard ci: ${r.blocked} of ${n} changed file${n === 1 ? '' : 's'} blocked: they need a person's approval (${range})`,
        ),
      ),
    );
  }
  if (r.bootstrap) lines.push(c.dim('No guard.config.json at the merge-base: default policy.'));
  for (const note of reviewNotes(r)) lines.push(c.dim(note));
  for (const f of reportOrder(r.files)) {
    if (f.decision === 'allowed') continue;
    lines.push('');
    const tag = f.decision === 'blocked' ? c.red('blocked') : c.green(approvedHow(f));
    lines.push(`  ${c.bold(displayName(f))}  ${c.yellow(f.status)}  ${metrics(f)}  ${tag}`);
    for (const reason of f.reasons) lines.push(`    - ${reason}`);
    const by = [
      ...new Map((f.writtenBy ?? []).map((w) => [`${w.harness} ${w.session}`, w])).values(),
    ];
    for (const w of by.slice(0, 3))
      lines.push(
        c.dim(
          `    written by ${w.harness} session ${w.session.length > 16 ? w.session.slice(0, 8) : w.session} (commit ${short(w.commit)} says so)`,
        ),
      );
  }
  if (r.blocked > 0) {
    lines.push('');
    lines.push(HOW_TO_PASS);
    if (approvalRead(r)) lines.push(approvalRead(r)!);
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------- GitHub

/**
 * Workflow command escaping, as in @actions/core (command.ts):
 * https://github.com/actions/toolkit/blob/main/packages/core/src/command.ts
 */
export function escapeData(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

export function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/** One `::error` per blocked file, most severe first, at most MAX_ANNOTATIONS. */
export function renderAnnotations(r: CiReport, opts: { summary?: boolean } = {}): string {
  // Only point at a job summary that was written (GITHUB_STEP_SUMMARY set).
  const summary = opts.summary ?? true;
  const blocked = r.files.filter((f) => f.decision === 'blocked').sort(bySeverity);
  const out: string[] = [];
  for (const f of blocked.slice(0, MAX_ANNOTATIONS)) {
    const title = `guard: ${f.status} of ${f.path} needs approval`;
    const message = `${displayName(f)}: ${metrics(f)}.\n${f.reasons.map((x) => `- ${x}`).join('\n')}\n${HOW_TO_PASS}`;
    out.push(
      `::error file=${escapeProperty(f.path)},line=${Math.max(1, f.line)},title=${escapeProperty(title)}::${escapeData(message)}`,
    );
  }
  if (blocked.length > MAX_ANNOTATIONS) {
    const where = summary
      ? 'are listed in the job summary'
      : 'are not shown (run `guard ci` locally, or set GITHUB_STEP_SUMMARY, to list them)';
    out.push(
      `::warning title=guard::${escapeData(`${blocked.length - MAX_ANNOTATIONS} more blocked files ${where}`)}`,
    );
  }
  const n = r.files.length;
  out.push(
    r.blocked === 0
      ? `guard ci: passed: ${n} changed file${n === 1 ? '' : 's'}, 0 blocked`
      : `guard ci: ${r.blocked} of ${n} changed file${n === 1 ? '' : 's'} blocked (see the annotations${summary ? ' and the job summary' : ''})`,
  );
  return out.join('\n');
}

// ---------------------------------------------------------------- Markdown

/** A table cell: pipes escaped, line breaks made visible, nothing else interpreted. */
export function mdCell(s: string): string {
  return s
    .replace(/\\/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/\r?\n|\r/g, '\\n')
    .replace(/[<>&]/g, (ch) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;' })[ch]!)
    .replace(/[`*_[\]]/g, (ch) => `\\${ch}`);
}

const DECISION_MD = { blocked: '❌ blocked', approved: '✅ approved', allowed: 'allowed' } as const;

/** The job summary / PR comment: a verdict, then a table of every file. */
export function renderMarkdown(r: CiReport): string {
  const n = r.files.length;
  const approved = r.files.filter((f) => f.decision === 'approved').length;
  const out: string[] = [];
  out.push(
    r.blocked === 0
      ? `## guard ci: passed`
      : `## guard ci: ${r.blocked} change${r.blocked === 1 ? '' : 's'} blocked`,
  );
  out.push('');
  out.push(
    `${n} file${n === 1 ? '' : 's'} changed between the merge-base \`${short(r.mergeBase)}\` and \`${short(r.head)}\`: ` +
      `${n - approved - r.blocked} allowed, ${approved} approved, ${r.blocked} blocked. ` +
      (r.bootstrap
        ? 'No `guard.config.json` at the merge-base: default policy.'
        : 'Policy: `guard.config.json` as committed at the merge-base.'),
  );
  const notes = reviewNotes(r);
  if (notes.length) {
    out.push('');
    for (const note of notes) out.push(`- ${mdCell(note)}`);
  }
  if (n > 0) {
    out.push('');
    out.push('| File | Status | Existing lines | Deleted | Added | Change | Decision | Why |');
    out.push('| --- | --- | ---: | ---: | ---: | ---: | --- | --- |');
    const rows = reportOrder(r.files);
    for (const f of rows.slice(0, MAX_SUMMARY_ROWS)) {
      const decision =
        f.decision === 'approved' && (f.approvedBy || f.review)
          ? `${DECISION_MD.approved} ${mdCell(approvedHow(f).replace(/^approved /, ''))}`
          : DECISION_MD[f.decision];
      const cells = [
        mdCell(displayName(f)),
        f.status + (f.binary ? ' (binary)' : ''),
        String(f.existingLines),
        String(f.linesDeleted),
        String(f.linesAdded),
        `${Math.round(f.changeRatio * 100)}%`,
        decision,
        mdCell(f.reasons.join('; ')),
      ];
      out.push(`| ${cells.join(' | ')} |`);
    }
    if (rows.length > MAX_SUMMARY_ROWS) {
      out.push('');
      out.push(
        `… ${rows.length - MAX_SUMMARY_ROWS} more files not shown (all of them allowed or listed above first); \`guard ci --format json\` lists every file.`,
      );
    }
  }
  if (r.blocked > 0) {
    out.push('');
    out.push(HOW_TO_PASS);
    if (approvalRead(r)) out.push('', approvalRead(r)!);
  }
  return out.join('\n') + '\n';
}

// ---------------------------------------------------------------- SARIF

const RULES: Array<{ id: RuleId; name: string; text: string }> = [
  {
    id: 'guard/delete',
    name: 'LargeDeletion',
    text: 'Deletes a large file without a recorded approval.',
  },
  {
    id: 'guard/replace',
    name: 'DestructiveRewrite',
    text: 'Replaces most of a large file without a recorded approval.',
  },
  {
    id: 'guard/protected',
    name: 'ProtectedPath',
    text: 'Changes a protected path without a recorded approval.',
  },
  {
    id: 'guard/binary',
    name: 'BinaryReplaced',
    text: 'Replaces or deletes a binary file without a recorded approval.',
  },
  {
    id: 'guard/symlink',
    name: 'SymlinkEscapes',
    text: 'Adds a symlink that points outside the repository or into .git/.',
  },
  {
    id: 'guard/aggregate-loss',
    name: 'AggregateLoss',
    text: 'Loses many lines in all through several deleted or replaced files, each under the threshold.',
  },
  {
    id: 'guard/elision',
    name: 'ElisionPlaceholder',
    text: 'Leaves an elision placeholder ("... existing code ...") where code stood.',
  },
  {
    id: 'guard/too-large',
    name: 'TooLargeToMeasure',
    text: 'Changes a file larger than maxFileBytes, which guard cannot measure.',
  },
  {
    id: 'guard/needs-approval',
    name: 'NeedsApproval',
    text: "A change that needs a person's approval.",
  },
];

/** A relative path as a URI reference: each segment percent-encoded. */
export function pathToUri(p: string): string {
  return p.split('/').map(encodeURIComponent).join('/');
}

/** SARIF 2.1.0 (https://docs.oasis-open.org/sarif/sarif/v2.1.0/): one result per blocked file. */
export function renderSarif(r: CiReport, toolVersion?: string): object {
  const blocked = r.files.filter((f) => f.decision === 'blocked').sort(bySeverity);
  const driver: Record<string, unknown> = {
    name: 'guard',
    rules: RULES.map((rule) => ({
      id: rule.id,
      name: rule.name,
      shortDescription: { text: rule.text },
      fullDescription: { text: `${rule.text} ${HOW_TO_PASS}` },
      defaultConfiguration: { level: 'error' },
      help: { text: HOW_TO_PASS },
    })),
  };
  if (toolVersion) driver.version = toolVersion;
  const results = blocked.map((f) => {
    const ruleId = ruleOf(f);
    return {
      ruleId,
      ruleIndex: RULES.findIndex((x) => x.id === ruleId),
      level: 'error',
      message: { text: `${displayName(f)}: ${f.status}, ${metrics(f)}. ${f.reasons.join('; ')}.` },
      locations: [
        {
          physicalLocation: {
            artifactLocation: { uri: pathToUri(f.path), uriBaseId: '%SRCROOT%' },
            region: { startLine: Math.max(1, f.line) },
          },
        },
      ],
      partialFingerprints: { guardPathStatus: `${f.path}:${f.status}` },
    };
  });
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: { driver },
        results,
        properties: { base: r.base, head: r.head, mergeBase: r.mergeBase },
      },
    ],
  };
}
