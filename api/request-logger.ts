// request.log without a pino child per request: the child (with the request id) is made only when something logs through it, which a request that goes well never does.
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
const LEVELS: readonly Level[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Fastify's childLoggerFactory. The one line every request writes ('api request', api/plugins/request-log.ts)
 * goes through the root logger with the request id as a field, so the usual request creates no child at all;
 * errors and warnings logged through request.log still carry reqId, as a real child's would.
 */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  let child: FastifyBaseLogger | undefined;
  const real = () => (child ??= logger.child(bindings, options));
  const lazy = {
    get level() {
      return real().level;
    },
    set level(value: string) {
      real().level = value;
    },
    child: (more: Bindings, moreOptions?: ChildLoggerOptions) => real().child(more, moreOptions),
  } as Record<string, unknown>;
  for (const level of LEVELS) lazy[level] = (...args: unknown[]) => (real()[level] as (...a: unknown[]) => void)(...args);
  return lazy as unknown as FastifyBaseLogger;
}
