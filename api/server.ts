// The api role: HTTPS API on MAILPATH_HTTPS_PORT, and an HTTP listener answering every request with 301 to HTTPS.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { listenFailure, type PortVariable } from '../shared/kernel/operational-errors.js';
import { loadTls } from '../shared/kernel/tls.js';
import { buildApp } from './app.js';
import type { ApiContext } from './context.js';
import { clientErrorHandler, listenerOptions } from './listener.js';
import { addressRateHeaders } from './plugins/rate-limit.js';

export interface RunningApi {
  httpsPort: number;
  httpPort: number;
  stop(): Promise<void>;
}

/**
 * Where a plain-HTTP request is sent: MAILPATH_PUBLIC_URL's origin with the request's path and query.
 * The origin never comes from the request: `//evil.example/x` or an absolute-form target
 * (`GET http://evil.example/ HTTP/1.1`) keep only their path, so the redirect cannot point elsewhere.
 */
export function redirectTarget(publicUrl: URL, requestTarget: string | undefined): string {
  let path = requestTarget ?? '/';
  if (!path.startsWith('/')) {
    try {
      const absolute = new URL(path);
      path = absolute.pathname + absolute.search;
    } catch {
      path = '/';
    }
  }
  return publicUrl.origin + path;
}

/**
 * The redirect keeps path and query; the target origin is MAILPATH_PUBLIC_URL's. It has the HTTPS listener's
 * timeouts and client-error answers, and each redirect counts against the client address's public bucket,
 * whose X-RateLimit-* headers it carries (it is never refused: a redirect does no work worth protecting).
 */
export function createRedirectServer(ctx: ApiContext): Server {
  const publicUrl = ctx.config.publicUrl;
  const redirecting = new WeakMap<Socket, ServerResponse>();
  const server = createServer(listenerOptions(ctx.config.limits.request), (req, res) => {
    redirecting.set(req.socket, res);
    void addressRateHeaders(ctx, req.socket.remoteAddress).then((rateHeaders) => {
      res.writeHead(301, { Location: redirectTarget(publicUrl, req.url), 'Content-Length': '0', Connection: 'close', ...rateHeaders });
      res.end();
    });
  });
  const answerClientError = clientErrorHandler(ctx);
  server.on('clientError', (err: Error & { code?: string }, socket: Socket) => {
    // The head was fine and its redirect is on the way (it never waits for a body, so a bad one after the head
    // changes nothing): the 301 goes out, then the connection closes.
    const res = redirecting.get(socket);
    if (res && !res.writableFinished) return;
    answerClientError(err, socket);
  });
  return server;
}

function listen(server: Server, port: number, host: string, variable: PortVariable): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(listenFailure(variable, port, host, err));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

export async function startApi(ctx: ApiContext): Promise<RunningApi> {
  const { config, log } = ctx;
  const tls = await loadTls(config);
  if (tls.selfSigned) log.warn('serving HTTPS with a self-signed certificate; set MAILPATH_TLS_CERT and MAILPATH_TLS_KEY for production');
  const app = await buildApp(ctx, { https: { key: tls.key, cert: tls.cert } });
  try {
    await app.listen({ port: config.httpsPort, host: config.bindHost });
  } catch (err) {
    await app.close();
    throw listenFailure('MAILPATH_HTTPS_PORT', config.httpsPort, config.bindHost, err);
  }
  const httpsPort = (app.server.address() as { port: number }).port;
  const redirect = createRedirectServer(ctx);
  let httpPort: number;
  try {
    httpPort = await listen(redirect, config.httpPort, config.bindHost, 'MAILPATH_HTTP_PORT');
  } catch (err) {
    await app.close();
    throw err;
  }
  log.info({ httpsPort, httpPort, publicUrl: config.publicUrl.toString() }, 'api listening');
  return {
    httpsPort,
    httpPort,
    async stop() {
      redirect.close();
      redirect.closeAllConnections();
      await app.close();
    },
  };
}
