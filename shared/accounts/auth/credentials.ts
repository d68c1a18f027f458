// Resolves a bearer credential (API key or session JWT) to a Principal, with a short per-process cache.
import type { Config } from '../../config/index.js';
import type { Clock } from '../../kernel/clock.js';
import type { Queryable } from '../../db/connection.js';
import { accountSuspended } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import { hashApiKey } from '../keys/secrets.js';
import type { KeyMode } from '../keys/secrets.js';
import type { Principal } from './principal.js';
import type { SessionTokens } from './jwt.js';
import type { UserRole } from './users.js';

interface CacheEntry<T> {
  value: T | undefined;
  fetchedAt: number;
}

type TenantCols = Principal['tenant'];

interface KeyRecord {
  key: NonNullable<Principal['key']>;
  tenant: TenantCols;
  revoked: boolean;
  /** The principal every request with this key gets while the record is cached: built once, frozen so no route can alter another request's. */
  principal: Principal;
}

interface UserRecord {
  user: NonNullable<Principal['user']>;
  tenant: TenantCols;
  /** Milliseconds since the epoch: sessions issued before it (a password change) are refused. */
  sessionsValidAfter: number;
  /** The jtis of the user's sessions signed out before they expire (revoked_sessions). */
  revokedSessions: ReadonlySet<string>;
}

const MAX_CACHE_ENTRIES = 20_000;

export class CredentialResolver {
  private readonly keys = new Map<string, CacheEntry<KeyRecord>>();
  private readonly users = new Map<string, CacheEntry<UserRecord>>();

  constructor(
    private readonly db: Queryable,
    private readonly tokens: SessionTokens,
    private readonly config: Config,
    private readonly clock: Clock,
  ) {}

  isApiKey(credential: string): boolean {
    return credential.startsWith(this.config.keyPrefixes.live) || credential.startsWith(this.config.keyPrefixes.test);
  }

  /** The principal for a credential, or undefined when it is unknown, revoked, expired or malformed. */
  async resolve(credential: string): Promise<Principal | undefined> {
    if (credential.length > 4096) return undefined;
    return this.isApiKey(credential) ? this.resolveKey(credential) : this.resolveSession(credential);
  }

  /**
   * The principal of an API key whose record is cached and fresh, without a promise (the guard's common case):
   * null when the cached record says unknown or revoked, undefined when resolve() must look it up.
   */
  cachedKey(secret: string): Principal | null | undefined {
    if (secret.length > 4096) return null;
    const entry = this.keys.get(hashApiKey(secret));
    if (!this.fresh(entry)) return undefined;
    const record = entry.value;
    return record && !record.revoked ? record.principal : null;
  }

  /** Forget cached state after a change made in this process (revocation, scope change, password change). */
  forgetKey(keyId: string): void {
    for (const [hash, entry] of this.keys) if (entry.value?.key.id === keyId) this.keys.delete(hash);
  }

  forgetUser(userId: string): void {
    this.users.delete(userId);
  }

  forgetTenant(tenantId: string): void {
    for (const [hash, entry] of this.keys) if (entry.value?.tenant.id === tenantId) this.keys.delete(hash);
    for (const [id, entry] of this.users) if (entry.value?.tenant.id === tenantId) this.users.delete(id);
  }

  private fresh<T>(entry: CacheEntry<T> | undefined): entry is CacheEntry<T> {
    return entry !== undefined && Date.now() - entry.fetchedAt < this.config.auth.credential_cache_ms;
  }

  private remember<T>(map: Map<string, CacheEntry<T>>, id: string, value: T | undefined): void {
    if (map.size >= MAX_CACHE_ENTRIES) map.clear();
    map.set(id, { value, fetchedAt: Date.now() });
  }

