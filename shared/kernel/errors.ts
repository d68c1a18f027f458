// The one error type of the API and its slug catalogue (the spec's Errors table plus a few transport cases).

export const ERROR_STATUS = {
  bad_request: 400,
  unauthenticated: 401,
  quota_exceeded: 402,
  invalid_scope: 403,
  forbidden: 403,
  not_found: 404,
  /** A known path asked with a method it is not served with; the Allow header lists the methods (answered by the not-found handler). */
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  no_verified_domain: 412,
  /** The request did not arrive in full in time (answered by the listener). */
  request_timeout: 408,
  /** The request line and headers are too large (answered by the listener). */
  headers_too_large: 431,
  validation_error: 422,
  rate_limited: 429,
  internal: 500,
  worker_failed: 502,
  worker_unavailable: 503,
  /** The process is shutting down (a request on a connection opened before): send it again. */
  service_unavailable: 503,
} as const;

export type ErrorSlug = keyof typeof ERROR_STATUS;

/** An error a client sees: a stable slug, its HTTP status and a human hint. */
export class AppError extends Error {
  override name = 'AppError';
  readonly status: number;
  /** Extra response headers, e.g. Retry-After on 429. */
  readonly headers: Record<string, string>;
  /** Extra members of the error body beside ok, error and message (e.g. limit and row_count of an oversized export). */
  readonly details: Record<string, unknown>;

  constructor(
    readonly slug: ErrorSlug,
    message: string,
    options: { status?: number; headers?: Record<string, string>; details?: Record<string, unknown> } = {},
  ) {
    super(message);
    this.status = options.status ?? ERROR_STATUS[slug];
    this.headers = options.headers ?? {};
    this.details = options.details ?? {};
  }
}

export const notFound = (what = 'resource') => new AppError('not_found', `${what} not found`);
export const conflict = (message: string) => new AppError('conflict', message);
export const validationError = (field: string, problem: string) => new AppError('validation_error', `${field}: ${problem}`);
/** A suspended tenant's users: at sign-in, at the 2FA challenge and with sessions they already hold. */
export const accountSuspended = () => new AppError('forbidden', 'this account is suspended: signing in is blocked; contact support');

/** True for PostgreSQL's unique_violation, optionally on one named constraint. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint_name?: string };
  return e?.code === '23505' && (constraint === undefined || e.constraint_name === constraint);
}
