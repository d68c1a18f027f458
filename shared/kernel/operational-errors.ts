// Failures the operator causes and fixes (a port in use, a data dir in use, an unreachable database): the message says it all, so the entry point prints it
// without a stack.

/** An expected failure of the environment, not a bug: `message` is one line naming what to fix. */
export class OperationalError extends Error {
  override name = 'OperationalError';
}

/** The variables naming the ports Mailpath listens on: a listen failure names the one to change. */
export type PortVariable =
  | 'MAILPATH_HTTPS_PORT'
  | 'MAILPATH_HTTP_PORT'
  | 'MAILPATH_MX_PORT'
  | 'MAILPATH_SUBMISSION_PORT'
  | 'MAILPATH_SUBMISSION_TLS_PORT'
  | 'MAILPATH_METRICS_PORT';

/**
 * A listener that could not bind, as the operator reads it: the variable and port for a port in use
 * or a privileged port, MAILPATH_BIND_HOST for an address this machine does not have. Any other
 * failure is returned as it is (unexpected: printed with its stack).
 */
export function listenFailure(variable: PortVariable, port: number, host: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'EADDRINUSE':
      return new OperationalError(`${variable} ${port} is in use`, { cause: err });
    case 'EACCES':
      return new OperationalError(`${variable} ${port} needs privileges to bind (EACCES): choose a port above 1023 or allow the program to bind it`, {
        cause: err,
      });
    case 'EADDRNOTAVAIL':
      return new OperationalError(`MAILPATH_BIND_HOST ${host} is not an address of this machine (EADDRNOTAVAIL)`, { cause: err });
    default:
      return err instanceof Error ? err : new Error(String(err));
  }
}
