import { claude } from './claude.js';
import { cline } from './cline.js';
import { codex } from './codex.js';
import { copilot } from './copilot.js';
import { cursor } from './cursor.js';
import { gemini } from './gemini.js';
import type { HarnessName, Translator } from './types.js';

export const TRANSLATORS: Record<HarnessName, Translator> = { claude, gemini, codex, cursor, cline, copilot };
export * from './types.js';
