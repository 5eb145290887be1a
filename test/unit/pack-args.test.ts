import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { packArgs } from '../../src/git/records.js';

/*
 * When a hook call starts git's packing (git/records.ts packWhenLoose): guard counts the loose
 * objects in 16 fan-out folders (objects/07, 17, ..., f7; objects/17 second) and past 2,048 starts
 * `git gc --auto` with a gc.auto git's own check (objects/17 alone: more than ceil(gc.auto / 256)
 * files there) passes. The soak's 3,364 loose objects came from git's one-folder estimate firing
 * late; these pin guard's.
 */

const names = (n: number, salt = 0) =>
  Array.from({ length: n }, (_, i) => (salt * 100_000 + i).toString(16).padStart(38, '0'));
const folders = (counts: number[]) => counts.map((n, k) => names(n, k));
const gcAuto = (args: string[]) => Number(args[args.indexOf('gc') - 1]!.split('=')[1]);

describe('packArgs', () => {
  it('counts 16 folders: many loose objects outside objects/17 start gc with a gc.auto git agrees with', () => {
    // 2 in objects/17 (git alone: 512), 10 in each other folder: ~2,400 in all
    const args = packArgs(folders([10, 2, ...Array(14).fill(10)]), 0)!;
    expect(args.slice(-3)).toEqual(['gc', '--auto', '--quiet']);
    expect(gcAuto(args)).toBe(256);
    // git's own check: more than ceil(gc.auto / 256) objects in objects/17
    expect(2).toBeGreaterThan(Math.ceil(gcAuto(args) / 256));
  });

  it('many in objects/17 alone is not many loose objects', () => {
    expect(packArgs(folders([1, 12, ...Array(14).fill(1)]), 0)).toBeNull();
    // with many loose refs: the refs alone
    expect(packArgs(folders([1, 12, ...Array(14).fill(1)]), 500)).toEqual([
      'pack-refs',
      '--all',
      '--prune',
    ]);
  });

  it('fewer than two in objects/17: no gc this call (no gc.auto git would agree with)', () => {
    expect(packArgs(folders([12, 1, ...Array(14).fill(12)]), 0)).toBeNull();
  });

  it("git's detaching is off (its gc.log would stop gc --auto for a day), hooks and server info too", () => {
    const args = packArgs(folders(Array(16).fill(10)), 0)!;
    expect(args).toContain('gc.autoDetach=false');
    expect(args).toContain('core.hooksPath=/dev/null');
    expect(args).toContain('repack.updateServerInfo=false');
    expect(gcAuto(args)).toBe(2048);
  });

  it('files that are not loose objects (temporary files, packs) are not counted', () => {
    const tmp = Array.from({ length: 20 }, (_, i) => `tmp_obj_${i}`);
    expect(
      packArgs(
        folders(Array(16).fill(4)).map((f) => [...f, ...tmp]),
        0,
      ),
    ).toBeNull();
  });

  it('whenever it starts gc, git agrees (objects/17 > ceil(gc.auto / 256)) and the estimate is past 2,048', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(40), { minLength: 16, maxLength: 16 }), (counts) => {
        const args = packArgs(folders(counts), 0);
        const total = counts.reduce((a, b) => a + b, 0);
        if (!args) return total * 16 <= 2048 || counts[1]! < 2;
        return counts[1]! > Math.ceil(gcAuto(args) / 256) && total * 16 > 2048;
      }),
    );
  });
});
