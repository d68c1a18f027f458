// Serves the dashboard (web/, built by web/build.mjs) under /app: hashed assets cached for good, precompressed, and
// one page (index.html) for every other /app path, which the app routes itself. `/` and `/dashboard` lead there, and
// the links of e-mails sent before the account pages moved into the app still open them.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { projectRoot } from '../../shared/kernel/paths.js';

export const APP_PATH = '/app/';

/**
 * Scripts, styles, images and fetches from this origin only, no inline script or style (uPlot and Preact style
 * elements through the CSSOM, which the policy allows); data: images for the 2FA QR code the API answers with.
 */
export const APP_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
  "manifest-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const APP_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': APP_CONTENT_SECURITY_POLICY,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cross-origin-opener-policy': 'same-origin',
};

/**
 * Where the built app is: beside the compiled tree this module runs from (dist/web for `npm start` and the image,
 * .build/web for the tests), else dist/web of the project (the service run from source).
 */
export function webBundleDir(): string | undefined {
  const candidates = [join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'web'), join(projectRoot(), 'dist', 'web')];
  return candidates.find((dir) => existsSync(join(dir, 'index.html')) && existsSync(join(dir, 'assets')));
}

const NOT_BUILT =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Dashboard not built – Mailpath</title></head>' +
  '<body><main><h1>The dashboard is not built</h1><p>Run <code>npm run build</code> (or <code>npm start</code>, which builds it).</p></main></body></html>';

/** Pages once served on their own at `/<name>`, now dashboard pages at `/app/<name>`. */
const MOVED_PAGES = ['reset-password', 'accept-invite'] as const;

const queryOf = (url: string): string => {
  const at = url.indexOf('?');
  return at === -1 ? '' : url.slice(at);
};

/** Public routes on the `app` rate bucket: every page load fetches these before anyone signs in. */
const OPTIONS = { config: { auth: 'public' as const, rateLimit: 'app' as const }, schema: { hide: true } };

export const webAppPages: FastifyPluginAsync = async (app) => {
  const dir = webBundleDir();
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.headers(APP_HEADERS);
    return payload;
  });
  const toApp = (_request: unknown, reply: FastifyReply) => reply.redirect(APP_PATH, 302);
  app.get('/', OPTIONS, toApp);
  app.get('/dashboard', OPTIONS, toApp);
  app.get('/app', OPTIONS, toApp);
  for (const page of MOVED_PAGES) {
    // The query (the link's token) goes along; the app's referrer policy keeps it from leaving the origin.
    app.get(`/${page}`, OPTIONS, (request, reply) => reply.redirect(`${APP_PATH}${page}${queryOf(request.url)}`, 302));
  }

  if (!dir) {
    app.get('/app/*', OPTIONS, async (_request, reply) => reply.code(503).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(NOT_BUILT));
    return;
  }
  // @fastify/static takes no route config: its routes get the app bucket here, as they are added.
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/app/assets/')) route.config = { ...route.config, ...OPTIONS.config };
  });
  // Read once: the app's one page is small, and a deploy replaces the process along with the bundle.
  const page = readFileSync(join(dir, 'index.html'));
  await app.register(fastifyStatic, {
    root: join(dir, 'assets'),
    prefix: '/app/assets/',
    // Names carry a content hash (web/build.mjs): a file never changes under its name.
    maxAge: '365d',
    immutable: true,
    preCompressed: true,
    index: false,
    decorateReply: false,
    serveDotFiles: false,
  });
  app.get('/app/*', OPTIONS, async (request, reply) => {
    // An asset that is not there is a 404, never the page (a stale tab asking for an old chunk must not get HTML).
    if (request.url.startsWith('/app/assets/')) return reply.code(404).type('text/plain; charset=utf-8').send('not found');
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(page);
  });
};
