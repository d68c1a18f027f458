// Super-admin compliance: audit chain verification, the daily SOC 2 evidence packs (list, today, by date, run-now) and a tenant's SOC 2 controls.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { chainAndVerify } from '../../shared/operations/audit/appender.js';
import { writeAudit } from '../../shared/operations/audit/log.js';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { isCalendarDate } from '../../shared/kernel/calendar-date.js';
import { evidencePackDates, evidencePackOf, utcDate, type EvidencePack } from '../../shared/operations/compliance/evidence.js';
import { CONTROL_NAMES, tenantControls } from '../../shared/operations/compliance/tenant-controls.js';
import { AppError, notFound } from '../../shared/kernel/errors.js';
import { requireTenant } from '../../shared/accounts/tenants/require.js';
import { runWorker, SOC2_EVIDENCE_FORCED } from '../../shared/operations/workers/catalog.js';
import { defineRoute } from '../route.js';

const TAGS = ['Super-admin: compliance'];
const section = z.record(z.string(), z.unknown()).nullable();

const pack = z.object({
  date: z.string().describe('UTC day, YYYY-MM-DD'),
  generated_at: z.string(),
  errors: z.array(z.object({ section: z.string(), message: z.string() })).describe('Sections that could not be gathered (null in the pack)'),
  access_reviews: section.describe('Users by role, super-admins, owners/admins without 2FA, active API keys, team and key changes in the last 24 h'),
  change_management: section.describe('Configuration changes in the last 24 h by audit event name'),
  incident_response: section.describe('Worker alerts, IP quarantines, suspensions and deletions in the last 24 h'),
  suppression_discipline: section.describe('Suppression totals and changes, erasures in the last 24 h'),
  auth_events: section.describe('Sign-in security events in the last 24 h and accounts locked now'),
});

const control = z.object({
  status: z.enum(['green', 'yellow', 'red']),
  value: z.union([z.number(), z.boolean()]).optional().describe('Absent when Mailpath has no data for the control (never made up)'),
  note: z.string(),
});

