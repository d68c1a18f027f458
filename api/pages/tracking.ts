// The public tracking and unsubscribe endpoints, outside /api/v1: GET /o/<token> (open pixel), GET /c/<token> (click redirect, or a page naming the target
// for simulated, sandbox and suspended tenants' sends), GET and POST /u/<token> (unsubscribe page, RFC 8058 one-click).
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { AppError } from '../../shared/kernel/errors.js';
import { truncateIp } from '../../shared/engagement/tracking/ip.js';
import { readClickToken, readOpenToken, readUnsubscribeToken, TRACKING_PATHS } from '../../shared/engagement/tracking/link-tokens.js';
import { clickTenant, unsubscribeRecipient } from '../../shared/engagement/tracking/link-targets.js';
import type { Hit } from '../../shared/engagement/tracking/recorder.js';
import { applyUnsubscribe } from '../../shared/engagement/tracking/unsubscribe-apply.js';
import { SuspendedTenants } from '../../shared/accounts/tenants/suspended-cache.js';
import { problemPage, type PageAnswer } from './answer.js';
import { clickInterstitial } from './click-interstitial.js';
import { PAGE_HEADERS } from './html.js';
import { brokenClickLink, brokenUnsubscribeLink, unsubscribeForm, unsubscribedPage } from './unsubscribe-page.js';

/** A transparent 1×1 GIF (42 bytes). */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** Every fetch must reach us (an open per fetch): nothing may cache the pixel. */
const PIXEL_HEADERS = {
  'content-type': 'image/gif',
  'cache-control': 'no-store, no-cache, must-revalidate, max-age=0',
  pragma: 'no-cache',
  expires: '0',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** RFC 8058's body (or the page's form) is a few dozen bytes; anything else posted here is read and ignored. */
const BODY_LIMIT = 16 * 1024;
/** The longest token accepted: a click token holds its URL (links beyond ~6 KB do not work in mail clients anyway). */
const MAX_TOKEN_LENGTH = 8192;

function page(reply: FastifyReply, answer: PageAnswer): FastifyReply {
  return reply
    .code(answer.status)
    .headers({ ...PAGE_HEADERS, ...answer.headers })
    .send(answer.html);
}

function tokenOf(request: FastifyRequest): string {
  const params = request.params as Record<string, string | undefined>;
  const token = params['token'] ?? params['*'] ?? '';
  return token.length <= MAX_TOKEN_LENGTH ? token : '';
}

function client(request: FastifyRequest): { userAgent: string; ip: string | null } {
  const ua = request.headers['user-agent'];
  return { userAgent: typeof ua === 'string' ? ua : '', ip: truncateIp(request.ip) };
}

/** An absolute http(s) URL a Location header can carry (non-ASCII percent-encoded), or undefined. */
function location(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Encapsulated: its body parsers and error handler apply to these paths only. The root's guard still runs
 * first: every request counts against the client address's `tracking` rate-limit bucket (config/limits.yaml).
 */
export const trackingPages: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  const suspended = new SuspendedTenants(ctx.sql, ctx.log, ctx.config.tracking.click_pages.suspended_check_seconds * 1000);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_request, body, done) => {
    done(null, new URLSearchParams(body as string));
  });
  // RFC 8058 prefers multipart/form-data: what is posted does not matter (the POST is the request), so any body is taken.
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, _body, done) => done(null, undefined));
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const appError = err instanceof AppError ? err : undefined;
    const clientStatus =
      err.code?.startsWith('FST_') && err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : undefined;
    const status = appError?.status ?? clientStatus ?? 500;
    if (status >= 500) request.log.error({ err }, 'tracking endpoint failed');
    return page(reply, problemPage(status, appError));
  });

  /**
   * Waits until the hit is durable (fsynced to the spool, or committed: config/tracking.yaml recorder); a failure to
   * record never fails the answer (the reader still gets the image or the page).
   */
  const record = async (request: FastifyRequest, hit: Omit<Hit, 'userAgent' | 'ip' | 'at'>) => {
    // HEAD requests (link checkers) are answered but are nobody opening or clicking.
    if (request.method !== 'GET') return;
    try {
      await ctx.hits.record({ ...hit, ...client(request), at: ctx.clock.now() });
    } catch (err) {
      request.log.error({ err }, 'tracking hit not recorded');
    }
  };

  const options = { config: { auth: 'public' as const, rateLimit: 'tracking' as const }, schema: { hide: true } };

  app.get(`${TRACKING_PATHS.open}:token`, options, async (request, reply) => {
    const sendId = readOpenToken(ctx.linkKey, tokenOf(request));
    if (sendId) await record(request, { kind: 'open', sendId });
    // A bad token still gets an image (no broken-image icon in the message), with 404.
    return reply
      .code(sendId ? 200 : 404)
      .headers(PIXEL_HEADERS)
      .send(PIXEL);
  });

  // A wildcard, not a parameter: a click token holds its URL and is longer than a route parameter may be.
  app.get(`${TRACKING_PATHS.click}*`, options, async (request, reply) => {
    const target = readClickToken(ctx.linkKey, tokenOf(request));
    const to = target ? location(target.url) : undefined;
    if (!target || !to) return page(reply, brokenClickLink());
    // The tenant is in the token (a link minted before it was is looked up); suspensions are cached (click_pages).
    const tenantId = await clickTenant(ctx.sql, target);
    const reason = target.interstitial ? 'simulated' : tenantId !== undefined && (await suspended.has(tenantId)) ? 'suspended' : undefined;
    // Recorded either way: a click on the page's link is the person's choice, the request for the page their click.
    await record(request, { kind: 'click', sendId: target.sendId, url: target.url, links: target.links });
    if (reason) return page(reply, clickInterstitial(to, reason));
    return reply.code(302).headers({ location: to, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }).send();
  });

  app.get(`${TRACKING_PATHS.unsubscribe}:token`, options, async (request, reply) => {
    const token = tokenOf(request);
    const sendId = readUnsubscribeToken(ctx.linkKey, token);
    const recipient = sendId ? await unsubscribeRecipient(ctx.sql, sendId) : undefined;
    return page(reply, recipient ? unsubscribeForm(token, recipient) : brokenUnsubscribeLink());
  });

  // RFC 8058 one-click: no login and no CSRF token (a mail client posts it); the signed token is the authority.
  app.post(`${TRACKING_PATHS.unsubscribe}:token`, options, async (request, reply) => {
    const sendId = readUnsubscribeToken(ctx.linkKey, tokenOf(request));
    if (!sendId) return page(reply, brokenUnsubscribeLink());
    const body = request.body;
    const method = body instanceof URLSearchParams && body.get('via') === 'page' ? 'page' : 'one_click';
    const { userAgent, ip } = client(request);
    const result = await applyUnsubscribe(ctx.sql, { sendId, method, at: ctx.clock.now(), detail: { user_agent: userAgent.slice(0, 512), ip } });
    if (result.outcome === 'unknown_send') return page(reply, brokenUnsubscribeLink());
    return page(reply, unsubscribedPage(result.send.to_email, result.outcome === 'already'));
  });
};
