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

/**
 * What an approval names besides the blob: git stores a symlink as a blob of
 * its target text and a submodule as a commit id, so the same id can be a
 * regular file, a link or a gitlink. A `Guard-Approved:` trailer and a
 * decision record name the mode of a symlink or a gitlink; one without a mode
 * (every trailer and record before the mode was added) approves a regular
 * file only, executable or not (the execute bit loses no content), or a deletion.
 */
export function approvalKind(mode: string | null | undefined): string {
  return mode === MODE.symlink || mode === MODE.gitlink ? mode : 'file';
}
