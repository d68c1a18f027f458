// Structured JSON logging (pino, the logger Fastify uses), with secrets redacted.
import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * JSON lines on stdout, or on `destination` (tests). Written synchronously: a line is out before
 * the next statement runs, so a crash loses none and stderr output (the fatal line, the generated
 * password) lands after the log lines before it.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'mailpath' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'password', 'new_password', 'token', 'key', '*.password', '*.token'],
        censor: '[redacted]',
      },
    },
    (destination ?? pino.destination({ dest: 1, sync: true })) as never,
  );
}
