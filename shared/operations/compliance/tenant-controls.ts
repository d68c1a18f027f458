// A tenant's SOC 2 controls as of now: each green, yellow or red with a note; a control Mailpath has no data for is yellow and carries no value.
import type { Clock } from '../../kernel/clock.js';
import type { Sql } from '../../db/connection.js';
import { chainAndVerify } from '../audit/appender.js';
import { tenantFailedSignIns, tenantMfaCoverage } from './queries.js';

export type ControlStatus = 'green' | 'yellow' | 'red';
export interface Control {
  status: ControlStatus;
  value?: number | boolean;
  note: string;
}

export const CONTROL_NAMES = [
  'encryption_at_rest',
  'tls_only_ingress',
  'backup_success_last_24h',
  'last_restore_drill',
  'admin_mfa_coverage_pct',
  'audit_log_hash_chain_intact',
  'suspicious_activity_last_24h',
] as const;
export type ControlName = (typeof CONTROL_NAMES)[number];

const DAY = 86_400_000;
/** Failed sign-ins in 24 hours on a tenant's accounts from which the control turns red. */
export const SUSPICIOUS_RED_AT = 10;

const noData = (note: string): Control => ({ status: 'yellow', note });

/** The controls of one tenant; the audit chain is the platform's one chain (it covers every tenant's rows). */
export async function tenantControls(deps: { sql: Sql; clock: Clock }, tenantId: string): Promise<Record<ControlName, Control>> {
  const now = deps.clock.now();
  const mfa = await tenantMfaCoverage(deps.sql, tenantId);
  const chain = await chainAndVerify(deps.sql);
  const signIns = await tenantFailedSignIns(deps.sql, tenantId, new Date(now.getTime() - DAY), now);
  const pct = mfa.privileged === 0 ? undefined : Math.round((mfa.with_2fa / mfa.privileged) * 1000) / 10;
  return {
    encryption_at_rest: noData(
      'Mailpath seals DKIM private keys and TOTP secrets with its master key, but cannot observe whether the database storage itself is encrypted: ' +
        'no evidence recorded.',
    ),
    tls_only_ingress: noData('Mailpath records no evidence of the ingress path (load balancer, MX STARTTLS policy); no value is reported.'),
    backup_success_last_24h: noData("Mailpath records no backup runs (backups are the database operator's): no evidence."),
    last_restore_drill: noData('Mailpath records no restore drills: no evidence.'),
    admin_mfa_coverage_pct:
      pct === undefined
        ? noData('The tenant has no owner or admin users.')
        : {
            status: pct === 100 ? 'green' : pct >= 50 ? 'yellow' : 'red',
            value: pct,
            note: `${mfa.with_2fa} of ${mfa.privileged} owners and admins have two-factor sign-in enabled.`,
          },
    audit_log_hash_chain_intact: chain.intact
      ? { status: 'green', value: true, note: `All ${chain.rows} chained audit rows verify.` }
      : {
          status: 'red',
          value: false,
          note: `The chain breaks at audit row ${chain.brokenAt} (position ${chain.brokenSeq}): ${chain.reason}; ${chain.rows} rows verify before it.`,
        },
    suspicious_activity_last_24h: {
      status: signIns.failures === 0 ? 'green' : signIns.failures < SUSPICIOUS_RED_AT && signIns.locked === 0 ? 'yellow' : 'red',
      value: signIns.failures,
      note: `${signIns.failures} failed sign-ins on the tenant's accounts in the last 24 hours; ${signIns.locked} accounts locked now.`,
    },
  };
}
