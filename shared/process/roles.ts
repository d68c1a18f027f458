// The roles one mailpath process can run (MAILPATH_ROLES); each starts its listeners or workers and returns how to stop them.
import type { Role } from '../config.js';
import type { Config } from '../config.js';
import type { Sql } from '../db/connection.js';
import type { Logger } from '../log.js';
import type { Boss } from '../queue.js';
import { startApi } from '../../api/server.js';
import { systemClock } from '../clock.js';
import { createDomainDeps } from '../domains/deps.js';
import { scheduleWorkers } from '../workers/schedule.js';
import { createOutboundDeps } from '../../mta/outbound/deps.js';
import { startOutbound } from '../../mta/outbound/deliver/start.js';
import { startSubmission } from '../../mta/submission/server.js';
import { startWebhookDelivery } from '../../mta/webhook/start.js';
import { startBounceIntake } from '../../mta/outbound/bounces/worker.js';
import { createMxDeps } from '../../mta/inbound/deps.js';
import { startMx } from '../../mta/inbound/server.js';

export interface RoleDeps {
  config: Config;
  sql: Sql;
  log: Logger;
  boss: Boss;
}

export interface RunningRole {
  name: Role;
  /** Stop accepting new work and finish what is in flight. */
  stop(): Promise<void>;
  /** Facts worth printing at start-up (ports). */
  details: Record<string, unknown>;
}

type RoleStarter = (deps: RoleDeps) => Promise<RunningRole>;

const STARTERS: Record<Role, RoleStarter> = {
  api: async ({ config, sql, log, boss }) => {
    const api = await startApi(config, sql, log.child({ role: 'api' }), boss);
    return { name: 'api', stop: api.stop, details: { httpsPort: api.httpsPort, httpPort: api.httpPort } };
  },
  // The MX: mail for tenant domains, workspace mailboxes and our bounce addresses, stored before the 250.
  mx: async ({ config, sql, log, boss }) => {
    const mx = await startMx(await createMxDeps(config, sql, log.child({ role: 'mx' }), boss, systemClock));
    return { name: 'mx', stop: mx.stop, details: { mxPort: mx.port } };
  },
  // SMTP submission: tenants' mail clients and apps, through the same gates, signing and queue as the API.
  submission: async ({ config, sql, log, boss }) => {
    const deps = await createOutboundDeps(await createDomainDeps(config, sql, log.child({ role: 'submission' }), systemClock), boss);
    const submission = await startSubmission(deps);
    return { name: 'submission', stop: submission.stop, details: { starttlsPort: submission.ports.starttls, implicitTlsPort: submission.ports.implicitTls } };
  },
  // Delivery workers: MX look-up or relay, connection reuse per destination, retries and bounce classification.
  outbound: async ({ config, sql, log, boss }) => {
    const deps = await createOutboundDeps(await createDomainDeps(config, sql, log, systemClock), boss);
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
    const stop = async () => {
      await Promise.all([outbound.stop(), webhooks.stop(), bounces.stop()]);
    };
    return { name: 'outbound', stop, details: { relay: config.outboundRelay ?? null } };
  },
  // The scheduler supervises the queues (maintenance, expiry, cron schedules) and runs the timed workers.
  scheduler: async ({ config, sql, log, boss }) => {
    const deps = await createDomainDeps(config, sql, log.child({ role: 'scheduler' }), systemClock);
    const stop = await scheduleWorkers(boss, deps);
    return { name: 'scheduler', stop, details: { queueSupervision: true } };
  },
};

export async function startRoles(roles: Role[], deps: RoleDeps): Promise<RunningRole[]> {
  const running: RunningRole[] = [];
  try {
    for (const role of roles) running.push(await STARTERS[role](deps));
  } catch (err) {
    await Promise.allSettled(running.reverse().map((r) => r.stop()));
    throw err;
  }
  return running;
}
