import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { catFileBatch } from '../../src/git/catfile.js';
import { withCallCatFile } from '../../src/git/resident.js';
import { residentGit } from '../../src/git/resident-switch.js';
import { cleanupRepos, lines, makeRepo } from '../helpers.js';

/**
 * adv8 (docs/reliability/adv8.md): withCallCatFile, one cat-file for a hook call's reads, where
 * calls overlap in one process (the plugin with GUARD_PLUGIN_RESIDENT=0, a test process) and where
 * a call throws.
 */
afterAll(cleanupRepos);

/** This process's git cat-file children. */
function ourCatFiles(): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('cat-file'))
        out.push(Number(pid));
    } catch {
      // gone
    }
  }
  return out;
}

const settle = async () => {
  for (let i = 0; i < 100 && ourCatFiles().length > 0; i++)
    await new Promise((r) => setTimeout(r, 50));
};

describe('withCallCatFile', () => {
  it("overlapping calls: the one that ends first does not end the other's reads; a call that throws ends its share; nothing is left", async () => {
    const a = makeRepo({ 'a.txt': lines(5, 'a') });
    const b = makeRepo({ 'b.txt': lines(5, 'b') });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const long = withCallCatFile(async () => {
      const [first] = await catFileBatch(b.dir, ['HEAD:b.txt'], 1 << 20);
      await gate; // the short call ends while this one is under way
      const [second] = await catFileBatch(b.dir, ['HEAD:b.txt'], 1 << 20);
      return [first, second].map((x) => x?.data?.toString());
    });
    const short = await withCallCatFile(async () =>
      (await catFileBatch(a.dir, ['HEAD:a.txt'], 1 << 20))[0]?.data?.toString(),
    );
    expect(short).toBe(lines(5, 'a'));
    const thrown = withCallCatFile(async () => {
      await catFileBatch(a.dir, ['HEAD:a.txt'], 1 << 20);
      throw new Error('the call failed');
    });
    await expect(thrown).rejects.toThrow('the call failed');
    expect(residentGit.catFile).toBeDefined();
    release();
    expect(await long).toEqual([lines(5, 'b'), lines(5, 'b')]);
    // the last call out turns resident reads off and ends every cat-file it started
    expect(residentGit.catFile).toBeUndefined();
    await settle();
    expect(ourCatFiles()).toEqual([]);
  });

  it('a file replaced in git between two reads of one call: the second read sees the new commit', async () => {
    const a = makeRepo({ 'a.txt': 'one\n' });
    const seen = await withCallCatFile(async () => {
      const before = (await catFileBatch(a.dir, ['HEAD:a.txt'], 1 << 20))[0]?.data?.toString();
      a.write('a.txt', 'two\n');
      a.commitAll('two');
      a.git(['gc', '-q', '--prune=now']);
      const after = (await catFileBatch(a.dir, ['HEAD:a.txt'], 1 << 20))[0]?.data?.toString();
      return [before, after];
    });
    expect(seen).toEqual(['one\n', 'two\n']);
  });
});
