// Structured JSON logging (pino, the logger Fastify uses), with secrets redacted.
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'mailpath' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['req.headers.authorization', 'password', 'new_password', 'token', 'key', '*.password', '*.token'],
        censor: '[redacted]',
      },
    },
    destination as never,
  );
}
