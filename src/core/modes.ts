/**
 * git's file modes, as git prints them (`ls-tree`, `diff --raw`, `ls-files -s`)
 * and as guard stores and reports them: octal strings. git records only these;
 * of a regular file's permissions it keeps the owner's execute bit alone.
 * https://git-scm.com/docs/git-fast-import#_filemodify
 */
export const MODE = {
  file: '100644',
  executable: '100755',
  symlink: '120000',
  gitlink: '160000',
  tree: '040000',
} as const;

export type GitMode = (typeof MODE)[keyof typeof MODE];

/** A regular file's mode from its permission bits (`stat.mode`). */
export function fileMode(perm: number): typeof MODE.file | typeof MODE.executable {
  return perm & 0o100 ? MODE.executable : MODE.file;
}
