// Registration (a new tenant with its owner) and the session tokens users sign in with (password sign-in: sign-in.ts).
import type { Config } from '../../config/index.js';
import type { Clock } from '../../kernel/clock.js';
import type { Sql } from '../../db/connection.js';
import { AppError, isUniqueViolation, validationError } from '../../kernel/errors.js';
import { insertTenant } from '../tenants/queries.js';
import { writeAudit } from '../../operations/audit/log.js';
import type { SessionTokens } from './jwt.js';
import { acceptNewPassword, passwordContext } from './passwords.js';
import { insertUser } from './users.js';

export interface Session {
  token: string;
  user_id: string;
  tenant_id: string;
  /** Seconds since the epoch. */
  expires_at: number;
}

interface Deps {
  sql: Sql;
  config: Config;
  clock: Clock;
  tokens: SessionTokens;
}

/** Slugs that would read as Mailpath's own and confuse users or support. */
const RESERVED_SLUGS = new Set(['admin', 'api', 'app', 'www', 'mail', 'mailpath', 'support', 'help', 'status', 'root', 'system']);

export function slugProblem(slug: string): string | undefined {
  if (!/^[a-z0-9](?:[a-z0-9-]{1,38})[a-z0-9]$/.test(slug)) {
    return 'must be 3-40 characters of lowercase letters, digits and inner hyphens';
  }
  if (slug.includes('--')) return 'must not contain consecutive hyphens';
  if (RESERVED_SLUGS.has(slug)) return 'is reserved';
  return undefined;
}

export async function issueSession(deps: Deps, userId: string, tenantId: string): Promise<Session> {
  const { token, expiresAt } = await deps.tokens.issue({
    userId,
    tenantId,
    ttlSeconds: deps.config.auth.session_ttl_seconds,
    now: deps.clock.now(),
  });
  return { token, user_id: userId, tenant_id: tenantId, expires_at: expiresAt };
}

export async function register(
  deps: Deps,
  input: { tenant_name: string; tenant_slug: string; email: string; password: string; first_name?: string | undefined },
  ip: string | null,
): Promise<Session> {
  const slugIssue = slugProblem(input.tenant_slug);
  if (slugIssue) throw validationError('tenant_slug', slugIssue);
  const passwordHash = await acceptNewPassword(input.password, deps.config.auth, 'password', passwordContext(input.email, input.tenant_slug));
  const email = input.email.toLowerCase();
  try {
    const user = await deps.sql.begin(async (tx) => {
      const tenant = await insertTenant(tx, { name: input.tenant_name, slug: input.tenant_slug, planId: deps.config.auth.registration_plan });
      const created = await insertUser(tx, { tenantId: tenant.id, email, passwordHash, role: 'owner', firstName: input.first_name ?? null });
      await writeAudit(tx, {
        tenantId: tenant.id,
        actor: { type: 'user', id: created.id, ip },
        action: 'tenant.registered',
        resourceType: 'tenant',
        resourceId: tenant.id,
        metadata: { slug: tenant.slug, email },
        at: deps.clock.now(),
      });
      return created;
    });
    return issueSession(deps, user.id, user.tenant_id);
  } catch (err) {
    if (isUniqueViolation(err, 'tenants_slug_key')) throw new AppError('conflict', 'tenant_slug is already taken');
    if (isUniqueViolation(err, 'users_email_key')) throw new AppError('conflict', 'email is already registered');
    throw err;
  }
}
