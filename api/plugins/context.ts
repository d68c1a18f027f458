// Decorates the root instance with the API's context (the services main/services.ts built once): plugins and route groups read app.ctx.
import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ApiContext } from '../context.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The one context object, by reference: a member swapped on it (as tests do) is seen by every route. */
    ctx: ApiContext;
  }
}

/** Plugin name, for the `dependencies` of the plugins that read app.ctx. */
export const CONTEXT_PLUGIN = 'mailpath-context';

const decorateContext: FastifyPluginAsyncZod<{ ctx: ApiContext }> = async (app, { ctx }) => {
  app.decorate('ctx', ctx);
};

/** Not encapsulated (fastify-plugin), so the decorator lands on the root and every route group inherits it. */
export const contextPlugin = fp(decorateContext, { name: CONTEXT_PLUGIN });
