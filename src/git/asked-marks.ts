import {
  lstatSync,
  mkdirSync,
  readdirSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { sha256Hex } from '../core/digest.js';

/**
 * The marks that make Claude Code's after event of a write start guard (issue 22, item 3): one
 * file per write guard put to a person, in `<project>/.git/guard-asked/`, made before the `ask`
 * goes out and taken away by that write's after event. The command init installs on those after
 * events (flows/setup/hook-command.ts askGate) tests for the folder in the harness's shell and
 * starts no node while it is missing: after a write nobody was asked about, guard has nothing to
 * record. The folder is only a hint: while it is there every after event of a write runs guard as
 * before; without it (the agent removed it) only the record of an approval is lost, as if nobody
 * had been asked. A mark older than STALE_MS (a person who said no: no after event comes) is
 * removed by the next after event that runs.
 */
export const ASKED_DIR = 'guard-asked';
const STALE_MS = 30 * 60_000;
const NAME = /^[0-9a-f]{32}$/;

/** The marks' folder, when the project's `.git` is a folder (what the installed test reads); null otherwise. */
function folder(projectDir: string): string | null {
  const git = path.join(projectDir, '.git');
  try {
    return statSync(git).isDirectory() ? path.join(git, ASKED_DIR) : null;
  } catch {
    return null;
  }
}

const markName = (session: string, toolCall: string) =>
  sha256Hex(`${session}\0${toolCall}`).slice(0, 32);

/** A real folder of guard's, not a link or file planted there (nothing is written or removed through one). */
function ownFolder(dir: string): boolean {
  try {
    return lstatSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** Before answering `ask` for a write: its mark (a failure costs only the record of the approval). */
export function markAsked(projectDir: string, session: string, toolCall: string, now: Date): void {
  const dir = folder(projectDir);
  if (dir === null) return;
  const text = JSON.stringify({ session, toolCall, time: now.toISOString() }) + '\n';
  // (an after event may remove the empty folder between the mkdir and the write: once more then)
  for (let i = 0; i < 3; i++) {
    try {
      // a link or a file planted at its name: taken away (never followed). A link that leads
      // nowhere would otherwise close the installed test for good (`[ ! -e LINK ]`: adv12)
      if (lstatSync(dir, { throwIfNoEntry: false })?.isDirectory() === false) unlinkSync(dir);
      mkdirSync(dir, { recursive: true });
      if (!ownFolder(dir)) return;
      writeFileSync(path.join(dir, markName(session, toolCall)), text);
      return;
    } catch {
      // below, or given up
    }
  }
}

/** After a write: its own mark and stale ones removed, and the folder when empty (so the next after events start no node). */
export function settleAsked(
  projectDir: string,
  session: string,
  toolCall: string,
  now: Date,
): void {
  const dir = folder(projectDir);
  if (dir === null || !ownFolder(dir)) return;
  const mine = markName(session, toolCall);
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    if (!NAME.test(n)) continue;
    const f = path.join(dir, n);
    try {
      if (n === mine || now.getTime() - lstatSync(f).mtimeMs > STALE_MS) unlinkSync(f);
    } catch {
      // gone already
    }
  }
  try {
    rmdirSync(dir);
  } catch {
    // not empty: another write is asked about
  }
}
