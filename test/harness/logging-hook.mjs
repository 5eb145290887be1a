#!/usr/bin/env node
// A stand-in for `guard hook HARNESS` that proves the loop before guard's own
// hook exists: it appends every payload it receives to LOGFILE (one JSON line
// each) and refuses, in the harness's own blocking form, any proposed write
// that carries the scripted truncation's elision comment. Everything else gets
// no opinion (exit 0, no output), like guard's "allowed". With each payload
// it logs `git status --porcelain` of the payload's cwd at that moment, so a
// test can see the work tree between tool calls (the scripted checkout wipes
// the end state).
//
//   node logging-hook.mjs HARNESS LOGFILE
import { spawnSync } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';

const [harness, logFile] = process.argv.slice(2);
const raw = readFileSync(0, 'utf8');
let payload;
try {
  payload = JSON.parse(raw);
} catch {
  payload = { unparsed: raw };
}
const status = spawnSync('git', ['status', '--porcelain'], {
  cwd: payload.cwd ?? process.cwd(),
  encoding: 'utf8',
}).stdout;
appendFileSync(logFile, `${JSON.stringify({ harness, status, payload })}\n`);

const MARKER = 'rest of the code unchanged';
const REASON = 'LOGHOOK-DENY: this write would truncate the file; write the whole file instead.';
const event = payload.hook_event_name;
const input = payload.tool_input ?? {};
const proposed = [input.content, input.new_string, input.command]
  .filter((v) => typeof v === 'string')
  .join('\n');
if ((event === 'PreToolUse' || event === 'BeforeTool') && proposed.includes(MARKER)) {
  const answer =
    harness === 'gemini'
      ? { decision: 'deny', reason: REASON }
      : {
          hookSpecificOutput: {
            hookEventName: 'PreToolUse',
            permissionDecision: 'deny',
            permissionDecisionReason: REASON,
          },
        };
  process.stdout.write(JSON.stringify(answer));
}
process.exit(0);