  private async resolveKey(secret: string): Promise<Principal | undefined> {
    const hash = hashApiKey(secret);
    let entry = this.keys.get(hash);
    if (!this.fresh(entry)) {
      const [row] = await this.db<
        (TenantRow & { key_id: string; key_name: string; prefix: string; mode: KeyMode; scopes: string[]; role_ceiling: UserRole; revoked_at: Date | null })[]
      >`
        select k.id as key_id, k.name as key_name, k.prefix, k.mode, k.scopes, k.role_ceiling, k.revoked_at,
               t.id, t.name, t.slug, t.plan_id, t.is_sandbox, t.is_super_admin, t.status
        from api_keys k join tenants t on t.id = k.tenant_id
        where k.key_hash = ${hash}`;
      const value: KeyRecord | undefined =
        row &&
        keyRecord(
          { id: row.key_id, name: row.key_name, prefix: row.prefix, mode: row.mode, scopes: row.scopes, role: row.role_ceiling },
          tenantOf(row),
          row.revoked_at !== null,
        );
      this.remember(this.keys, hash, value);
      entry = this.keys.get(hash)!;
    }
    const record = entry.value;
    if (!record || record.revoked) return undefined;
    return record.principal;
  }

  private async resolveSession(token: string): Promise<Principal | undefined> {
    const claims = await this.tokens.verify(token, this.clock.now());
    if (!claims || !isUuid(claims.userId) || !isUuid(claims.tenantId)) return undefined;
    let entry = this.users.get(claims.userId);
    if (!this.fresh(entry)) {
      const [row] = await this.db<
        (TenantRow & {
          user_id: string;
          email: string;
          role: UserRole;
          user_super: boolean;
          first_name: string | null;
          sessions_valid_after: Date;
          revoked: string[];
        })[]
      >`
        select u.id as user_id, u.email, u.role, u.is_super_admin as user_super, u.first_name, u.sessions_valid_after,
               array(select r.jti from revoked_sessions r where r.user_id = u.id and r.expires_at > now()) as revoked,
               t.id, t.name, t.slug, t.plan_id, t.is_sandbox, t.is_super_admin, t.status
        from users u join tenants t on t.id = u.tenant_id
        where u.id = ${claims.userId}`;
      const value: UserRecord | undefined = row && {
        user: { id: row.user_id, email: row.email, role: row.role, is_super_admin: row.user_super, first_name: row.first_name },
        tenant: tenantOf(row),
        sessionsValidAfter: row.sessions_valid_after.getTime(),
        revokedSessions: new Set(row.revoked),
      };
      this.remember(this.users, claims.userId, value);
      entry = this.users.get(claims.userId)!;
    }
    const record = entry.value;
    if (!record || claims.issuedAtMs < record.sessionsValidAfter) return undefined;
    if (claims.sessionId !== undefined && record.revokedSessions.has(claims.sessionId)) return undefined;
    if (claims.impersonatorUserId !== undefined) return this.impersonated(record, claims.tenantId);
    if (record.tenant.id !== claims.tenantId) return undefined;
    // A valid session of a suspended tenant gets a clear 403 rather than a vague 401.
    if (record.tenant.status === 'suspended') throw accountSuspended();
    return { kind: 'user', tenant: record.tenant, user: record.user, key: undefined, scopes: [] };
  }

  /**
   * An impersonation token: valid while its super-admin still is one and the tenant exists. It acts as the tenant's
   * owner, never as a super-admin (no /admin routes). A suspended tenant can still be looked at: only its own users
   * are locked out, and its sends stay refused by the gates.
   */
  private async impersonated(record: UserRecord, tenantId: string): Promise<Principal | undefined> {
    if (!record.user.is_super_admin) return undefined;
    const [tenant] = await this.db<TenantRow[]>`
      select id, name, slug, plan_id, is_sandbox, is_super_admin, status from tenants where id = ${tenantId}`;
    if (!tenant) return undefined;
    return {
      kind: 'user',
      tenant: tenantOf(tenant),
      user: { ...record.user, role: 'owner', is_super_admin: false },
      key: undefined,
      scopes: [],
      impersonation: { impersonatorUserId: record.user.id },
    };
  }
}

type TenantRow = TenantCols;

function keyRecord(key: NonNullable<Principal['key']>, tenant: TenantCols, revoked: boolean): KeyRecord {
  Object.freeze(key.scopes);
  Object.freeze(key);
  Object.freeze(tenant);
  const principal: Principal = Object.freeze({ kind: 'api_key', tenant, user: undefined, key, scopes: key.scopes });
  return { key, tenant, revoked, principal };
}

function tenantOf(row: TenantRow): TenantCols {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    plan_id: row.plan_id,
    is_sandbox: row.is_sandbox,
    is_super_admin: row.is_super_admin,
    status: row.status,
  };
}
