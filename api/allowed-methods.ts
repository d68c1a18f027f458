// Which methods a path is served with: a known path asked with another method answers 405 with Allow, not 404.

/** Fastify's `/a/:id/b`, `/a/:id(^\\d+)`, `/docs/*` → an anchored regex over the request path. */
function patternOf(url: string): RegExp {
  let source = '';
  for (let i = 0; i < url.length; ) {
    const param = /^:[A-Za-z0-9_]+(\((?:[^()\\]|\\.)*\))?/.exec(url.slice(i));
    if (param) {
      source += param[1] ? `(?:${param[1].slice(1, -1).replace(/^\^|\$$/g, '')})` : '[^/]+';
      i += param[0].length;
    } else if (url[i] === '*') {
      source += '.*';
      i += 1;
    } else {
      source += url[i]!.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
      i += 1;
    }
  }
  return new RegExp(`^${source}$`);
}

/** The routes' paths and methods, collected as they are registered (onRoute). */
export class AllowedMethods {
  private readonly byUrl = new Map<string, { pattern: RegExp; methods: Set<string> }>();

  add(url: string, methods: string | string[]): void {
    let entry = this.byUrl.get(url);
    if (!entry) this.byUrl.set(url, (entry = { pattern: patternOf(url), methods: new Set() }));
    for (const method of Array.isArray(methods) ? methods : [methods]) entry.methods.add(method.toUpperCase());
  }

  /** The methods some route serves `path` with, sorted; empty for a path no route knows. Only on the 404 path: a linear scan. */
  of(path: string): string[] {
    const methods = new Set<string>();
    for (const { pattern, methods: served } of this.byUrl.values()) if (pattern.test(path)) for (const m of served) methods.add(m);
    return [...methods].sort();
  }
}
