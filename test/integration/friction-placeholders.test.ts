/**
 * The friction benchmark lists every placeholder alarm (issue 23 items 3-4):
 * which commit, which file, the placeholder, and the lines that file lost, so
 * a false alarm (a placeholder where no code was removed) shows at once. A
 * docs example's `// ...` and prose saying "rest" added where nothing was
 * removed raise none.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, cleanEnv, makeRepo } from '../helpers.js';

const SCRIPT = path.join(ROOT, 'scripts', 'friction.mjs');
const body = (n: number) => Array.from({ length: n }, (_, i) => `  step${i}();`).join('\n');

describe('friction benchmark: placeholder alarms', () => {
  const repo = makeRepo({
    'src/a.js': `function a() {\n${body(12)}\n}\n`,
    'src/b.js': `/**\n * Usage:\n *   b();\n */\nfunction b() {\n${body(4)}\n}\n`,
  });
  // where nothing was removed: a docs example's `//   ...` and prose about "the rest"
  repo.write(
    'src/b.js',
    `/**\n * Usage:\n *   b();\n *   //   ...\n */\nfunction b() {\n  // rest converted to strings that can't be safely concatenated\n${body(4)}\n}\n`,
  );
  repo.commitAll('docs example and a remark');
  // a truncation: twelve lines of code replaced by a placeholder
  repo.write('src/a.js', 'function a() {\n  // ... rest of the steps unchanged ...\n}\n');
  repo.commitAll('a truncation');
  afterAll(() => repo.cleanup());

  it('lists each alarm with its file and the lines the file lost, in JSON and in the report', () => {
    const r = spawnSync(process.execPath, [SCRIPT, repo.dir, '10', '--json'], {
      env: cleanEnv(),
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.placeholders).toHaveLength(1);
    expect(doc.placeholders[0]).toMatchObject({
      subject: 'a truncation',
      path: 'src/a.js',
      linesDeleted: 12,
    });
    expect(doc.placeholders[0].reason).toMatch(/rest of the steps unchanged/);
    const text = spawnSync(process.execPath, [SCRIPT, repo.dir, '10'], {
      env: cleanEnv(),
      encoding: 'utf8',
    }).stdout;
    expect(text).toMatch(/placeholder alarms: {8}1\n/);
    expect(text).toMatch(/src\/a\.js: elision placeholder .* \(the file lost 12 lines\)/);
  });
});
