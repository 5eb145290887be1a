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
};
