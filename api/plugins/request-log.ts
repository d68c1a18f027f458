// One 'api request' log line per answered request (method, URL with secret query values redacted, status, time, caller, request id), in place of Fastify's two;
// never headers or bodies.
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { CONTEXT_PLUGIN } from './context.js';
import { GUARD_PLUGIN } from './guard.js';

export const REDACTED = '[redacted]';

// Parameter names that carry secrets: reset and invite tokens, keys, codes (TOTP, OAuth), passwords, signatures.
const SECRET_NAME = /token|secret|passw|pwd|key|code|signature|auth|credential|session/i;
// `sig` only as a whole word (sig, x-sig), not inside e.g. `design`.
const SIG_WORD = /(?:^|[^a-z])sig(?:$|[^a-z])/i;
// A session token (a JWT) is a secret whatever the parameter is called.
const JWT = /^eyJ[\w-]*\.[\w-]+\./;

// The tracking links' path segment is a token (an unsubscribe token is a capability): /o/, /c/ and /u/ keep only their prefix.
const TOKEN_PATH = /^\/([ocu])\/[^?]*/;

/** The request target with a tracking link's token replaced. */
export function redactTokenPath(url: string): string {
  return url.replace(TOKEN_PATH, `/$1/${REDACTED}`);
}

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name) || SIG_WORD.test(name);
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    return part;
  }
}

/**
 * The request target with the value of every parameter that looks secret replaced: by its name
 * (isSecretName, judged decoded so `to%6Ben` is caught too), or by its value (`isSecretValue`: an
 * API key; a JWT). Other parameters, and the path, are kept as the client sent them.
 */
export function redactUrl(url: string, isSecretValue: (value: string) => boolean = () => false): string {
  const at = url.indexOf('?');
  if (at < 0) return url;
  const query = url
    .slice(at + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      if (eq < 0) return isSecretValue(decode(name)) || JWT.test(decode(name)) ? REDACTED : pair;
      const value = decode(pair.slice(eq + 1));
      return isSecretName(decode(name)) || isSecretValue(value) || JWT.test(value) ? `${name}=${REDACTED}` : pair;
    })
    .join('&');
  return `${url.slice(0, at)}?${query}`;
}

/** "api_key:<id>", "user:<id>", "mailbox:<id>", or null before (or without) authentication. */
function callerOf(request: FastifyRequest): { principal: string | null; tenant_id: string | null } {
  const p = request.principal;
  if (!p) return { principal: null, tenant_id: null };
  const id = p.kind === 'api_key' ? p.key?.id : p.kind === 'mailbox' ? p.mailbox?.id : p.user?.id;
  return { principal: `${p.kind}:${id ?? '?'}`, tenant_id: p.tenant.id };
}

const requestLog: FastifyPluginAsyncZod = async (app) => {
  const isApiKey = (value: string) => app.ctx.credentials.isApiKey(value);
  const log = app.ctx.log;
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    // Nothing to build when the line would be dropped (MAILPATH_LOG_LEVEL above info).
    if (!log.isLevelEnabled('info')) return done();
    // Through the root logger with the request id as a field (reqId: the client's x-request-id, else one
    // Fastify made): the same line a request child would write, without making one (api/request-logger.ts).
    log.info(
      {
        reqId: request.id,
        method: request.method,
        url: redactUrl(redactTokenPath(request.url), isApiKey),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        ip: request.ip,
        ...callerOf(request),
      },
      'api request',
    );
    done();
  });
};

/**
 * Not encapsulated (fastify-plugin): the hook is the root's, so every request is logged, unknown
 * paths too. Fastify's own request logging is off (logController in api/app.ts).
 */
export const requestLogPlugin = fp(requestLog, { name: 'mailpath-request-log', dependencies: [CONTEXT_PLUGIN, GUARD_PLUGIN] });
