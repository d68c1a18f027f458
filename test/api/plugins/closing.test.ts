// Graceful shutdown: a request that arrives on an open connection while the API closes gets the enveloped 503.
import { connect } from 'node:net';
import t from 'tap';
import { buildTestApp } from '../../helpers/app.js';

t.test('a request pipelined, after close() began, behind one in flight is answered 503 service_unavailable in the envelope', async (t) => {
  const { app } = await buildTestApp(t);
  let entered!: () => void;
  const inSlow = new Promise<void>((r) => (entered = r));
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  // A request held in flight until the test lets it go, so its connection is busy when the close begins.
  app.get('/test-slow', async () => {
    entered();
    await released;
    return { ok: true, data: 'slow done' };
  });
  // preClose hooks run in registration order: once this one runs, the API's own has marked it closing.
  let closingBegun!: () => void;
  const preClosed = new Promise<void>((r) => (closingBegun = r));
  app.addHook('preClose', async () => closingBegun());
  let refused!: () => void;
  const refusedOne = new Promise<void>((r) => (refused = r));
  // onSend: the answer is made (Node holds it back until the first request's answer is out).
  app.addHook('onSend', async (_request, reply) => {
    if (reply.statusCode === 503) refused();
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };

  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (received += chunk));
  const ended = new Promise<void>((r) => socket.once('close', () => r()));
  socket.write('GET /test-slow HTTP/1.1\r\nHost: x\r\n\r\n');
  await inSlow;
  const closed = app.close();
  await preClosed;
  // The connection is busy (not idle), so the close leaves it open: a request pipelined on it now meets the closing API.
  socket.write('GET /api/v1/whoami HTTP/1.1\r\nHost: x\r\n\r\n');
  await refusedOne;
  release();
  await ended;
  await closed;

  const responses = received.split(/(?=HTTP\/1\.1 )/);
  t.equal(responses.length, 2, 'both requests answered');
  t.match(responses[0], /^HTTP\/1\.1 200 /, 'the request in flight finishes');
  t.match(responses[0], /slow done/);
  const second = responses[1]!;
  t.match(second, /^HTTP\/1\.1 503 /);
  t.match(second, /\r\nconnection: close\r\n/i);
  t.match(second, /\r\nretry-after: 1\r\n/i);
  const body = JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
  t.same(body, { ok: false, error: 'service_unavailable', message: 'the server is shutting down: send the request again (another instance answers it)' });
});
