// The matched route's config and URL template of a request, read once per request and shared by the guard and the per-request hooks.
import type { FastifyContextConfig, FastifyRequest } from 'fastify';

export interface RequestRoute {
  config: FastifyContextConfig;
  /** The route template (/api/v1/domains/:id), or undefined when no route matched (the 404 handler). */
  url: string | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Memo of routeOf(); undefined until a hook asks. */
    matchedRoute: RequestRoute | undefined;
  }
}

/**
 * Fastify's request.routeOptions builds a fresh object of eleven fields (and asks the router about version
 * constraints) on every read, and the guard, key activity, impersonation and metrics hooks each read it: one
 * read per request instead, kept on the request. The config object itself is the route's own (one per route).
 */
export function routeOf(request: FastifyRequest): RequestRoute {
  let route = request.matchedRoute;
  if (route === undefined) {
    const options = request.routeOptions;
    route = { config: options.config, url: options.url };
    request.matchedRoute = route;
  }
  return route;
}
