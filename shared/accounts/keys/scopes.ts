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

/**
 * What a route asks of an API key, declared once with the route and checked before its input is read:
 * - a scope, or several (every one needed: e.g. an engagement export needs campaigns:read and audit:export);
 * - 'unrestricted': only a key without scope restrictions, for areas the catalogue has no scope for (mailboxes,
 *   webhook settings): a key cut down to named areas was cut down on purpose;
 * - 'any_key': every key, whatever its scopes (/whoami, which describes the key itself).
 */
export type ScopeRule = Scope | readonly Scope[] | 'unrestricted' | 'any_key';

/** Why a key with these scopes may not call a route of this rule, or undefined when it may. */
export function scopeRefusal(scopes: readonly string[], rule: ScopeRule): string | undefined {
  if (rule === 'any_key' || scopes.length === 0) return undefined;
  if (rule === 'unrestricted') return 'this route needs a user session or an API key without scope restrictions (no scope covers it)';
  const needed: readonly Scope[] = typeof rule === 'string' ? [rule] : rule;
  const missing = needed.filter((s) => !scopes.includes(s));
  if (missing.length === 0) return undefined;
  const also = needed.length > 1 ? ` (it needs ${needed.join(' and ')})` : '';
  return `this API key lacks the ${missing.join(' and ')} scope${missing.length > 1 ? 's' : ''}${also}`;
}

/** The rule as the API reference states it. */
export function describeScopeRule(rule: ScopeRule): string {
  if (rule === 'any_key') return 'API keys: any key, whatever its scopes.';
  if (rule === 'unrestricted') return 'API keys: only a key without scope restrictions (no scope covers this route); a scoped key gets 403 invalid_scope.';
  const needed: readonly Scope[] = typeof rule === 'string' ? [rule] : rule;
  return `Required scope${needed.length > 1 ? 's' : ''} for API keys: ${needed.map((s) => `\`${s}\``).join(' and ')}.`;
}