/** Packs are only served while the worker is enabled: with SOC2_EVIDENCE_ENABLED unset, the evidence surface is empty. */
export const adminComplianceRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  const enabled = () => ctx.config.flags.soc2EvidenceEnabled;
  const packView = (p: EvidencePack): z.input<typeof pack> => p;

  defineRoute(app, {
    method: 'GET',
    url: '/admin/audit/verify',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Verify the audit hash chain',
    description:
      'Chains the committed audit rows not chained yet, then walks the whole chain (chain_seq 1, 2, …) and reports whether it is intact, how many ' +
      "rows verify, and the first broken link: the row, its position and what is wrong (a gap, a prev_hash that is not its predecessor's hash, or " +
      'a hash that does not match its content).',
    response: z.object({
      intact: z.boolean(),
      rows: z.number().int().describe('Rows verified before the first broken link (all, when intact)'),
      broken_at: z.string().nullable().describe('Id of the first row whose link does not hold'),
      broken_seq: z.string().nullable().describe('Its chain position'),
      reason: z.string().nullable(),
    }),
    handler: async () => {
      const r = await chainAndVerify(ctx.sql);
      return { intact: r.intact, rows: r.rows, broken_at: r.brokenAt, broken_seq: r.brokenSeq ?? null, reason: r.reason ?? null };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/compliance/soc2/dates',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'SOC 2 evidence pack dates',
    description: 'The UTC days with an evidence pack, newest first; empty when the worker has never run or SOC2_EVIDENCE_ENABLED is unset.',
    response: z.object({ dates: z.array(z.string()) }),
    handler: async () => ({ dates: enabled() ? await evidencePackDates(ctx.sql) : [] }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/compliance/soc2/run-now',
    auth: 'super_admin',
    tags: TAGS,
    summary: "Write today's SOC 2 evidence pack now",
    description:
      "Runs the evidence worker at once, past its 02:00 UTC hour gate and its once-a-day gate, overwriting today's pack; the tick is recorded for " +
      '/admin/workers and audited (compliance.soc2_run_now). ' +
      '503 worker_unavailable when SOC2_EVIDENCE_ENABLED is unset (the worker is not wired); 502 worker_failed when the run fails.',
    errors: [502, 503],
    response: z.object({ artifact: pack, elapsed_ms: z.number().int(), triggered: z.boolean() }),
    handler: async ({ principal, ip }) => {
      if (!enabled()) throw new AppError('worker_unavailable', 'the SOC 2 evidence worker is not wired: set SOC2_EVIDENCE_ENABLED');
      const run = await runWorker(ctx, SOC2_EVIDENCE_FORCED);
      await writeAudit(ctx.sql, {
        tenantId: null,
        actor: actorOf(principal, ip),
        action: 'compliance.soc2_run_now',
        resourceType: 'soc2_evidence',
        resourceId: utcDate(ctx.clock.now()),
        metadata: { outcome: run.outcome, elapsed_ms: run.elapsed_ms, error: run.error },
        at: ctx.clock.now(),
      });
      if (run.outcome !== 'ok') throw new AppError('worker_failed', `the SOC 2 evidence worker failed: ${run.error ?? run.outcome}`);
      return { artifact: packView(run.result!['artifact'] as EvidencePack), elapsed_ms: run.elapsed_ms, triggered: run.triggered };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/compliance/soc2/today',
    auth: 'super_admin',
    tags: TAGS,
    summary: "Today's SOC 2 evidence pack",
    description: 'The pack of the current UTC day; 404 when it is not written yet (or SOC2_EVIDENCE_ENABLED is unset).',
    errors: [404],
    response: pack,
    handler: async () => {
      const stored = enabled() ? await evidencePackOf(ctx.sql, utcDate(ctx.clock.now())) : undefined;
      if (!stored) throw notFound('evidence pack for today');
      return packView(stored);
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/compliance/soc2/:date',
    auth: 'super_admin',
    tags: TAGS,
    summary: "A day's SOC 2 evidence pack",
    description: 'The pack of a UTC day (YYYY-MM-DD). 400 bad_request for a malformed date; 404 when that day has no pack.',
    // Checked in the handler, not by a params schema: the spec makes a malformed date segment 400 bad_request, not 422.
    params: z.object({ date: z.string().max(64).describe('UTC day, YYYY-MM-DD') }),
    errors: [400, 404],
    response: pack,
    handler: async ({ params }) => {
      if (!isCalendarDate(params.date)) throw new AppError('bad_request', 'date must be a UTC calendar day, YYYY-MM-DD');
      const stored = enabled() ? await evidencePackOf(ctx.sql, params.date) : undefined;
      if (!stored) throw notFound(`evidence pack for ${params.date}`);
      return packView(stored);
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/tenants/:id/soc2-evidence',
    auth: 'super_admin',
    tags: TAGS,
    summary: "A tenant's SOC 2 controls",
    description:
      `The tenant's controls as of now (${CONTROL_NAMES.join(', ')}), each green, yellow or red with a note. A control Mailpath holds no data for ` +
      `is yellow and carries no value. ` +
      "audit_log_hash_chain_intact verifies the platform's whole audit chain (it holds every tenant's rows). 404 for an unknown tenant.",
    params: z.object({ id: z.string().max(64) }),
    errors: [404],
    response: z.object({
      tenant_id: z.string(),
      as_of: z.string(),
      controls: z.object(Object.fromEntries(CONTROL_NAMES.map((n) => [n, control])) as Record<(typeof CONTROL_NAMES)[number], typeof control>),
    }),
    handler: async ({ params }) => {
      await requireTenant(ctx.sql, params.id);
      const asOf = ctx.clock.now();
      return { tenant_id: params.id, as_of: asOf.toISOString(), controls: await tenantControls(ctx, params.id) };
    },
  });
};
