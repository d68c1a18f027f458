// Declares an API route once: its zod schemas (validation + OpenAPI), who may call it, its scope and rate bucket.
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import type { Principal } from '../shared/accounts/auth/principal.js';
import { AppError, validationError } from '../shared/kernel/errors.js';
import { describeScopeRule, type ScopeRule } from '../shared/accounts/keys/scopes.js';
import type { RateCategory as BucketCategory } from '../shared/limits/rate-limits/buckets.js';
import type { UserRole } from '../shared/accounts/auth/users.js';
import { defaultRouteRole } from '../shared/accounts/team/roles.js';
import { errorEnvelope, okEnvelope, listEnvelope } from './schemas/envelope.js';
import { IDEMPOTENCY_KEY_PATTERN } from './idempotency-key.js';

/** The API's Fastify instance (the root or a route group's): request and reply types come from the routes' zod schemas. */
export type ApiInstance = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, ZodTypeProvider>;

/**
 * public: no credential; user: a user's session JWT (API keys get 403);
 * any: a JWT or an API key; super_admin: a super-admin user's JWT;
 * any_or_mailbox: as any, and also a mailbox session (every other mode refuses mailbox sessions).
 */
export type AuthMode = 'public' | 'user' | 'any' | 'super_admin' | 'any_or_mailbox';
/** A route's rate bucket; `public` is only for unauthenticated callers, counted per client address. */
export type RateCategory = Exclude<BucketCategory, 'public'>;

export interface RouteConfig {
  auth: AuthMode;
  /** What an API key needs (shared/accounts/keys/scopes.ts); every route that takes keys states it. Checked before the input is validated. */
  scope?: ScopeRule;
  rateLimit?: RateCategory;
  /** The least user role the route needs (policy in shared/accounts/team/roles.ts); default: viewer for reads, developer for writes. */
  role?: UserRole;
  /** The route hands out access that outlives the request (a key, an invite, a role): impersonation tokens are refused (403). */
  grantsAccess?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
    scope?: ScopeRule;
    rateLimit?: RateCategory;
    role?: UserRole;
    grantsAccess?: boolean;
    idempotent?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | undefined;
  }
}

type Schema = z.ZodType;
type Infer<S> = S extends Schema ? z.output<S> : undefined;

export interface HandlerInput<P, Q, B> {
  params: Infer<P>;
  query: Infer<Q>;
  body: Infer<B>;
  principal: Principal;
  ip: string;
  request: FastifyRequest;
  reply: FastifyReply;
}

interface RouteBase<P, Q, B> extends RouteConfig {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  tags: string[];
  summary: string;
  description: string;
  params?: P;
  query?: Q;
  body?: B;
  /** Success status; 200 unless given. */
  status?: number;
  /** Error statuses this route can answer with (documented with the error envelope). */
  errors?: number[];
  /** The OpenAPI operationId (client generators name methods by it); derived from the method and path unless given. */
  operationId?: string;
  /** The route honours an Idempotency-Key request header and marks replayed answers Idempotent-Replayed: true (documented). */
  idempotent?: boolean;
  /**
   * The body is a file the handler streams itself, not JSON: its media types, documented as the request body (the
   * route's group lets every type through unparsed, so the handler refuses a wrong one with a message naming these).
   */
  consumes?: readonly string[];
  /** Error answers with members beyond the shared envelope, by status (documented and serialized with them). */
  errorBodies?: Record<number, Schema>;
}

interface ObjectRoute<P, Q, B, R extends Schema> extends RouteBase<P, Q, B> {
  response: R;
  list?: false;
  handler(input: HandlerInput<P, Q, B>): Promise<z.input<R>>;
}

interface ListRoute<P, Q, B, R extends Schema> extends RouteBase<P, Q, B> {
  response: R;
  list: true;
  handler(input: HandlerInput<P, Q, B>): Promise<{ items: z.input<R>[]; next_cursor: string | null; total: number }>;
}

