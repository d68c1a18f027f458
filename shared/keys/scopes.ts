// The scope catalogue of the spec: what an API key may be limited to.

export const SCOPES = [
  'campaigns:read',
  'campaigns:write',
  'contacts:read',
  'contacts:write',
  'lists:read',
  'lists:write',
  'templates:read',
  'templates:write',
  'domains:read',
  'domains:write',
  'suppressions:read',
  'suppressions:write',
  'events:read',
  'reputation:read',
  'transactional:send',
  'audit:export',
] as const;

export type Scope = (typeof SCOPES)[number];

const known = new Set<string>(SCOPES);

export function isScope(value: string): value is Scope {
  return known.has(value);
}

/** An empty scope list grants every scope. */
export function grants(scopes: readonly string[], needed: Scope): boolean {
  return scopes.length === 0 || scopes.includes(needed);
}
