import { appendFileSync, readFileSync } from 'node:fs';
import { EXIT, GuardError } from '../core/errors.js';
import { ci, type CiResult } from '../flows/gates/ci.js';
import { renderAnnotations, renderMarkdown, renderSarif, renderText } from '../ui/ci-formats.js';
import { boundFiles, makeOutput, type Output } from '../ui/output.js';
import { withTimeout } from '../flows/context.js';
import type { CiArgs } from './spec.js';

type Format = NonNullable<CiArgs['format']>;

/**
 * `guard ci --base REV [--head REV] [--format ...]`. `--json` and
 * `--format json` print the same document; under `--format json` errors are
 * JSON too, since a CI step that asked for JSON parses whatever comes out.
 */
export async function run(a: CiArgs, out: Output): Promise<number> {
  const format: Format = a.format ?? 'text';
  const o = format === 'json' && !out.json ? makeOutput({ json: true, quiet: out.quiet }) : out;
  try {
    const result = await withTimeout(a.timeout, () =>
      ci({ cwd: a.cwd, base: a.base, ...(a.head !== undefined ? { head: a.head } : {}) }),
    );
    report(result, format, o, a.limit);
    return result.blocked > 0 ? EXIT.blocked : EXIT.ok;
  } catch (err) {
    if (o === out || !(err instanceof GuardError)) throw err;
    o.error(err);
    return err.exitCode;
  }
}

function report(r: CiResult, format: Format, out: Output, limit?: number): void {
  // The job summary goes to its file whatever is printed: --json never hides it.
  const summary = format === 'github' && writeStepSummary(r, out);
  if (out.json) {
    out.result('ci', jsonDocument(r, limit));
    return;
  }
  const print = (s: string) => process.stdout.write(s.endsWith('\n') ? s : s + '\n');
  switch (format) {
    case 'github':
      print(renderAnnotations(r, { summary }));
      break;
    case 'markdown':
      print(renderMarkdown(r));
      break;
    case 'sarif':
      print(JSON.stringify(renderSarif(r, toolVersion()), null, 2));
      break;
    default:
      if (out.quiet && r.blocked === 0) return;
      print(renderText(r, out.c));
  }
}

/** DESIGN.md's file fields first; `blob` and `line` say what an approval must name. */
function jsonDocument(r: CiResult, limit: number | undefined): object {
  return {
    base: r.base,
    head: r.head,
    mergeBase: r.mergeBase,
    bootstrap: r.bootstrap,
    ...boundFiles(r.files, limit),
    blocked: r.blocked,
    approved: r.approved,
    ...(r.reviews ? { reviews: r.reviews } : {}),
  };
}

/** https://docs.github.com/actions/using-workflows/workflow-commands-for-github-actions#adding-a-job-summary */
function writeStepSummary(r: CiResult, out: Output): boolean {
  const file = process.env.GITHUB_STEP_SUMMARY;
  if (!file) return false;
  try {
    appendFileSync(file, renderMarkdown(r));
    return true;
  } catch (err) {
    out.warn(`could not write the job summary to ${file}: ${(err as Error).message}`);
    return false;
  }
}

function toolVersion(): string | undefined {
  try {
    const pkg = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    ) as { version?: string };
    return pkg.version;
  } catch {
    return undefined;
  }
}
