import { describe, expect, it } from 'vitest';
import { readOnly } from '../../src/flows/hook/lane-keep.js';

describe('readOnly: commands after which no lane checkpoint is needed', () => {
  it('readers, lists and pipelines of readers', () => {
    for (const c of [
      'ls',
      'ls -la .guard/lanes',
      'git status',
      'git -C sub log --oneline -5',
      'git diff HEAD~1 | head -50',
      'cat a.txt && grep -n x b.py',
      'FOO=1 rg pattern src',
      'git --version',
      'cd src; ls',
    ])
      expect(readOnly(c), c).toBe(true);
  });
  it('anything that may remove or write: unknown programs, interpreters, redirections, substitutions, find -delete, xargs', () => {
    for (const c of [
      'git clean -ffdx',
      'git worktree remove --force .guard/lanes/a',
      'rm -rf .guard',
      'ls; rm -rf .guard',
      'ls | xargs rm',
      'find . -name x -delete',
      'find . -exec rm {} +',
      'echo x > .guard/lanes/a/f',
      'cat $(rm -rf .guard)',
      'cat `rm -rf .guard`',
      'python3 -c "import shutil"',
      'npm run clean',
      'git stash -u',
      'git checkout -- .',
      'ls & rm -rf .guard',
      'ls\nrm -rf .guard',
      'sh -c "rm -rf .guard"',
    ])
      expect(readOnly(c), c).toBe(false);
  });
  it('readers that also write a file they are given: not read-only', () => {
    for (const c of [
      'sort -o .guard/lanes/a/src/x.js /dev/null',
      'uniq /dev/null .guard/lanes/a/src/x.js',
      'xxd /dev/null .guard/lanes/a/src/x.js',
      'tree -o .guard/lanes/a/src/x.js',
      'git diff --output=.guard/lanes/a/src/x.js',
      'git show --output .guard/lanes/a/x HEAD',
      'git reflog expire --expire=now --all',
      'git config --file .guard/lanes/a/x a.b c',
    ])
      expect(readOnly(c), c).toBe(false);
  });
});
