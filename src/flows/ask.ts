import type { Classification } from '../core/classify.js';
import { offeredStrategies, type Answer, type PlanFile } from '../core/plan.js';
import type { Prompt } from '../ui/prompt.js';

/*
 * The one place a flow asks a person about a list of files: check, write,
 * review and the branch gate open the same prompt (ui/prompt.ts) with the
 * pager and editor git names, and check, write and review ask about each file
 * the same way. Loaded only when a person may be asked.
 */

export interface FilePromptOptions {
  color: boolean;
  /** Where git is asked for the pager and the editor. */
  root: string;
  /** The title line over each file. */
  title: (name: string) => string;
}

/** The prompt at the terminal; null when no person is there (agents, CI, cron). */
export async function openFilePrompt({
  color,
  root,
  title,
}: FilePromptOptions): Promise<Prompt | null> {
  const [{ openPrompt }, { pagerCommand }, { editorCommand }] = await Promise.all([
    import('../ui/prompt.js'),
    import('../git/pager.js'),
    import('../git/editor.js'),
  ]);
  return openPrompt({
    color,
    title,
    pager: () => pagerCommand(root),
    editor: () => editorCommand(root),
  });
}

/** One file to ask about: its plan file; check names the change as it classified it, and who wrote it. */
export interface FileToAsk {
  f: PlanFile;
  c?: Classification;
  writtenBy?: readonly string[];
}

/** Ask about each file in turn, with the keys its change allows; each answer goes in `answers`; `q` stops asking. */
export async function askAboutFiles(
  prompt: Prompt,
  files: readonly FileToAsk[],
  answers: Map<string, Answer>,
): Promise<void> {
  for (const { f, c = f.c, writtenBy } of files) {
    const texts = async () => ({
      base: f.base?.toString('utf8') ?? '',
      lane: f.proposed?.toString('utf8') ?? '',
    });
    const r = await prompt.ask({
      c,
      hunks: f.hunks,
      strategies: offeredStrategies(f),
      texts,
      ...(writtenBy ? { writtenBy } : {}),
    });
    if (r.answer) answers.set(c.path, r.answer);
    if (r.quit) break;
  }
}
