import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { installTrailerHook } from '../../src/flows/setup/trailer-hook.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const body = readFileSync(
  path.join(import.meta.dirname, '..', '..', 'hooks', 'commit-msg'),
  'utf8',
).replace(/^#!.*\n/, '');

async function install(existing: string): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'guard-trailer-'));
  dirs.push(dir);
  writeFileSync(path.join(dir, 'commit-msg'), existing);
  await installTrailerHook(dir, '.husky');
  const once = readFileSync(path.join(dir, 'commit-msg'), 'utf8');
  expect(await installTrailerHook(dir, '.husky')).toBeNull();
  return once;
}

describe("guard's commit-msg lines beside the user's", () => {
  it("go first, in a subshell, so the user's exit cannot skip them nor guard's exit skip the user's", async () => {
    const out = await install('#!/bin/sh\nnpx commitlint --edit "$1"\nexit 0\n');
    expect(out.startsWith(`#!/bin/sh\n(\n${body.trimEnd()}\n) || exit 1\n`)).toBe(true);
    expect(out.endsWith('npx commitlint --edit "$1"\nexit 0\n')).toBe(true);
  });

  it('a hook an older guard init appended to is reordered: guard first, once', async () => {
    const out = await install(`#!/bin/sh\nexit 0\n\n${body}`);
    expect(out.startsWith('#!/bin/sh\n(\n')).toBe(true);
    expect(out.split('guard-approved-trailers').length).toBe(
      body.split('guard-approved-trailers').length,
    );
    expect(out.endsWith('exit 0\n')).toBe(true);
  });

  it('a hook in another language is left to run itself, the lines appended as before', async () => {
    const out = await install('#!/usr/bin/env python3\nprint("x")\n');
    expect(out).toBe(`#!/usr/bin/env python3\nprint("x")\n\n${body}`);
  });
});

describe("guard's own commit-msg hook", () => {
  it('is left as it is', async () => {
    const script = readFileSync(
      path.join(import.meta.dirname, '..', '..', 'hooks', 'commit-msg'),
      'utf8',
    );
    expect(await install(script)).toBe(script);
  });
});