/** A route whose success answer is not the JSON envelope but a stream of another type (e.g. text/csv), sent as it is produced. */
interface StreamRoute<P, Q, B, R extends Schema> extends RouteBase<P, Q, B> {
  /** The success answer's content type, parameters included (e.g. `text/csv; charset=utf-8`). */
  produces: string;
  /** Documents the success answer under its media type (OpenAPI); not used to serialize it. */
  response: R;
  list?: false;
  handler(input: HandlerInput<P, Q, B>): Promise<NodeJS.ReadableStream>;
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Malformed JSON, an unexpected field or a bad parameter (bad_request)',
  401: 'Missing, unparseable, revoked or expired credential (unauthenticated)',
  402: 'Monthly send cap reached (quota_exceeded)',
  403: 'Credential lacks the required scope (invalid_scope) or role (forbidden)',
  404: 'Not found, or owned by another tenant (not_found)',
  409: 'Conflicts with existing state (conflict)',
  410: 'No longer available (gone)',
  412: 'No verified sending domain (no_verified_domain)',
  413: 'Request body too large (payload_too_large)',
  422: 'A field is invalid; the message names it (validation_error)',
  429: 'Rate limited; retry after Retry-After seconds (rate_limited)',
  500: 'Server failure; safe to retry with exponential backoff (internal)',
  502: 'The worker failed on an out-of-band run (worker_failed)',
  503: 'The needed background worker is not wired (worker_unavailable)',
};

const SECURITY: Record<AuthMode, Record<string, string[]>[]> = {
  public: [],
  user: [{ bearerJwt: [] }, { dashboardSession: [] }],
  any: [{ bearerJwt: [] }, { apiKey: [] }, { dashboardSession: [] }],
  super_admin: [{ bearerJwt: [] }, { dashboardSession: [] }],
  any_or_mailbox: [{ bearerJwt: [] }, { apiKey: [] }, { dashboardSession: [] }],
};

/**
 * A route without a body schema takes no body: fields sent to it are unexpected (400), never silently ignored.
 * A callback hook (no promise per request); only on methods whose bodies Fastify reads: it never parses a GET's or
 * HEAD's (request.body stays undefined), so those skip the hook altogether.
 */
function rejectUnexpectedBody(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const body: unknown = request.body;
  if (body === undefined || body === null || body === '') return done();
  if (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0) return done();
  done(new AppError('bad_request', 'this endpoint takes no request body'));
}

function isEmpty(value: object): boolean {
  for (const _ in value) return false;
  return true;
}

/** The path of the first string holding a NUL character, or undefined. Iterative: no body depth reaches the stack limit. */
function nulField(value: unknown, path: string): string | undefined {
  // Most requests: no parameters, query or body (nothing to walk, nothing to allocate).
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'object' && isEmpty(value)) return undefined;
  const pending: [unknown, string][] = [[value, path]];
  while (pending.length > 0) {
    const [item, at] = pending.pop()!;
    if (typeof item === 'string') {
      if (item.includes('\u0000')) return at;
    } else if (item !== null && typeof item === 'object') {
      // Pushed in reverse, so fields are checked in order and the first offending one is named.
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) pending.push([entries[i]![1], at ? `${at}.${entries[i]![0]}` : entries[i]![0]]);
    }
  }
  return undefined;
}

/**
 * PostgreSQL text cannot hold NUL: refuse it as a wrong field (422) rather than fail in SQL (500). A callback hook
 * (no promise per request).
 */
function rejectNulCharacters(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const field = nulField(request.params, '') ?? nulField(request.query, '') ?? nulField(request.body, '');
  if (field === undefined) return done();
  const where = nulField(request.params, '') !== undefined ? 'path' : nulField(request.query, '') !== undefined ? 'query' : 'body';
  done(validationError(field || where, 'must not contain NUL characters'));
}

/**
 * A stable operationId from method and path, e.g. `POST /campaigns/:id/send` → `postCampaignsByIdSend`: the method,
 * then each segment in camel case, a parameter as `By` + its name. Two paths can meet (`/a/b-c`, `/a/b/c`): the route
 * then names itself (operationId), and test/api/plugins/openapi.test.ts asserts they are unique.
 */
export function operationIdOf(method: string, url: string): string {
  const camel = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);
  const pascal = (text: string) =>
    text
      .split(/[^A-Za-z0-9]+/)
      .filter(Boolean)
      .map(camel)
      .join('');
  const words = url
    .replace(/^\/api\/v1(?=\/|$)/, '')
    .split('/')
    .filter(Boolean)
    .map((segment) => (segment.startsWith(':') ? `By${pascal(segment.slice(1).replace(/\(.*$/, ''))}` : pascal(segment)));
  return method.toLowerCase() + words.join('');
}

/** The Idempotency-Key request header and the Idempotent-Replayed answer header, as JSON Schema for the OpenAPI document. */
export const IDEMPOTENCY_HEADERS = {
  request: {
    type: 'object',
    properties: {
      'Idempotency-Key': {
        type: 'string',
        minLength: 1,
        maxLength: 255,
        pattern: IDEMPOTENCY_KEY_PATTERN,
        description: 'Optional. The same key within 24 h answers the first answer again instead of acting twice.',
      },
    },
  },
  response: {
    'Idempotent-Replayed': {
      type: 'string',
      enum: ['true'],
      description: 'Present (true) when this answer is a replay of an earlier request with the same Idempotency-Key.',
    },
  },
} as const;

