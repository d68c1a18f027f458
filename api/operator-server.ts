// The operator port (MAILPATH_METRICS_PORT on MAILPATH_METRICS_HOST, loopback by default): GET /metrics in Prometheus's text format, nothing else.
import { createServer, type Server } from 'node:http';
import type { Logger } from '../shared/kernel/log.js';
import type { Metrics } from '../shared/operations/metrics/metrics.js';
import { listenFailure } from '../shared/kernel/operational-errors.js';

export interface RunningOperatorServer {
  port: number;
  stop(): Promise<void>;
}

/**
 * Plain HTTP with no credential: it is meant for a Prometheus on the same host or private network, which
 * is why it listens on loopback unless the operator names another address. Every process serves its own
 * counts (a scrape per process), since counters live in the process that records them.
 */
export function createOperatorServer(metrics: Metrics, log: Logger): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: this port serves GET /metrics\n');
      return;
    }
    metrics.exposition().then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => {
        log.warn({ err }, 'metrics scrape failed');
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics unavailable\n');
      },
    );
  });
}

export async function startOperatorServer(metrics: Metrics, log: Logger, at: { port: number; host: string }): Promise<RunningOperatorServer> {
  const server = createOperatorServer(metrics, log);
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', (err) => reject(listenFailure('MAILPATH_METRICS_PORT', at.port, at.host, err)));
    server.listen(at.port, at.host, () => resolve((server.address() as { port: number }).port));
  });
  log.info({ metricsPort: port, host: at.host }, 'operator port listening (GET /metrics)');
  return {
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
