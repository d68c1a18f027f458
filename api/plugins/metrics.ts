// Records every answered API request's time into the process's metrics, labelled by the route template (never the raw URL, whose ids would explode the label
// set).
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { CONTEXT_PLUGIN } from './context.js';
import { routeOf } from '../request-route.js';

/** The label of requests no route matched (404s for unknown paths, scanners): one series, whatever the URL. */
export const UNMATCHED_ROUTE = 'unmatched';

const apiMetrics: FastifyPluginAsyncZod = async (app) => {
  const histogram = app.ctx.metrics?.apiLatency;
  if (!histogram) return;
  // A callback hook, not an async one: no promise per request for a synchronous observation.
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    histogram.observe(request.method, routeOf(request).url ?? UNMATCHED_ROUTE, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
};

/** Not encapsulated (fastify-plugin): the hook is the root's, so every route group and unknown path is measured. */
export const metricsPlugin = fp(apiMetrics, { name: 'mailpath-api-metrics', dependencies: [CONTEXT_PLUGIN] });
