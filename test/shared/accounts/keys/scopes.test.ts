// The scope catalogue, the "empty = all" rule and scope-list normalization for create and update.
import t from 'tap';
import { describeScopeRule, grants, isScope, scopeRefusal, SCOPES } from '../../../../shared/accounts/keys/scopes.js';
import { normalizeScopes } from '../../../../shared/accounts/keys/service.js';
import { AppError } from '../../../../shared/kernel/errors.js';

t.test('the catalogue holds every scope the spec names', async (t) => {
  const expected = [
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
    'suppressions:write',
    'events:read',
    'reputation:read',
    // Named by the spec's scope reference in addition to the create/update list.
    'transactional:send',
    'suppressions:read',
    'audit:export',
  ];
  t.same([...SCOPES].sort(), expected.sort());
  for (const s of expected) t.ok(isScope(s), `${s} is a scope`);
  for (const s of ['', 'contacts', 'contacts:delete', 'CONTACTS:READ', 'admin', '*']) t.notOk(isScope(s), `${JSON.stringify(s)} is not`);
});

t.test('an empty scope list grants everything; otherwise only the listed scopes', async (t) => {
  for (const s of SCOPES) t.ok(grants([], s), `[] grants ${s}`);
  t.ok(grants(['contacts:read'], 'contacts:read'));
  t.notOk(grants(['contacts:read'], 'contacts:write'));
  t.notOk(grants(['contacts:read'], 'domains:read'));
  t.ok(grants(['contacts:read', 'domains:read'], 'domains:read'));
});

t.test('normalizeScopes dedupes and sorts, treats omitted as all, and rejects unknown scopes with 400', async (t) => {
  t.same(normalizeScopes(undefined), []);
  t.same(normalizeScopes([]), []);
  t.same(normalizeScopes(['lists:write', 'contacts:read', 'lists:write']), ['contacts:read', 'lists:write']);
  try {
    normalizeScopes(['contacts:read', 'contacts:delete', 'nope']);
    t.fail('should throw');
  } catch (err) {
    t.ok(err instanceof AppError);
    t.equal((err as AppError).slug, 'bad_request');
    t.equal((err as AppError).status, 400);
    t.match((err as AppError).message, /contacts:delete, nope/, 'names the unknown scopes');
    t.match((err as AppError).message, /; the scopes are campaigns:read, campaigns:write, .*, audit:export$/, 'lists the valid scopes');
  }
});

t.test('scope rules: one scope, several, unrestricted and any key', async (t) => {
  t.equal(scopeRefusal([], 'audit:export'), undefined, 'an unrestricted key passes every rule');
  t.equal(scopeRefusal([], 'unrestricted'), undefined);
  t.equal(scopeRefusal(['audit:export'], 'audit:export'), undefined);
  t.equal(scopeRefusal(['transactional:send'], 'audit:export'), 'this API key lacks the audit:export scope');
  t.equal(scopeRefusal(['campaigns:read', 'audit:export'], ['campaigns:read', 'audit:export']), undefined);
  t.equal(
    scopeRefusal(['campaigns:read'], ['campaigns:read', 'audit:export']),
    'this API key lacks the audit:export scope (it needs campaigns:read and audit:export)',
  );
  t.match(scopeRefusal(['events:read'], ['campaigns:read', 'audit:export']), 'lacks the campaigns:read and audit:export scopes');
  t.match(scopeRefusal(['campaigns:read', 'audit:export'], 'unrestricted'), 'needs a user session or an API key without scope restrictions');
  t.equal(scopeRefusal(['transactional:send'], 'any_key'), undefined);
  t.equal(describeScopeRule('audit:export'), 'Required scope for API keys: `audit:export`.');
  t.equal(describeScopeRule(['campaigns:read', 'audit:export']), 'Required scopes for API keys: `campaigns:read` and `audit:export`.');
  t.match(describeScopeRule('unrestricted'), 'only a key without scope restrictions');
});
