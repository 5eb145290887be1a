/** One line of `guard doctor`: a check, whether it passed, how bad it is when not, and what to do. */
export type Severity = 'error' | 'warning' | 'info';

export interface DoctorCheck {
  id: string;
  ok: boolean;
  severity: Severity;
  message: string;
  hint?: string;
}
