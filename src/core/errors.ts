/**
 * Expected failures are GuardErrors with a stable code; anything else that
 * escapes a command is a bug and becomes E_INTERNAL in src/cli. Only the CLI
 * decides exit codes and prints.
 */
export type ErrorCode =
  | 'E_NOT_A_REPO'
  | 'E_CONFIG'
  | 'E_USAGE'
  | 'E_NO_LANE'
  | 'E_LANE_EXISTS'
  | 'E_PATH_ESCAPE'
  | 'E_TIMEOUT'
  | 'E_GIT'
  | 'E_LOCKED'
  | 'E_CHANGED'
  | 'E_NO_CHECKPOINT'
  | 'E_RECORD'
  | 'E_UNREADABLE'
  | 'E_NESTED_REPO'
  | 'E_INTERNAL';

/** Exit codes, for every command (DESIGN.md). */
export const EXIT = { ok: 0, blocked: 1, usage: 2, internal: 3 } as const;

const EXIT_BY_CODE: Record<ErrorCode, number> = {
  E_NOT_A_REPO: EXIT.usage,
  E_CONFIG: EXIT.usage,
  E_USAGE: EXIT.usage,
  E_NO_LANE: EXIT.usage,
  E_LANE_EXISTS: EXIT.blocked,
  E_PATH_ESCAPE: EXIT.usage,
  E_TIMEOUT: EXIT.blocked,
  E_GIT: EXIT.internal,
  E_LOCKED: EXIT.blocked,
  E_CHANGED: EXIT.blocked,
  E_NO_CHECKPOINT: EXIT.usage,
  E_RECORD: EXIT.internal,
  E_UNREADABLE: EXIT.blocked,
  E_NESTED_REPO: EXIT.blocked,
  E_INTERNAL: EXIT.internal,
};

export class GuardError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly exitCode: number;

  constructor(code: ErrorCode, message: string, hint?: string) {
    super(message);
    this.name = 'GuardError';
    this.code = code;
    this.hint = hint;
    this.exitCode = EXIT_BY_CODE[code];
  }
}

export function isGuardError(err: unknown): err is GuardError {
  return err instanceof GuardError;
}