/** A success answer documented under its own media type: Fastify and the OpenAPI document read `content` per type. */
interface MediaResponse {
  description: string;
  content: Record<string, { schema: Schema }>;
}

/** `text/csv; charset=utf-8` → `text/csv`: the document names the media type; the answer's header carries the charset. */
export const mediaTypeOf = (contentType: string): string => contentType.split(';')[0]!.trim().toLowerCase();

function mediaResponse(route: { produces: string; response: Schema }): MediaResponse {
  // Bytes a text decoder would spoil (a PDF) are `format: binary`, so generated clients hand back a blob.
  const description = route.response.description ?? '';
  const schema = route.produces.startsWith('text/') ? route.response : route.response.meta({ description, format: 'binary' });
  return { description: `${route.produces}: ${description}`, content: { [mediaTypeOf(route.produces)]: { schema } } };
}

export function defineRoute<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined, R extends Schema>(
  app: ApiInstance,
  route: ObjectRoute<P, Q, B, R> | ListRoute<P, Q, B, R> | StreamRoute<P, Q, B, R>,
): void {
  // Client generators group operations by tag: an untagged one would land in a catch-all.
  if (route.tags.length === 0) throw new Error(`${route.method} ${route.url}: a route declares at least one tag`);
  const stream = 'produces' in route ? route : undefined;
  const status = route.status ?? 200;
  const defaultErrors = [400, 422, 429, 500, ...(route.auth === 'public' ? [] : [401, 403])];
  const errorCodes = [...new Set([...defaultErrors, ...(route.errors ?? [])])].sort();
  const response: Record<number, Schema | MediaResponse> = {
    [status]: stream ? mediaResponse(stream) : route.list ? listEnvelope(route.response) : okEnvelope(route.response),
  };
  for (const code of errorCodes) response[code] = (route.errorBodies?.[code] ?? errorEnvelope).describe(ERROR_DESCRIPTIONS[code] ?? 'Error');
  const scopeNote = route.scope ? `\n\n${describeScopeRule(route.scope)}` : '';
  const role = route.role ?? defaultRouteRole(route.method, route.url);
  const roleNote = route.auth !== 'public' && route.auth !== 'super_admin' && role !== 'viewer' ? `\n\nUsers need the \`${role}\` role or higher.` : '';
  const authNote =
    route.auth === 'user' ? '\n\nRequires a user session (JWT); API keys get 403 forbidden.' : route.auth === 'super_admin' ? '\n\nSuper-admin only.' : '';
  const grantNote = route.grantsAccess ? '\n\nImpersonation tokens get 403 forbidden: access granted here would outlast the token.' : '';

  app.route({
    method: route.method,
    url: route.url,
    config: {
      auth: route.auth,
      role,
      ...(route.idempotent ? { idempotent: true } : {}),
      ...(route.scope ? { scope: route.scope } : {}),
      ...(route.rateLimit ? { rateLimit: route.rateLimit } : {}),
      ...(route.grantsAccess ? { grantsAccess: true } : {}),
    },
    schema: {
      operationId: route.operationId ?? operationIdOf(route.method, route.url),
      tags: route.tags,
      summary: route.summary,
      description: route.description + scopeNote + roleNote + authNote + grantNote,
      security: SECURITY[route.auth],
      ...(route.params ? { params: route.params } : {}),
      ...(route.query ? { querystring: route.query } : {}),
      ...(route.body ? { body: route.body } : {}),
      ...(route.consumes ? { consumes: route.consumes } : {}),
      response,
    },
    ...(route.body || route.method === 'GET' ? {} : { preValidation: rejectUnexpectedBody }),
    preHandler: rejectNulCharacters,
    handler: async (request, reply) => {
      const input = {
        params: request.params,
        query: request.query,
        body: request.body,
        principal: request.principal!,
        ip: request.ip,
        request,
        reply,
      } as HandlerInput<P, Q, B>;
      reply.code(status);
      if (stream) return reply.type(stream.produces).send(await stream.handler(input));
      if (route.list) {
        const page = await route.handler(input);
        return { ok: true, data: page.items, next_cursor: page.next_cursor, total: page.total };
      }
      return { ok: true, data: await route.handler(input) };
    },
  });
}
