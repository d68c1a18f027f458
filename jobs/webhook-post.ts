// One webhook POST, whatever it carries (inbound mail, event JSON): URL policy re-checked, the checked address pinned, a deadline, the answer read.
import type { LookupAddress, LookupOptions } from 'node:dns';
import { performance } from 'node:perf_hooks';
import { checkWebhookUrl, UrlPolicyError, type PinnedTarget } from '../shared/webhooks/inbound/url-policy.js';
import type { PostDeps, PostResult, PostSigned, SignedRequest } from '../shared/webhooks/post.js';

/** How much of a non-2xx answer's body is kept for last_error. */
const SNIPPET_BYTES = 300;

/**
 * net.connect's lookup, answering the one checked address: the connection cannot reach anything
 * the policy did not see, whatever DNS says by then (no rebinding between check and connect).
 */
function pinnedLookup(target: PinnedTarget) {
  return (hostname: string, options: LookupOptions, callback: (...args: unknown[]) => void): void => {
    if (hostname.replace(/^\[(.*)\]$/, '$1') !== target.host) {
      callback(new UrlPolicyError(`unexpected look-up of ${hostname}`));
      return;
    }
    const answer: LookupAddress = { address: target.address, family: target.family };
    if (options.all) callback(null, [answer]);
    else callback(null, answer.address, answer.family);
  };
}

const codeOf = (err: unknown): string | undefined => {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  const code = typeof e?.code === 'string' ? e.code : typeof e?.cause?.code === 'string' ? e.cause.code : undefined;
  return code;
};

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/** The first bytes of an answer's body, one line of printable text; the rest is discarded. */
async function snippetOf(body: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    length += chunk.length;
    if (length >= SNIPPET_BYTES) break;
  }
  const text = Buffer.concat(chunks).subarray(0, SNIPPET_BYTES).toString('utf8');
  return text.replace(/[\s\p{Cc}]+/gu, ' ').trim();
}

/**
 * POSTs the signed request once. Outcomes are data: a 2xx must arrive (headers) within
 * timeout_seconds of the request starting; what happens next is decided by retry-schedule.ts.
 */
export const postSigned: PostSigned = async (deps: PostDeps, post: SignedRequest): Promise<PostResult> => {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let target: PinnedTarget;
  try {
    target = await checkWebhookUrl(post.url, deps.webhooks, deps.dns);
  } catch (err) {
    if (err instanceof UrlPolicyError) return { kind: 'refused', error: `webhook_url ${err.message}`, durationMs: elapsed() };
    throw err;
  }
  const timeoutMs = Math.round(deps.webhooks.timeout_seconds * 1000);
  // undici is imported on the first POST (its ~100 modules are not needed by processes that never make one).
  const { Agent, request } = await import('undici');
  // One agent per POST: its connection is made for this pinned address and closed with it.
  const agent = new Agent({
    connect: { lookup: pinnedLookup(target) as never, timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connections: 1,
  });
  const deadline = AbortSignal.timeout(timeoutMs);
  try {
    const res = await request(target.url, { method: 'POST', dispatcher: agent, headers: post.headers, body: post.body, signal: deadline });
    const durationMs = elapsed();
    const header = res.headers['retry-after'];
    const retryAfter = Array.isArray(header) ? header[0] : header;
    // The status is what counts; a body that is slow or broken after it changes nothing.
    const snippet = res.statusCode >= 200 && res.statusCode < 300 ? '' : await snippetOf(res.body).catch(() => '');
    return { kind: 'answered', status: res.statusCode, retryAfter, snippet, durationMs };
  } catch (err) {
    const code = codeOf(err);
    const timedOut = deadline.aborted || (code !== undefined && TIMEOUT_CODES.has(code));
    if (timedOut) return { kind: 'failed', error: `no answer within ${deps.webhooks.timeout_seconds} s`, timedOut, durationMs: elapsed() };
    if (err instanceof UrlPolicyError) return { kind: 'refused', error: `webhook_url ${err.message}`, durationMs: elapsed() };
    const message = ((err as Error)?.message ?? String(err)).replace(/\s+/g, ' ').trim();
    return { kind: 'failed', error: code && !message.includes(code) ? `${code}: ${message}` : message, timedOut: false, durationMs: elapsed() };
  } finally {
    await agent.destroy().catch(() => undefined);
  }
};
