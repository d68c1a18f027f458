// What both API listeners (HTTPS and the HTTP redirect) share below the framework: request, header and keep-alive
// timeouts, the header size limit, and the answers Node's HTTP server gives before any route sees the request
// (408, 431, 400 from the parser), written in the error envelope with X-RateLimit-* headers.
import { STATUS_CODES, type ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import { STATS_BATCH_MAX } from '../shared/campaigns/stats.js';
import type { Config } from '../shared/config/index.js';
import { ERROR_STATUS, type ErrorSlug } from '../shared/kernel/errors.js';
import type { ApiContext } from './context.js';
import { API_PREFIX } from './plugins/openapi.js';
import { addressRateHeaders, inFlightRateHeaders } from './plugins/rate-limit.js';

type RequestLimits = Config['limits']['request'];

const UUID_CHARS = 36;
/**
 * The longest request line the spec documents: GET /campaigns/stats-batch takes up to 500 campaign ids,
 * comma-separated, in its query (a GET has no body to carry them). With each comma percent-encoded (%2C, as
 * URLSearchParams and most HTTP clients write it) that is about 19.5 KB, more than the default 16 KiB that
 * request.max_header_bytes allows the whole head, so 500 ids would get 431 before the route could answer.
 */
export const LONGEST_REQUEST_LINE =
  `GET ${API_PREFIX}/campaigns/stats-batch?ids= HTTP/1.1\r\n`.length + STATS_BATCH_MAX * UUID_CHARS + (STATS_BATCH_MAX - 1) * '%2C'.length;

/**
 * Node's parser limit for the request line and headers together: request.max_header_bytes for the headers, plus room
 * for that request line, so a 500-id stats-batch carries the same headers as any other request. Node has one limit
 * per server, not per route, so the room is there for every request: raised by exactly what the documented maximum
 * needs (about 19.5 KB), not to an arbitrary larger value.
 */
export function headLimitBytes(limits: RequestLimits): number {
  return limits.max_header_bytes + LONGEST_REQUEST_LINE;
}

/**
 * Node's server options from config/limits.yaml `request`. Node checks the request and header deadlines every
 * connectionsCheckingInterval (30 s by default), so that is kept well below them: a stalled request is answered
 * within about a quarter of its timeout past it.
 */
export function listenerOptions(limits: RequestLimits): ServerOptions & { requestTimeout: number; keepAliveTimeout: number } {
  return {
    requestTimeout: limits.timeout_ms,
    headersTimeout: limits.headers_timeout_ms,
    keepAliveTimeout: limits.keep_alive_timeout_ms,
    maxHeaderSize: headLimitBytes(limits),
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headers_timeout_ms / 4))),
  };
}

interface ClientErrorAnswer {
  slug: ErrorSlug;
  message: string;
}

/** The envelope for an error of Node's HTTP parser or request deadlines, undefined when there is no one to answer. */
export function clientErrorAnswer(code: string | undefined, limits: RequestLimits): ClientErrorAnswer | undefined {
  switch (code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        slug: 'request_timeout',
        message:
          `the request did not arrive in full in time (headers within ${limits.headers_timeout_ms / 1000} s, all of it within ${limits.timeout_ms / 1000} ` +
          `s)`,
      };
    case 'HPE_HEADER_OVERFLOW':
      return { slug: 'headers_too_large', message: `the request line and headers exceed ${headLimitBytes(limits)} bytes` };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { slug: 'payload_too_large', message: 'the chunk extensions of the body are too large' };
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return { slug: 'bad_request', message: 'invalid Content-Length header (not a number, repeated, or sent with Transfer-Encoding)' };
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'HPE_STRICT':
      return { slug: 'bad_request', message: 'malformed Transfer-Encoding or chunked body' };
    case 'HPE_INVALID_METHOD':
      return { slug: 'bad_request', message: 'malformed request line: unknown method' };
    case 'HPE_INVALID_URL':
      return { slug: 'bad_request', message: 'malformed request target' };
    case 'HPE_INVALID_VERSION':
      return { slug: 'bad_request', message: 'unsupported HTTP version' };
    case 'HPE_INVALID_HEADER_TOKEN':
    case 'HPE_LF_EXPECTED':
    case 'HPE_CR_EXPECTED':
      return { slug: 'bad_request', message: 'malformed header line' };
    default:
      return { slug: 'bad_request', message: 'malformed HTTP request' };
  }
}

/** One HTTP/1.1 response as bytes: the envelope, its headers, and Connection: close. */
function rawResponse(answer: ClientErrorAnswer, headers: Record<string, string>): string {
  const status = ERROR_STATUS[answer.slug];
  const body = JSON.stringify({ ok: false, error: answer.slug, message: answer.message });
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/**
 * Connections whose request is a streamed upload (bulk imports): its route enforces a deadline of its own
 * (config/limits.yaml imports), so the listener's request deadline is ignored for them. Node reports that
 * deadline once per request and stops watching it, so ignoring it lets the upload go on.
 */
const longUploads = new WeakSet<Socket>();

/** Exempts the connection's current request from the request deadline; call `release` once it is answered. */
export function exemptFromRequestDeadline(socket: Socket): { release(): void } {
  longUploads.add(socket);
  return { release: () => longUploads.delete(socket) };
}

/** Sockets already being answered: the parser reports an error again for each further chunk it is given. */
const answering = new WeakSet<Socket>();

/**
 * The 'clientError' listener of both listeners (Fastify's clientErrorHandler on HTTPS). Node hands over the socket:
 * the answer is written on it directly, then the connection is closed. A request already counted by the guard (a
 * body that stalled after routing) reports its own bucket; anything else counts against the address's public bucket.
 */
export function clientErrorHandler(ctx: ApiContext): (err: Error & { code?: string }, socket: Socket) => void {
  const limits = ctx.config.limits.request;
  return (err, socket) => {
    if (answering.has(socket)) return;
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && longUploads.has(socket)) return;
    answering.add(socket);
    const answer = clientErrorAnswer(err.code, limits);
    const inFlight = inFlightRateHeaders(socket);
    // Part of a response already went out (or there is nothing to answer): the connection can only be cut.
    if (!answer || socket.destroyed || !socket.writable || inFlight?.res.headersSent) {
      socket.destroy();
      return;
    }
    ctx.log.debug({ err: { code: err.code, message: err.message }, remoteAddress: socket.remoteAddress }, 'client error answered by the listener');
    void (inFlight ? Promise.resolve(inFlight.headers) : addressRateHeaders(ctx, socket.remoteAddress)).then((headers) => {
      if (socket.destroyed || !socket.writable) return;
      socket.end(rawResponse(answer, headers));
      // end() flushes, then the connection is closed even if the client keeps sending.
      socket.once('finish', () => socket.destroy());
    });
  };
}
