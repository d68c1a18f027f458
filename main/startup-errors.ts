// How the `mailpath` command reports a failure: an expected one (configuration, a port or the data dir in use, the database unreachable) as one line without
// a stack, anything else with its stack.
import { ConfigError } from '../shared/config/index.js';
import { OperationalError } from '../shared/kernel/operational-errors.js';

export interface FatalReport {
  /** What to print on stderr (ends with a newline). */
  text: string;
  /** The exit status. */
  status: number;
}

/** 78 (EX_CONFIG) for configuration, as sysexits.h; 1 for everything else. */
export const EXIT_CONFIG = 78;
export const EXIT_FAILURE = 1;

// File errors whose path says what to fix (a data dir not writable, a certificate file missing).
const FILE_PROBLEMS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  ENOTDIR: 'not a directory',
  EISDIR: 'is a directory',
};

/** The one line of an expected failure, or undefined when the failure is unexpected. */
export function expectedFailure(err: unknown): string | undefined {
  if (err instanceof ConfigError || err instanceof OperationalError) return err.message;
  const e = err as NodeJS.ErrnoException | undefined;
  if (e instanceof Error && typeof e.path === 'string' && typeof e.code === 'string' && typeof e.syscall === 'string') {
    const problem = FILE_PROBLEMS[e.code];
    if (problem) return `cannot ${e.syscall} ${e.path}: ${problem} (${e.code})`;
  }
  return undefined;
}

export function describeFatal(err: unknown): FatalReport {
  const expected = expectedFailure(err);
  if (expected !== undefined) return { text: `mailpath: ${expected}\n`, status: err instanceof ConfigError ? EXIT_CONFIG : EXIT_FAILURE };
  const detail = err instanceof Error ? (err.stack ?? err.message) : String(err);
  return { text: `mailpath: fatal: ${detail}\n`, status: EXIT_FAILURE };
}
