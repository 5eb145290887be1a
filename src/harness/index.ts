import { claude } from './claude.js';
import { cline } from './cline.js';
import { codex } from './codex.js';
import { copilot } from './copilot.js';
import { cursor } from './cursor.js';
import { gemini } from './gemini.js';
import { ROWS, rowTranslator } from './table.js';
import type { HarnessName, Translator } from './types.js';

export const TRANSLATORS: Record<HarnessName, Translator> = {
  claude,
  gemini,
  codex,
  cursor,
  cline,
  copilot,
  // the Claude-style rows (table.ts)
  continue: rowTranslator(ROWS.continue),
  qwen: rowTranslator(ROWS.qwen),
  auggie: rowTranslator(ROWS.auggie),
  droid: rowTranslator(ROWS.droid),
  crush: rowTranslator(ROWS.crush),
};
export * from './types.js';
