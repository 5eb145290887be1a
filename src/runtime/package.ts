import { fileURLToPath } from 'node:url';

/**
 * Files of guard's own package, by their path from the package root
 * (`hooks/commit-msg`, `package.json`, `dist/cli/main.js`). This module sits
 * two folders below the root in the sources (src/runtime/) and in the build
 * (dist/runtime/), and the bundle puts what it inlines two folders below too
 * (dist/cli/, scripts/bundle.mjs): so this is the one place that counts the
 * folders, and modules anywhere else, at any depth, ask it.
 */
const ROOT = new URL('../../', import.meta.url);

/** The file at `rel` (from the package root) as a path. */
export function packagePath(rel: string): string {
  return fileURLToPath(new URL(rel, ROOT));
}

/** The built module at `rel` from dist/ (`cli/main.js`, `plugin/index.js`), beside whatever this module was built into. */
export function builtPath(rel: string): string {
  return fileURLToPath(new URL(`../${rel}`, import.meta.url));
}
