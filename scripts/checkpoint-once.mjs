#!/usr/bin/env node
// One full checkpoint of the work tree at argv[2], timed inside the process
// (node startup and module loading excluded): what guard pays before a write.
// Prints {"ms": N, "reused": bool}. Used by scripts/bench.mjs.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'git');
const { openRepo } = await import(path.join(dist, 'repo.js'));
const { checkpoint } = await import(path.join(dist, 'checkpoint.js'));
const repo = await openRepo(process.argv[2]);
const t0 = process.hrtime.bigint();
const cp = await checkpoint(repo, { reason: 'bench', command: 'bench', lane: null });
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
console.log(JSON.stringify({ ms, reused: cp.reused }));
