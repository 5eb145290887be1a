/**
 * Which head a GitLab approval saw (flows/mr-approvals headSeen): the newest
 * version that existed a minute before it. The e2e file
 * (test/e2e/ci-gitlab-approvals.test.ts) runs the same rule through the CLI
 * against a fake GitLab; here are its edges.
 */
import { describe, expect, it } from 'vitest';
import { SETTLE_MS, headSeen, type MrVersion } from '../../src/flows/gates/mr-approvals.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const T = 1_000_000_000_000;
const versions: MrVersion[] = [
  { sha: B, at: T + 10 * 60_000 },
  { sha: A, at: T },
];

describe('headSeen', () => {
  it('takes the newest version that existed SETTLE_MS before the approval, whatever the list order', () => {
    expect(headSeen(versions, T + 5 * 60_000, false)).toEqual({ sha: A });
    expect(headSeen([...versions].reverse(), T + 5 * 60_000, false)).toEqual({ sha: A });
    expect(headSeen(versions, T + 10 * 60_000 + SETTLE_MS, false)).toEqual({ sha: B });
  });

  it('ties an approval within SETTLE_MS of a push to the version before it', () => {
    expect(headSeen(versions, T + 10 * 60_000, false)).toEqual({ sha: A });
    expect(headSeen(versions, T + 10 * 60_000 + SETTLE_MS - 1, false)).toEqual({ sha: A });
  });

  it('names no head: within SETTLE_MS of the first version, before every version, older than the listed ones, a version without a head', () => {
    expect(headSeen(versions, T + 1, false)).toEqual({
      why: expect.stringMatching(/less than 60 s after the merge request's first version/),
    });
    expect(headSeen(versions, T - 1, false)).toEqual({
      why: expect.stringMatching(/before any version/),
    });
    expect(headSeen(versions, T - 1, true)).toEqual({
      why: expect.stringMatching(/older than the 100 newest/),
    });
    expect(
      headSeen([{ sha: null, at: T + 10 * 60_000 }, versions[1]!], T + 20 * 60_000, false),
    ).toEqual({ why: expect.stringMatching(/without its head commit/) });
    expect(headSeen([], T, false)).toEqual({ why: expect.stringMatching(/before any version/) });
  });
});
