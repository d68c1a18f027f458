// The dashboard's one way to the API: the typed client generated from the OpenAPI document (clients/typescript), on
// this origin's /api/v1, its credential the HttpOnly session cookie, with the CSRF token on every write.
import { createMailpathClient } from '../../clients/typescript/index';

let csrfToken: string | undefined;

/** Held in memory only: a reload asks GET /auth/session for a fresh one. */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

/** Called when the API says the session is gone (401), so the app can return to the sign-in page. */
let onSignedOut: () => void = () => {};
export function whenSignedOut(callback: () => void): void {
  onSignedOut = callback;
}

export const api = createMailpathClient({ baseUrl: '/api/v1', credentials: 'same-origin' });

api.use({
  onRequest({ request }) {
    if (csrfToken && request.method !== 'GET' && request.method !== 'HEAD') request.headers.set('x-csrf-token', csrfToken);
    return request;
  },
  onResponse({ request, response }) {
    // The session routes answer 401 for a wrong password, not for a lost session.
    if (response.status === 401 && !new URL(request.url).pathname.startsWith('/api/v1/auth/')) onSignedOut();
    return response;
  },
});

/** An API refusal: the error envelope's slug and message, shown to the user as the API wrote it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly slug: string,
    message: string,
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

interface Answer<T> {
  data?: { data: T } | undefined;
  error?: unknown;
  response: Response;
}

/** The answer of a success, or throws ApiError with the error envelope's slug and message: the one place for the rule. */
async function unwrapAnswer<T>(pending: Promise<Answer<T>>): Promise<Answer<T> & { data: { data: T } }> {
  let answer: Answer<T>;
  try {
    answer = await pending;
  } catch {
    throw new ApiError(0, 'network', 'Mailpath did not answer: check your connection and try again.');
  }
  if (answer.data !== undefined && answer.response.ok) return answer as Answer<T> & { data: { data: T } };
  const envelope = answer.error as { error?: string; message?: string } | undefined;
  const retry = Number(answer.response.headers.get('retry-after'));
  throw new ApiError(
    answer.response.status,
    envelope?.error ?? 'internal',
    envelope?.message ?? `the API answered ${answer.response.status}`,
    Number.isFinite(retry) && retry > 0 ? retry : undefined,
  );
}

/** The data of a success envelope, or throws ApiError with the error envelope's slug and message. */
export async function unwrap<T>(pending: Promise<Answer<T>>): Promise<T> {
  return (await unwrapAnswer(pending)).data.data;
}

/** A list envelope's items with its cursor and total. */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
  total: number;
}

/** Like unwrap, for list routes: the page's items with the envelope's cursor and total. */
export async function unwrapList<T>(pending: Promise<Answer<T[]>>): Promise<Page<T>> {
  const answer = await unwrapAnswer(pending);
  const body = answer.data as unknown as { data: T[]; next_cursor?: string | null; total?: number };
  return { items: body.data, next_cursor: body.next_cursor ?? null, total: body.total ?? body.data.length };
}

/** Like unwrap, for the routes that answer a document rather than an envelope (GET /sends/{id}/raw, parseAs 'text'). */
export async function unwrapText(pending: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<string> {
  // Such an answer's data is the text itself: unwrapAnswer's check (data present, status ok) holds for it as well.
  const answer = await unwrapAnswer(pending as Promise<Answer<never>>);
  return answer.data as unknown as string;
}
