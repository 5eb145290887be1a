/** The expected transcripts of test/e2e/transcripts.test.ts (TRANSCRIPTS_PRINT=FILE writes the current ones). */
export const TRANSCRIPTS = {
  checkBlocked: `exit 1
--- stdout
guard: blocked 1 change that needs a person

  state.py  replace  270 lines, 234 deleted (87%), 20 added
    - replaces 87% of a 270-line file (50% or more of 100+ lines needs approval)
    kept as refs/guard/rejected/<id>  (see it: git diff refs/guard/rejected/<id>^ refs/guard/rejected/<id>)

Nothing was changed: the index and the work tree are as they were.
To go on, a person decides: run the same \`git commit\` in a terminal to approve or reject each change,
or let the agent work in a lane and review it with \`guard review NAME\`.
\`git commit --no-verify\` skips this hook but not the branch gate, and \`guard ci\` on the pull request checks it again.
--- stderr
`,
  checkAllowed: `exit 0
--- stdout
--- stderr
`,
  writeAllowed: `exit 0
--- stdout
guard: wrote a.txt (modify, 1 line, 0 deleted (0%), 1 added)
  undo: guard restore <id> -- a.txt
--- stderr
`,
  writeBlocked: `exit 1
--- stdout
guard: blocked the write to state.py
  replace  270 lines, 234 deleted (87%), 20 added
    - replaces 87% of a 270-line file (50% or more of 100+ lines needs approval)
  kept as refs/guard/rejected/<id>  (see it: git diff refs/guard/rejected/<id>^ refs/guard/rejected/<id>)
The file was not changed. A person can approve the write by running the same command at a terminal.
--- stderr
`,
  lanes: `exit 0
--- stdout
LANE   BASE        FILES  APPROVAL  PATH
agent  <short>  3      1         .guard/lanes/agent
--- stderr
`,
  reviewDryRun: `exit 0
--- stdout
guard review --dry-run of lane agent (base <short>)
  a.txt     allowed                   modify, 1 line, 0 deleted (0%), 1 added
      <short>  #0  @@ -1 +1,2 @@
  new.txt   allowed                   new, 3 lines added
      <short>  #0  @@ -0,0 +1,3 @@
  state.py  blocked (needs a person)  replace, 270 lines, 234 deleted (87%), 20 added
      - replaces 87% of a 270-line file (50% or more of 100+ lines needs approval)
      <short>  #0  @@ -1,270 +1,56 @@

Nothing was written. 2 would be merged, 1 left out, 0 would conflict.
--- stderr
`,
  review: `exit 0
--- stdout
guard review of lane agent (base <short>)
  a.txt     allowed            modify, 1 line, 0 deleted (0%), 1 added
  new.txt   allowed            new, 3 lines added
  state.py  approved (append)  replace, 270 lines, 234 deleted (87%), 20 added
      the lane's version kept as refs/guard/rejected/<id>

3 merged and staged, 0 blocked, 0 rejected, 0 conflicted.
Undo this review: guard restore <id> --staged
--- stderr
`,
  reviewAgain: `exit 1
--- stdout
guard review of lane agent (base <short>)
  a.txt     already in the main tree  modify, 1 line, 0 deleted (0%), 1 added
  new.txt   already in the main tree  new, 3 lines added
  state.py  blocked (needs a person)  replace, 270 lines, 234 deleted (87%), 20 added
      - replaces 87% of a 270-line file (50% or more of 100+ lines needs approval)
      kept as refs/guard/rejected/<id>

0 merged and staged, 1 blocked, 0 rejected, 0 conflicted, 2 already in the main tree.
Blocked changes need a person: run guard review agent in a terminal, or pass --decisions.
What was refused is explained to the agent in <repo>/.guard/lanes/agent/.guard/feedback.md
--- stderr
`,
  log: `exit 0
--- stdout
<time>  decision    a.txt modify  allowed by policy in review (lane agent)
<time>  decision    new.txt new  allowed by policy in review (lane agent)
<time>  decision    state.py replace  blocked by auto in review (lane agent)  refs/guard/rejected/<id>
<time>  checkpoint  before guard review merges lane agent  <id>
<time>  decision    a.txt modify  allowed by policy in review (lane agent)
<time>  decision    new.txt new  allowed by policy in review (lane agent)
<time>  decision    state.py replace  approved (append) by person in review (lane agent)  refs/guard/rejected/<id>
<time>  checkpoint  guard measured lane agent  <id>
--- stderr
`,
  doctor: `exit 1
--- stdout
FAIL  core.hooksPath=/dev/null (local config): git runs no hooks at all
      hint: git config --local --unset core.hooksPath, then guard init
ok    no lanes
ok    no guard.config.json at HEAD: defaults in use
      hint: commit a guard.config.json (guard init writes one)
ok    refs/guard/: 0 checkpoints, 0 decision records, 0 rejected, 0 lanes
ok    no agent harness set up here (claude, gemini, codex, cursor, cline, copilot, continue, qwen, auggie, droid, crush, opencode, kilo): guard init --agent NAME adds guard's hook
guard: the gate would NOT run: core.hooksPath=/dev/null (local config): git runs no hooks at all
--- stderr
`,
  hook_claude_allow: `exit 0
--- stdout
--- stderr
`,
  hook_claude_deny: `exit 0
--- stdout
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard refused this write: state.py would lose 234 of 270 lines (87%). Your version is kept as refs/guard/rejected/<id>. Write the whole file, or change only the lines you mean to change with an edit; if you really mean to rewrite it, ask the user to approve it."}}
--- stderr
guard refused this write: state.py would lose 234 of 270 lines (87%). Your version is kept as refs/guard/rejected/<id>. Write the whole file, or change only the lines you mean to change with an edit; if you really mean to rewrite it, ask the user to approve it.
`,
  hook_claude_malformed: `exit 0
--- stdout
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard could not check this tool call and blocked it (fail closed): the claude payload is not what guard expects: payload.hook_event_name is missing. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong."}}
--- stderr
guard could not check this tool call and blocked it (fail closed): the claude payload is not what guard expects: payload.hook_event_name is missing. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong.
`,
  hook_gemini_allow: `exit 0
--- stdout
--- stderr
`,
  hook_gemini_deny: `exit 0
--- stdout
{"decision":"deny","reason":"guard refused this write: state.py would lose 234 of 270 lines (87%). Your version is kept as refs/guard/rejected/<id>. Write the whole file, or change only the lines you mean to change with an edit; if you really mean to rewrite it, ask the user to approve it."}
--- stderr
guard refused this write: state.py would lose 234 of 270 lines (87%). Your version is kept as refs/guard/rejected/<id>. Write the whole file, or change only the lines you mean to change with an edit; if you really mean to rewrite it, ask the user to approve it.
`,
  hook_gemini_malformed: `exit 0
--- stdout
{"decision":"deny","reason":"guard could not check this tool call and blocked it (fail closed): the gemini payload is not what guard expects: payload.hook_event_name is missing. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong."}
--- stderr
guard could not check this tool call and blocked it (fail closed): the gemini payload is not what guard expects: payload.hook_event_name is missing. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong.
`,
  hook_codex_allow: `exit 0
--- stdout
--- stderr
`,
  hook_codex_deny: `exit 0
--- stdout
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard refused this write: state.py would be deleted (270 lines). Your version is kept as refs/guard/rejected/<id>. Do not delete it: change only the lines you mean to change, or ask the user to delete it."}}
--- stderr
guard refused this write: state.py would be deleted (270 lines). Your version is kept as refs/guard/rejected/<id>. Do not delete it: change only the lines you mean to change, or ask the user to delete it.
`,
  hook_codex_malformed: `exit 0
--- stdout
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard could not check this tool call and blocked it (fail closed): the codex payload is not what guard expects: payload.hook_event_name is missing. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong."}}
--- stderr
guard could not check this tool call and blocked it (fail closed): the codex payload is not what guard expects: payload.hook_event_name is missing. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong.
`,
  hook_copilot_allow: `exit 0
--- stdout
{}
--- stderr
`,
  hook_copilot_deny: `exit 0
--- stdout
{"permissionDecision":"deny","permissionDecisionReason":"guard refused this write: state.py would lose 234 of 270 lines (87%). Your version is kept as refs/guard/rejected/<id>. Write the whole file, or change only the lines you mean to change with an edit; if you really mean to rewrite it, ask the user to approve it."}
--- stderr
guard refused this write: state.py would lose 234 of 270 lines (87%). Your version is kept as refs/guard/rejected/<id>. Write the whole file, or change only the lines you mean to change with an edit; if you really mean to rewrite it, ask the user to approve it.
`,
  hook_copilot_malformed: `exit 0
--- stdout
{"permissionDecision":"deny","permissionDecisionReason":"guard could not check this tool call and blocked it (fail closed): the copilot payload is not what guard expects: payload has none of toolName, tool_name as a string. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong."}
--- stderr
guard could not check this tool call and blocked it (fail closed): the copilot payload is not what guard expects: payload has none of toolName, tool_name as a string. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong.
`,
  hook_cursor_allow: `exit 0
--- stdout
{}
--- stderr
`,
  hook_cursor_deny: `exit 0
--- stdout
{"permission":"deny","user_message":"guard refused this write: state.py would lose 234 of 270 lines (87%). Your version is kept as refs/guard/rejected/<id>. Write the whole file, or change only the lines you mean to change with an edit; if you really mean to rewrite it, ask the user to approve it.","agent_message":"guard refused this write: state.py would lose 234 of 270 lines (87%). Your version is kept as refs/guard/rejected/<id>. Write the whole file, or change only the lines you mean to change with an edit; if you really mean to rewrite it, ask the user to approve it."}
--- stderr
guard refused this write: state.py would lose 234 of 270 lines (87%). Your version is kept as refs/guard/rejected/<id>. Write the whole file, or change only the lines you mean to change with an edit; if you really mean to rewrite it, ask the user to approve it.
`,
  hook_cursor_malformed: `exit 0
--- stdout
{"permission":"deny","user_message":"guard could not check this tool call and blocked it (fail closed): the cursor payload is not what guard expects: Cursor: hook_event_name \\"\\" is not a tool event guard handles. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong.","agent_message":"guard could not check this tool call and blocked it (fail closed): the cursor payload is not what guard expects: Cursor: hook_event_name \\"\\" is not a tool event guard handles. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong."}
--- stderr
guard could not check this tool call and blocked it (fail closed): the cursor payload is not what guard expects: Cursor: hook_event_name "" is not a tool event guard handles. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong.
`,
  hook_cline_allow: `exit 0
--- stdout
{"cancel":false}
--- stderr
`,
  hook_cline_deny: `exit 0
--- stdout
{"cancel":true,"errorMessage":"guard refused this write: state.py would be deleted (270 lines). Your version is kept as refs/guard/rejected/<id>. Do not delete it: change only the lines you mean to change, or ask the user to delete it.","contextModification":"guard refused this write: state.py would be deleted (270 lines). Your version is kept as refs/guard/rejected/<id>. Do not delete it: change only the lines you mean to change, or ask the user to delete it."}
--- stderr
guard refused this write: state.py would be deleted (270 lines). Your version is kept as refs/guard/rejected/<id>. Do not delete it: change only the lines you mean to change, or ask the user to delete it.
`,
  hook_cline_malformed: `exit 0
--- stdout
{"cancel":true,"errorMessage":"guard could not check this tool call and blocked it (fail closed): the cline payload is not what guard expects: payload.hookName is missing. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong.","contextModification":"guard could not check this tool call and blocked it (fail closed): the cline payload is not what guard expects: payload.hookName is missing. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong."}
--- stderr
guard could not check this tool call and blocked it (fail closed): the cline payload is not what guard expects: payload.hookName is missing. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong.
`,
  hook_continue_allow: `exit 0
--- stdout
--- stderr
`,
  hook_continue_deny: `exit 0
--- stdout
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard refused this write: state.py would lose 234 of 270 lines (87%). Your version is kept as refs/guard/rejected/<id>. Write the whole file, or change only the lines you mean to change with an edit; if you really mean to rewrite it, ask the user to approve it."}}
--- stderr
guard refused this write: state.py would lose 234 of 270 lines (87%). Your version is kept as refs/guard/rejected/<id>. Write the whole file, or change only the lines you mean to change with an edit; if you really mean to rewrite it, ask the user to approve it.
`,
  hook_continue_malformed: `exit 0
--- stdout
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard could not check this tool call and blocked it (fail closed): the continue payload is not what guard expects: payload.hook_event_name is missing. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong."}}
--- stderr
guard could not check this tool call and blocked it (fail closed): the continue payload is not what guard expects: payload.hook_event_name is missing. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong.
`,
  hook_qwen_allow: `exit 0
--- stdout
--- stderr
`,
  hook_qwen_deny: `exit 0
--- stdout
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard refused this write: state.py would lose 234 of 270 lines (87%). Your version is kept as refs/guard/rejected/<id>. Write the whole file, or change only the lines you mean to change with an edit; if you really mean to rewrite it, ask the user to approve it."}}
--- stderr
guard refused this write: state.py would lose 234 of 270 lines (87%). Your version is kept as refs/guard/rejected/<id>. Write the whole file, or change only the lines you mean to change with an edit; if you really mean to rewrite it, ask the user to approve it.
`,
  hook_qwen_malformed: `exit 0
--- stdout
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard could not check this tool call and blocked it (fail closed): the qwen payload is not what guard expects: payload.hook_event_name is missing. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong."}}
--- stderr
guard could not check this tool call and blocked it (fail closed): the qwen payload is not what guard expects: payload.hook_event_name is missing. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong.
`,
  hook_auggie_allow: `exit 0
--- stdout
--- stderr
`,
  hook_auggie_deny: `exit 0
--- stdout
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard refused this write: state.py would lose 234 of 270 lines (87%). Your version is kept as refs/guard/rejected/<id>. Write the whole file, or change only the lines you mean to change with an edit; if you really mean to rewrite it, ask the user to approve it."}}
--- stderr
guard refused this write: state.py would lose 234 of 270 lines (87%). Your version is kept as refs/guard/rejected/<id>. Write the whole file, or change only the lines you mean to change with an edit; if you really mean to rewrite it, ask the user to approve it.
`,
  hook_auggie_malformed: `exit 0
--- stdout
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard could not check this tool call and blocked it (fail closed): the auggie payload is not what guard expects: payload.hook_event_name is missing. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong."}}
--- stderr
guard could not check this tool call and blocked it (fail closed): the auggie payload is not what guard expects: payload.hook_event_name is missing. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong.
`,
  hook_droid_allow: `exit 0
--- stdout
--- stderr
`,
  hook_droid_deny: `exit 0
--- stdout
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard refused this write: state.py would lose 234 of 270 lines (87%). Your version is kept as refs/guard/rejected/<id>. Write the whole file, or change only the lines you mean to change with an edit; if you really mean to rewrite it, ask the user to approve it."}}
--- stderr
guard refused this write: state.py would lose 234 of 270 lines (87%). Your version is kept as refs/guard/rejected/<id>. Write the whole file, or change only the lines you mean to change with an edit; if you really mean to rewrite it, ask the user to approve it.
`,
  hook_droid_malformed: `exit 0
--- stdout
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard could not check this tool call and blocked it (fail closed): the droid payload is not what guard expects: payload.hook_event_name is missing. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong."}}
--- stderr
guard could not check this tool call and blocked it (fail closed): the droid payload is not what guard expects: payload.hook_event_name is missing. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong.
`,
  hook_crush_allow: `exit 0
--- stdout
--- stderr
`,
  hook_crush_deny: `exit 0
--- stdout
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard refused this write: state.py would lose 234 of 270 lines (87%). Your version is kept as refs/guard/rejected/<id>. Write the whole file, or change only the lines you mean to change with an edit; if you really mean to rewrite it, ask the user to approve it."}}
--- stderr
guard refused this write: state.py would lose 234 of 270 lines (87%). Your version is kept as refs/guard/rejected/<id>. Write the whole file, or change only the lines you mean to change with an edit; if you really mean to rewrite it, ask the user to approve it.
`,
  hook_crush_malformed: `exit 0
--- stdout
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard could not check this tool call and blocked it (fail closed): the crush payload is not what guard expects: payload.hook_event_name is missing. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong."}}
--- stderr
guard could not check this tool call and blocked it (fail closed): the crush payload is not what guard expects: payload.hook_event_name is missing. guard may be older than the harness: update guard. Tell the user; \`guard doctor\` shows what is wrong.
`,
  hook_claude_shell_pre: `exit 0
--- stdout
--- stderr
`,
  hook_claude_shell_post: `exit 0
--- stdout
{"systemMessage":"guard: the command \`rm state.py\` deleted or replaced work: state.py was deleted (270 lines). Nothing was undone. guard kept the earlier state; to bring it back run: guard restore <id> -- state.py (or undo everything this session wrote: guard rewind <short>-0874-40e4-9054-<short>). Do not carry on as if the files were still there: tell the user, and do not run commands that discard uncommitted work.","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"guard: the command \`rm state.py\` deleted or replaced work: state.py was deleted (270 lines). Nothing was undone. guard kept the earlier state; to bring it back run: guard restore <id> -- state.py (or undo everything this session wrote: guard rewind <short>-0874-40e4-9054-<short>). Do not carry on as if the files were still there: tell the user, and do not run commands that discard uncommitted work."}}
--- stderr
guard: the command \`rm state.py\` deleted or replaced work: state.py was deleted (270 lines). Nothing was undone. guard kept the earlier state; to bring it back run: guard restore <id> -- state.py (or undo everything this session wrote: guard rewind <short>-0874-40e4-9054-<short>). Do not carry on as if the files were still there: tell the user, and do not run commands that discard uncommitted work.
`,
  ci_text: `exit 1
--- stdout
guard ci: 1 of 2 changed files blocked: they need a person's approval (merge-base <short>..<short>)
No guard.config.json at the merge-base: default policy.

  state.py  replace  270 lines, 234 deleted (87%), 20 added  blocked
    - replaces 87% of a 270-line file (50% or more of 100+ lines needs approval)

A person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval.
--- stderr
`,
  ci_json: `exit 1
--- stdout
{"ok":true,"command":"ci","base":"<oid>","head":"<oid>","mergeBase":"<oid>","bootstrap":true,"files":[{"path":"a.txt","status":"modify","existingLines":1,"linesAdded":1,"linesDeleted":0,"changeRatio":0,"binary":false,"symlink":false,"modeOnly":false,"protected":false,"submodule":false,"ignored":false,"whitespaceOnly":false,"needsApproval":false,"reasons":[],"rules":[],"existingBytes":2,"decision":"allowed","blob":"<oid>","line":1},{"path":"state.py","status":"replace","existingLines":270,"linesAdded":20,"linesDeleted":234,"changeRatio":0.8667,"binary":false,"symlink":false,"modeOnly":false,"protected":false,"submodule":false,"ignored":false,"whitespaceOnly":false,"needsApproval":true,"reasons":["replaces 87% of a 270-line file (50% or more of 100+ lines needs approval)"],"rules":["replace-large"],"existingBytes":9707,"decision":"blocked","blob":"<oid>","line":1}],"blocked":1,"approved":0,"reviews":{"source":null,"unavailable":"no GITHUB_TOKEN","counted":[],"ignored":[]}}
--- stderr
`,
  ci_github: `exit 1
--- stdout
::error file=state.py,line=1,title=guard%3A replace of state.py needs approval::state.py: 270 lines, 234 deleted (87%25), 20 added.%0A- replaces 87%25 of a 270-line file (50%25 or more of 100+ lines needs approval)%0AA person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval.
guard ci: 1 of 2 changed files blocked (see the annotations)
--- stderr
`,
  ci_markdown: `exit 1
--- stdout
## guard ci: 1 change blocked

2 files changed between the merge-base \`<short>\` and \`<short>\`: 1 allowed, 0 approved, 1 blocked. No \`guard.config.json\` at the merge-base: default policy.

| File | Status | Existing lines | Deleted | Added | Change | Decision | Why |
| --- | --- | ---: | ---: | ---: | ---: | --- | --- |
| state.py | replace | 270 | 234 | 20 | 87% | ❌ blocked | replaces 87% of a 270-line file (50% or more of 100+ lines needs approval) |
| a.txt | modify | 1 | 0 | 1 | 0% | allowed |  |

A person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval.
--- stderr
`,
  ci_sarif: `exit 1
--- stdout
{
  "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
  "version": "2.1.0",
  "runs": [
    {
      "tool": {
        "driver": {
          "name": "guard",
          "rules": [
            {
              "id": "guard/delete",
              "name": "LargeDeletion",
              "shortDescription": {
                "text": "Deletes a large file without a recorded approval."
              },
              "fullDescription": {
                "text": "Deletes a large file without a recorded approval. A person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval."
              },
              "defaultConfiguration": {
                "level": "error"
              },
              "help": {
                "text": "A person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval."
              }
            },
            {
              "id": "guard/replace",
              "name": "DestructiveRewrite",
              "shortDescription": {
                "text": "Replaces most of a large file without a recorded approval."
              },
              "fullDescription": {
                "text": "Replaces most of a large file without a recorded approval. A person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval."
              },
              "defaultConfiguration": {
                "level": "error"
              },
              "help": {
                "text": "A person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval."
              }
            },
            {
              "id": "guard/protected",
              "name": "ProtectedPath",
              "shortDescription": {
                "text": "Changes a protected path without a recorded approval."
              },
              "fullDescription": {
                "text": "Changes a protected path without a recorded approval. A person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval."
              },
              "defaultConfiguration": {
                "level": "error"
              },
              "help": {
                "text": "A person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval."
              }
            },
            {
              "id": "guard/binary",
              "name": "BinaryReplaced",
              "shortDescription": {
                "text": "Replaces or deletes a binary file without a recorded approval."
              },
              "fullDescription": {
                "text": "Replaces or deletes a binary file without a recorded approval. A person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval."
              },
              "defaultConfiguration": {
                "level": "error"
              },
              "help": {
                "text": "A person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval."
              }
            },
            {
              "id": "guard/symlink",
              "name": "SymlinkEscapes",
              "shortDescription": {
                "text": "Adds a symlink that points outside the repository or into .git/."
              },
              "fullDescription": {
                "text": "Adds a symlink that points outside the repository or into .git/. A person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval."
              },
              "defaultConfiguration": {
                "level": "error"
              },
              "help": {
                "text": "A person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval."
              }
            },
            {
              "id": "guard/aggregate-loss",
              "name": "AggregateLoss",
              "shortDescription": {
                "text": "Loses many lines in all through several deleted or replaced files, each under the threshold."
              },
              "fullDescription": {
                "text": "Loses many lines in all through several deleted or replaced files, each under the threshold. A person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval."
              },
              "defaultConfiguration": {
                "level": "error"
              },
              "help": {
                "text": "A person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval."
              }
            },
            {
              "id": "guard/elision",
              "name": "ElisionPlaceholder",
              "shortDescription": {
                "text": "Leaves an elision placeholder (\\"... existing code ...\\") where code stood."
              },
              "fullDescription": {
                "text": "Leaves an elision placeholder (\\"... existing code ...\\") where code stood. A person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval."
              },
              "defaultConfiguration": {
                "level": "error"
              },
              "help": {
                "text": "A person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval."
              }
            },
            {
              "id": "guard/too-large",
              "name": "TooLargeToMeasure",
              "shortDescription": {
                "text": "Changes a file larger than maxFileBytes, which guard cannot measure."
              },
              "fullDescription": {
                "text": "Changes a file larger than maxFileBytes, which guard cannot measure. A person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval."
              },
              "defaultConfiguration": {
                "level": "error"
              },
              "help": {
                "text": "A person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval."
              }
            },
            {
              "id": "guard/needs-approval",
              "name": "NeedsApproval",
              "shortDescription": {
                "text": "A change that needs a person's approval."
              },
              "fullDescription": {
                "text": "A change that needs a person's approval. A person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval."
              },
              "defaultConfiguration": {
                "level": "error"
              },
              "help": {
                "text": "A person reviews the change with \`guard review\` and commits it with \`guard review --commit\`, which records a \`Guard-Approved: <path> <blob>\` trailer for the exact content approved. Any later edit of that file needs a new approval."
              }
            }
          ],
          "version": "<guard version>"
        }
      },
      "results": [
        {
          "ruleId": "guard/replace",
          "ruleIndex": 1,
          "level": "error",
          "message": {
            "text": "state.py: replace, 270 lines, 234 deleted (87%), 20 added. replaces 87% of a 270-line file (50% or more of 100+ lines needs approval)."
          },
          "locations": [
            {
              "physicalLocation": {
                "artifactLocation": {
                  "uri": "state.py",
                  "uriBaseId": "%SRCROOT%"
                },
                "region": {
                  "startLine": 1
                }
              }
            }
          ],
          "partialFingerprints": {
            "guardPathStatus": "state.py:replace"
          }
        }
      ],
      "properties": {
        "base": "<oid>",
        "head": "<oid>",
        "mergeBase": "<oid>"
      }
    }
  ]
}
--- stderr
`,
  err_not_a_repo: `exit 2
--- stdout
--- stderr
guard: not a git repository
hint: run guard inside a git work tree, or pass --cwd DIR
`,
  err_not_a_repo_json: `exit 2
--- stdout
{"ok":false,"error":{"code":"E_NOT_A_REPO","message":"not a git repository","hint":"run guard inside a git work tree, or pass --cwd DIR"}}
--- stderr
`,
  err_bad_config: `exit 2
--- stdout
--- stderr
guard: guard.config.json (staged): "lineThreshold" Invalid type: Expected number but received "many"
hint: fix guard.config.json before committing it: once committed it is the policy
`,
  err_config_not_json: `exit 2
--- stdout
--- stderr
guard: guard.config.json (staged) is not valid JSON: <parse error>
hint: fix guard.config.json before committing it: once committed it is the policy
`,
  err_unknown_lane: `exit 2
--- stdout
--- stderr
guard: lane "nope" does not exist
hint: guard lanes lists them
`,
  err_unknown_lane_json: `exit 2
--- stdout
{"ok":false,"error":{"code":"E_NO_LANE","message":"lane \\"nope\\" does not exist","hint":"guard lanes lists them"}}
--- stderr
`,
  err_lane_exists: `exit 1
--- stdout
--- stderr
guard: lane "agent" already exists
hint: guard run agent -- CMD reuses it; guard discard agent removes it
`,
  err_no_checkpoint: `exit 2
--- stdout
--- stderr
guard: no checkpoint "<id>"
hint: guard log lists the checkpoints; pass an id from there
`,
  err_usage_flag: `exit 2
--- stdout
--- stderr
guard: Unknown arguments: such-flag, suchFlag
hint: guard --help lists the commands and options
`,
  err_usage_command: `exit 2
--- stdout
--- stderr
guard: Unknown argument: frobnicate
hint: guard --help lists the commands and options
`,
  err_ci_format: `exit 2
--- stdout
--- stderr
guard: Invalid values: Argument: format, Given: "xml", Choices: "text", "json", "github", "markdown", "sarif"
hint: guard --help lists the commands and options
`,
  err_decisions_missing: `exit 2
--- stdout
--- stderr
guard: cannot read the decisions file .git/none.json: ENOENT
hint: pass --decisions a JSON file
`,
  err_decisions_not_json: `exit 2
--- stdout
--- stderr
guard: .git/d1.json is not valid JSON: <parse error>
hint: decisions are a JSON array of {"path", "action": "approve"|"reject", "strategy"?, "hunks"?, "edits"?, "insertAt"?}
`,
  err_decisions_bad_action: `exit 2
--- stdout
--- stderr
guard: .git/d2.json: "0.action": Invalid type: Expected ("approve" | "reject") but received "maybe"
hint: decisions are a JSON array of {"path", "action": "approve"|"reject", "strategy"?, "hunks"?, "edits"?, "insertAt"?}
`,
  err_decisions_unknown_path: `exit 2
--- stdout
--- stderr
guard: the decisions name "other.py", which lane agent did not change
hint: guard review agent --dry-run lists the changed paths and their hunks
`,
  err_write_escape: `exit 2
--- stdout
--- stderr
guard: "../outside.txt" is outside the work tree
hint: guard only writes files inside the work tree, outside .git/
`,
  err_write_escape_json: `exit 2
--- stdout
{"ok":false,"error":{"code":"E_PATH_ESCAPE","message":"\\"../outside.txt\\" is outside the work tree","hint":"guard only writes files inside the work tree, outside .git/"}}
--- stderr
`,
  err_restore_escape: `exit 2
--- stdout
--- stderr
guard: "../outside.txt" is outside the work tree
hint: guard only writes files inside the work tree, outside .git/
`,
  hook_claude_outside_project: `exit 0
--- stdout
--- stderr
`,
  err_hook_git_dir: `exit 0
--- stdout
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard refused this write: \\"<repo>/.git/hooks/pre-commit\\" is inside .git/. Write files inside the repository, never into .git/ or through a link that leads out of it."}}
--- stderr
guard refused this write: "<repo>/.git/hooks/pre-commit" is inside .git/. Write files inside the repository, never into .git/ or through a link that leads out of it.
`,
};
