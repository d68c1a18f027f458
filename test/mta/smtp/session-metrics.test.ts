// SMTP sessions are counted per listener at the socket: opened (a counter) and open now (a gauge that falls when the client leaves).
import { connect } from 'node:net';
import { SMTPServer } from 'smtp-server';
import t from 'tap';
import { countSessions } from '../../../mta/smtp/session-metrics.js';
import { Metrics } from '../../../shared/operations/metrics/metrics.js';

async function value(metrics: Metrics, name: string, server: string): Promise<number> {
  const m = await metrics.registry.getSingleMetric(name)!.get();
  return m.values.find((v) => v.labels['server'] === server)?.value ?? 0;
}

t.test('each connection counts once, and leaves the open gauge when it closes', async (t) => {
  const metrics = new Metrics({ processMetrics: false });
  const server = new SMTPServer({ authOptional: true, logger: false, disableReverseLookup: true });
  countSessions(server, metrics, 'submission');
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.server.address() as { port: number }).port)));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const sockets = await Promise.all(
    [1, 2].map(
      () =>
        new Promise<ReturnType<typeof connect>>((resolve) => {
          const socket = connect(port, '127.0.0.1');
          // Connected once the greeting arrives.
          socket.once('data', () => resolve(socket));
        }),
    ),
  );
  t.equal(await value(metrics, 'mailpath_smtp_sessions_total', 'submission'), 2);
  t.equal(await value(metrics, 'mailpath_smtp_sessions_open', 'submission'), 2);
  t.equal(await value(metrics, 'mailpath_smtp_sessions_total', 'mx'), 0, 'the other listener is its own series');
  for (const s of sockets) s.end('QUIT\r\n');
  let open = 2;
  for (let i = 0; i < 100 && open > 0; i++) {
    await new Promise((r) => setTimeout(r, 20));
    open = await value(metrics, 'mailpath_smtp_sessions_open', 'submission');
  }
  t.equal(open, 0, 'both left');
  t.equal(await value(metrics, 'mailpath_smtp_sessions_total', 'submission'), 2, 'the total stays');
});
