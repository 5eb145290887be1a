/**
 * Is a process still running? Locks, temp files and temp indexes carry their
 * owner's pid; one whose owner is gone was left by a killed guard.
 * (EPERM: it exists but belongs to another user.)
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
