// The api role: HTTPS API on MAILPATH_HTTPS_PORT, and an HTTP listener answering every request with 301 to HTTPS.
import { createServer, type Server } from 'node:http';
import { listenFailure, type PortVariable } from '../shared/operational-errors.js';
import { loadTls } from '../shared/tls.js';
import { buildApp } from './app.js';
import type { ApiContext } from './context.js';

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

/** The redirect keeps path and query; the target origin is MAILPATH_PUBLIC_URL's. */
export function createRedirectServer(publicUrl: URL): Server {
  return createServer((req, res) => {
    res.writeHead(301, { Location: redirectTarget(publicUrl, req.url), 'Content-Length': '0', Connection: 'close' });
    res.end();
  });
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
  const redirect = createRedirectServer(config.publicUrl);
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
