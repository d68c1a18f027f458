// request.log without a pino child per request: the child (with the request id) is made only when something logs through it, which a request that goes well
// never does.
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js';

type LogFn = (...args: unknown[]) => void;

/**
 * A stand-in for the request's child logger. A class, so a request costs one small object and no closures:
 * its methods live on the prototype and make the real child on first use.
 */
class LazyChildLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.real().level;
  }

  set level(value: string) {
    this.real().level = value;
  }

  fatal(...args: unknown[]): void {
    (this.real().fatal as LogFn)(...args);
  }
  error(...args: unknown[]): void {
    (this.real().error as LogFn)(...args);
  }
  warn(...args: unknown[]): void {
    (this.real().warn as LogFn)(...args);
  }
  info(...args: unknown[]): void {
    (this.real().info as LogFn)(...args);
  }
  debug(...args: unknown[]): void {
    (this.real().debug as LogFn)(...args);
  }
  trace(...args: unknown[]): void {
    (this.real().trace as LogFn)(...args);
  }
  silent(...args: unknown[]): void {
    (this.real().silent as LogFn)(...args);
  }
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }
}

/**
 * Fastify's childLoggerFactory. The one line every request writes ('api request', api/plugins/request-log.ts)
 * goes through the root logger with the request id as a field, so the usual request creates no child at all;
 * errors and warnings logged through request.log still carry reqId, as a real child's would.
 */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
}
