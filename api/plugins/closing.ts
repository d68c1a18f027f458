// Graceful shutdown for requests already on an open connection: answered 503 in the error envelope (Fastify's own
// 503 while closing is a body of its own), with Connection: close so the client's next request opens a connection
// to another instance, and Retry-After so a client without another instance waits briefly.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { AppError } from '../../shared/kernel/errors.js';

const plugin: FastifyPluginAsync = async (app) => {
  let closing = false;
  // preClose runs once app.close() has begun, before the listener stops and in-flight requests are awaited.
  app.addHook('preClose', async () => {
    closing = true;
  });
  // A callback hook, not an async one: it runs on every request, and the common case is one flag check.
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done();
    reply.header('connection', 'close');
    done(
      new AppError('service_unavailable', 'the server is shutting down: send the request again (another instance answers it)', {
        headers: { 'retry-after': '1' },
      }),
    );
  });
};

export const closingPlugin = fp(plugin, { name: 'closing' });
