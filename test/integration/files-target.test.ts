import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { installFiles } from '../../src/apply/apply.js';
import { cleanupRepos, outsideDir } from '../helpers.js';

afterAll(cleanupRepos);

/** apply's files target: what guard init and the harness setups write with. */
describe('installFiles', () => {
  it('writes a new file whole in a folder it makes, with the mode asked for', async () => {
    const dir = outsideDir();
    const hook = path.join(dir, '.husky', 'pre-commit');
    await installFiles([{ op: 'write', path: hook, content: 'guard check\n', mode: 0o755 }]);
    expect(readFileSync(hook, 'utf8')).toBe('guard check\n');
    expect(statSync(hook).mode & 0o777).toBe(0o755);
    // no temp file left beside it
    expect(readdirSync(path.dirname(hook))).toEqual(['pre-commit']);
  });

  it('keeps the mode of a file it rewrites, and writes through a symlink as the harness reads it', async () => {
    const dir = outsideDir();
    const settings = path.join(dir, 'settings.json');
    writeFileSync(settings, '{}\n');
    chmodSync(settings, 0o600);
    await installFiles([{ op: 'write', path: settings, content: '{"hooks":{}}\n' }]);
    expect(statSync(settings).mode & 0o777).toBe(0o600);
    const real = path.join(dir, 'real.json');
    writeFileSync(real, 'old\n');
    const link = path.join(dir, 'link.json');
    symlinkSync('real.json', link);
    await installFiles([{ op: 'write', path: link, content: 'new\n' }]);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe('real.json');
    expect(readFileSync(real, 'utf8')).toBe('new\n');
  });

  it("appends to the user's own hook and only then sets its mode, in order", async () => {
    const dir = outsideDir();
    mkdirSync(path.join(dir, 'h'));
    const hook = path.join(dir, 'h', 'commit-msg');
    writeFileSync(hook, '#!/bin/sh\nmine\n');
    await installFiles([
      { op: 'append', path: hook, text: 'guard line\n' },
      { op: 'mode', path: hook, mode: 0o755 },
    ]);
    expect(readFileSync(hook, 'utf8')).toBe('#!/bin/sh\nmine\nguard line\n');
    expect(statSync(hook).mode & 0o777).toBe(0o755);
  });

  it('a write that cannot land leaves the old file and no temp file', async () => {
    const dir = outsideDir();
    const file = path.join(dir, 'a');
    writeFileSync(file, 'old\n');
    // a folder where the temp file's rename would go: rename over a non-empty folder fails
    const target = path.join(dir, 'folder');
    mkdirSync(path.join(target, 'inside'), { recursive: true });
    await expect(installFiles([{ op: 'write', path: target, content: 'x' }])).rejects.toThrow();
    expect(readdirSync(dir).sort()).toEqual(['a', 'folder']);
    expect(readFileSync(file, 'utf8')).toBe('old\n');
  });
});
