// First start: creates the super-admin tenant and its user from MAILPATH_ADMIN_EMAIL / MAILPATH_ADMIN_PASSWORD, and shows a generated password once.
import { randomBytes } from 'node:crypto';
import type { Config } from '../../config/index.js';
import type { Clock } from '../../kernel/clock.js';
import type { Sql } from '../../db/connection.js';
import type { Logger } from '../../kernel/log.js';
import { writeAudit } from '../../operations/audit/log.js';
import { findSuperAdminTenant, insertTenant } from '../tenants/queries.js';
import { hashPassword } from './passwords.js';
import { insertUser } from './users.js';

/** Arbitrary constant naming the bootstrap lock, so two processes starting together create one admin. */
const BOOTSTRAP_LOCK_KEY = 74_615_013;

export interface BootstrapResult {
  created: boolean;
  email: string;
  /** Only when it was generated here: shown once, never stored in plaintext. */
  generatedPassword?: string;
}

/**
 * Creates the super-admin when there is none. A generated password is only returned: the caller
 * shows it (showGeneratedPassword) once start-up has succeeded, which is why start-up creates the
 * super-admin last, when a failure can no longer lose the password.
 */
export async function ensureSuperAdmin(deps: { sql: Sql; config: Config; clock: Clock; log: Logger }): Promise<BootstrapResult> {
  const { config } = deps;
  const result = await deps.sql.begin(async (tx): Promise<BootstrapResult> => {
    await tx`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK_KEY})`;
    if (await findSuperAdminTenant(tx)) return { created: false, email: config.admin.email };
    const generatedPassword = config.admin.password ? undefined : randomBytes(18).toString('base64url');
    const password = config.admin.password ?? generatedPassword!;
    const tenant = await insertTenant(tx, { name: 'Mailpath Platform', slug: 'mailpath-platform', planId: 'platform', isSuperAdmin: true });
    const user = await insertUser(tx, {
      tenantId: tenant.id,
      email: config.admin.email,
      passwordHash: await hashPassword(password, config.auth.bcrypt_cost),
      role: 'owner',
      isSuperAdmin: true,
    });
    await writeAudit(tx, {
      tenantId: tenant.id,
      actor: { type: 'system', id: null },
      action: 'super_admin.bootstrapped',
      resourceType: 'user',
      resourceId: user.id,
      metadata: { email: config.admin.email, password_generated: generatedPassword !== undefined },
      at: deps.clock.now(),
    });
    return { created: true, email: config.admin.email, ...(generatedPassword ? { generatedPassword } : {}) };
  });
  if (result.created) deps.log.info({ email: result.email }, 'super-admin tenant and user created');
  return result;
}

/** Shows a generated password, once, on stderr: not in the JSON log, so it is seen and not shipped to log storage. */
export function showGeneratedPassword(result: BootstrapResult, out: NodeJS.WritableStream = process.stderr): void {
  if (!result.generatedPassword) return;
  out.write(`\nMailpath super-admin created: ${result.email}\nGenerated password (shown once, change it after signing in): ${result.generatedPassword}\n\n`);
}
