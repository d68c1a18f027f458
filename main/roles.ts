// The roles one mailpath process can run (MAILPATH_ROLES); each starts its listeners or workers from the process's services and returns how to stop them.
import { startApi } from '../api/server.js';
import { startMx } from '../mta/inbound/server.js';
import { startBounceIntake } from '../mta/outbound/bounces/worker.js';
import { startUnsubscribeIntake } from '../mta/outbound/unsubscribes/worker.js';
import { startOutbound } from '../mta/outbound/deliver/start.js';
import { startSubmission } from '../mta/submission/server.js';
import { startWebhookDelivery } from '../mta/webhook/start.js';
import { startFanoutWorker } from '../shared/campaigns/fanout-worker.js';
import { startEventWebhookDelivery } from '../shared/webhooks/events/worker.js';
import type { Role } from '../shared/config/index.js';
import { startImportWorker } from '../shared/audiences/imports/start.js';
import { startChatNotifier } from '../shared/operations/notify/chat.js';
import { startImpersonationAuditWorker } from '../shared/accounts/impersonation/audit-jobs.js';
import { startAuditAppender } from '../shared/operations/audit/appender.js';
import { scheduleWorkers } from '../shared/operations/workers/schedule.js';
import { PLUGINS } from '../plugins/index.js';
import type { Services } from './services.js';

export interface RunningRole {
  name: Role;
  /** Stop accepting new work and finish what is in flight. */
  stop(): Promise<void>;
  /** Facts worth printing at start-up (ports). */
  details: Record<string, unknown>;
}

type RoleStarter = (services: Services) => Promise<RunningRole>;

/** The same services with the role named in every log line. */
const withRole = (services: Services, role: Role): Services => ({ ...services, log: services.log.child({ role }) });

const STARTERS: Record<Role, RoleStarter> = {
  api: async (services) => {
    const api = await startApi(withRole(services, 'api'));
    return { name: 'api', stop: api.stop, details: { httpsPort: api.httpsPort, httpPort: api.httpPort } };
  },
  // The MX: mail for tenant domains, workspace mailboxes and our bounce addresses, stored before the 250.
  mx: async (services) => {
    const mx = await startMx(withRole(services, 'mx'), PLUGINS);
    return { name: 'mx', stop: mx.stop, details: { mxPort: mx.port } };
  },
  // SMTP submission: tenants' mail clients and apps, through the same send use-case as the API.
  submission: async (services) => {
    const submission = await startSubmission(withRole(services, 'submission'));
    return { name: 'submission', stop: submission.stop, details: { starttlsPort: submission.ports.starttls, implicitTlsPort: submission.ports.implicitTls } };
  },
  // Delivery workers: MX look-up or relay, connection reuse per destination, retries and bounce classification.
  outbound: async (services) => {
    const deps = withRole(services, 'outbound');
    const outbound = await startOutbound(deps);
    // Inbound mail POSTed to tenants' webhooks (signed, retried, dead-lettered) runs beside delivery.
    const webhooks = await startWebhookDelivery(deps).catch(async (err: unknown) => {
      await outbound.stop();
      throw err;
    });
    // Bounce mail the MX stored (DSNs, feedback-loop complaints), mapped back to its sends.
    const bounces = await startBounceIntake(deps).catch(async (err: unknown) => {
      await Promise.all([outbound.stop(), webhooks.stop()]);
      throw err;
    });
    // Bulk contact imports: long jobs that resume after a crash, beside the other queue workers.
    const imports = await startImportWorker(deps).catch(async (err: unknown) => {
      await Promise.all([outbound.stop(), webhooks.stop(), bounces.stop()]);
      throw err;
    });
    // Mail to List-Unsubscribe mailto addresses the MX stored, applied like the https link.
    const unsubscribes = await startUnsubscribeIntake(deps).catch(async (err: unknown) => {
      await Promise.all([outbound.stop(), webhooks.stop(), bounces.stop(), imports.stop()]);
      throw err;
    });
    // Campaign fan-out: recipients fixed at send time, claimed in batches, through the same send use-case.
    const campaigns = await startFanoutWorker(deps).catch(async (err: unknown) => {
      await Promise.all([outbound.stop(), webhooks.stop(), bounces.stop(), imports.stop(), unsubscribes.stop()]);
      throw err;
    });
    // Event webhooks: the outbox rows written with each event, POSTed signed, retried, dead-lettered.
    const eventWebhooks = startEventWebhookDelivery(deps);
    const stop = async () => {
      await Promise.all([outbound.stop(), webhooks.stop(), bounces.stop(), imports.stop(), unsubscribes.stop(), campaigns.stop(), eventWebhooks.stop()]);
    };
    return { name: 'outbound', stop, details: { relay: services.config.outboundRelay ?? null } };
  },
  // The scheduler supervises the queues (maintenance, expiry, cron schedules), runs the timed workers
  // and posts operator notifications to the chat webhook (shared/operations/notify/chat.ts).
  scheduler: async (services) => {
    const deps = withRole(services, 'scheduler');
    const stopWorkers = await scheduleWorkers(services.boss, deps);
    const chat = await startChatNotifier(deps).catch(async (err: unknown) => {
      await stopWorkers();
      throw err;
    });
    // Writes the audit rows of impersonated writes the API queued (shared/accounts/impersonation/audit-jobs.ts).
    const impersonationAudit = await startImpersonationAuditWorker(deps).catch(async (err: unknown) => {
      await Promise.all([stopWorkers(), chat.stop()]);
      throw err;
    });
    // Chains committed audit rows into the hash chain (one appender at a time across processes).
    const appender = startAuditAppender(deps);
    const stop = async () => {
      await Promise.all([stopWorkers(), chat.stop(), impersonationAudit.stop(), appender.stop()]);
    };
    return { name: 'scheduler', stop, details: { queueSupervision: true } };
  },
};

export async function startRoles(roles: Role[], services: Services): Promise<RunningRole[]> {
  const running: RunningRole[] = [];
  try {
    for (const role of roles) running.push(await STARTERS[role](services));
  } catch (err) {
    await Promise.allSettled(running.reverse().map((r) => r.stop()));
    throw err;
  }
  return running;
}
