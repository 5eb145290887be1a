import { describe, expect, it } from 'vitest';
import { netCommand } from '../../src/flows/hook/net-commands.js';

/** The hook's reading of shell commands that take down guard's own evidence (docs/reliability/holes5.md). */
describe('netCommand', () => {
  it.each([
    'guard recover',
    'npx guard-cli recover',
    'git update-ref -d refs/guard/checkpoints/x && guard recover',
    './node_modules/.bin/guard recover --json',
    'node /usr/lib/node_modules/guard-cli/dist/cli/main.js recover',
    'cd /tmp; "guard" recover',
    'guard log --prune --keep 0',
    'guard log --older-than 1d --prune',
    'echo $(guard recover)',
    'git update-ref -d refs/guard/checkpoints/20261128T000000Z-1',
    'git for-each-ref --format="delete %(refname)" refs/guard/ | git update-ref --stdin',
    'rm -rf .git/guard',
    'rm -f .git/info/guard-journal-seal',
    'rm -r .git/refs/guard',
    'mkfifo .git/guard/journal',
    'git for-each-ref refs/guard/ > .git/guard/journal',
    'true > .git/info/guard-journal-seal',
    // adv6: the same commands spelled as the shell still reads them
    'guard re""cover',
    'guard rec\\over',
    "guard $'recover'",
    "g''uard recover",
    'node $(which guard) recover',
    'node `which guard` recover',
    'echo recover | xargs guard',
    "git config alias.r '!guard recover' && git r",
    "git -c alias.r='!guard recover' r",
    'guard log --pr""une',
    'npx guard-cli@latest recover',
    // adv6: history cut by hand (git gc then deletes what lies behind the commits named)
    'git rev-parse refs/guard/sessions/claude/s1/chain >> .git/shallow',
    'echo x | tee -a .git/info/grafts',
    'cp /tmp/cut .git/shallow',
    'tee .git/guard/journal < /dev/null',
    'cp /dev/null .git/guard/journal',
    'dd if=/dev/null of=.git/guard/journal',
    'find .git/guard -delete',
    'rm .git/info/guard-pinned-seal',
    'echo v1 0 x > .git/info/guard-pinned-seal',
  ])('refuses: %s', (c) => {
    expect(netCommand(c)).not.toBeNull();
  });

  it.each([
    'ls',
    'guard log',
    'guard doctor',
    'guard log --session s1',
    'git show --stat refs/guard/checkpoints/20261128T000000Z-1',
    'git log refs/guard/sessions/claude/x',
    'rm -f .git/guard-sessions/a/b/background-open',
    'cat .git/guard/journal',
    'npm run guard -- check',
    'grep -r recover src/',
    'echo guard > notes.txt; git commit -m "recover from crash"',
    'rm -rf node_modules',
    'cat .git/shallow',
    'cat .git/info/guard-journal-seal',
    'git fetch --depth 1 origin main',
    'cp .git/guard/journal /tmp/journal-copy',
    'git log > notes.txt',
  ])('lets through: %s', (c) => {
    expect(netCommand(c)).toBeNull();
  });

  // holes8: the commands read by detached.ts's scanner (one reader); each of these the crude
  // word split read wrong on 49a8c77
  it.each([
    // a line continued with a backslash is one line to the shell
    'guard \\\nrecover',
    'x=update-ref; git $x -d refs/guard/checkpoints/abc && guard \\\n  recover',
    'git update-ref \\\n -d refs/guard/checkpoints/x',
    'rm -rf .git/gu\\\nard',
    // `>|` writes over the file (it is not a pipe)
    'echo x >| .git/guard/journal',
    'echo v1 >|.git/info/guard-journal-seal',
    'echo x 1>| .git/shallow',
    // a script handed to su (its words were read as su's own)
    "su -c 'rm -rf .git/guard'",
  ])('refuses what the word split missed: %s', (c) => {
    expect(netCommand(c)).not.toBeNull();
  });

  it.each([
    'git commit -m "docs: say when to run guard recover"',
    "echo 'guard log --prune removes old records' >> NOTES.md",
    "cat <<'EOF' > notes.md\nrun guard recover when\nEOF",
    "printf '%s\\n' 'guard recover' > how.txt",
  ])('lets through text that only names guard (the word split refused it): %s', (c) => {
    expect(netCommand(c)).toBeNull();
  });

  it.each([
    "watch 'guard recover'",
    "find . -name x -exec sh -c 'guard recover' \\;",
    "echo 'guard recover' | sh",
    "bash <<< 'guard recover'",
    'sh <<EOF\nguard recover\nEOF',
    // a quoted here-document is text, unless the line feeds it to a shell (holes8 met adv11's reading)
    "cat <<'EOF' | bash\nguard recover\nEOF",
    'eval "guard recover"',
    'git commit -m "$(guard recover)"',
    'cat > .git/guard/journal <<EOF\nx\nEOF',
  ])('still refuses a script that runs it: %s', (c) => {
    expect(netCommand(c)).not.toBeNull();
  });

  it('reads scripts within scripts 8 deep, and refuses unread what is nested deeper', () => {
    const nest = (c: string, d: number) => {
      for (let i = 0; i < d; i++) c = `bash -c ${JSON.stringify(c)}`;
      return c;
    };
    expect(netCommand(nest('guard recover', 8))).toMatch(/journal again/);
    expect(netCommand(nest('ls -la', 8))).toBeNull();
    expect(netCommand(nest('ls -la', 9))).toMatch(/nested more than 8 deep/);
  });
});
