// The roles one mailpath process can run (MAILPATH_ROLES); each starts its listeners or workers from the process's services and returns how to stop them.
import { startApi } from '../api/server.js';
import { startMx } from '../mta/inbound/server.js';
import { startOutbound } from '../mta/outbound/deliver/start.js';
import { startSubmission } from '../mta/submission/server.js';
import type { Role } from '../shared/config/index.js';
import { startJobs } from '../jobs/index.js';
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
  // Delivery over SMTP (MX look-up or relay, connection reuse per destination, retries, bounce classification), then
  // the outbound jobs of jobs/index.ts.
  outbound: async (services) => {
    const deps = withRole(services, 'outbound');
    const outbound = await startOutbound(deps);
    const jobs = await startJobs('outbound', deps).catch(async (err: unknown) => {
      await outbound.stop();
      throw err;
    });
    return {
      name: 'outbound',
      stop: async () => void (await Promise.all([outbound.stop(), jobs.stop()])),
      details: { relay: services.config.outboundRelay ?? null },
    };
  },
  // The scheduler supervises the queues (maintenance, expiry, cron schedules) and runs the scheduler jobs of jobs/index.ts.
  scheduler: async (services) => {
    const jobs = await startJobs('scheduler', withRole(services, 'scheduler'));
    return { name: 'scheduler', stop: jobs.stop, details: { queueSupervision: true } };
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
