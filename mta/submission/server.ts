// The submission role: SMTP AUTH listeners (STARTTLS and implicit TLS) that hand tenants' messages to the send use-case (shared/sending).
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import type { CredentialResolver } from '../../shared/accounts/auth/credentials.js';
import type { KeyUsageRecorder } from '../../shared/accounts/keys/last-used.js';
import type { RateLimiter } from '../../shared/limits/rate-limits/limiter.js';
import type { TenantLimits } from '../../shared/limits/rate-limits/tenant-limits.js';
import { loadTls } from '../../shared/kernel/tls.js';
import type { SendingDeps } from '../../shared/sending/deps.js';
import { SubmissionAuth, SubmissionRateLimit } from './auth.js';
import { shuttingDown } from '../smtp/replies.js';
import { sessionHandlers } from './session.js';
import { listen } from '../smtp/listen.js';
import { countSessions } from '../smtp/session-metrics.js';
import { attachProtocolReplies, NOT_SMTP_COMMANDS, PROTOCOL_OPTIONS } from '../smtp/protocol-replies.js';

/** The send path, and the request-side services the API has too: one key's HTTP and SMTP sends share its rate limit and its last-used record. */
export interface SubmissionDeps extends SendingDeps {
  credentials: CredentialResolver;
  keyUsage: KeyUsageRecorder;
  rateLimiter: RateLimiter;
  tenantLimits: TenantLimits;
}

export interface RunningSubmission {
  /** The bound ports (the real ones when the configuration asked for port 0). */
  ports: { starttls: number; implicitTls: number };
  /** Stops accepting, lets sessions in a transaction finish within config.shutdownTimeoutMs, then closes. */
  stop(): Promise<void>;
}

export async function startSubmission(deps: SubmissionDeps): Promise<RunningSubmission> {
  const { config, log, clock } = deps;
  const tls = await loadTls(config);

  let stopping = false;
  const inFlight = new Set<Promise<unknown>>();
  const handlers = sessionHandlers({
    deps,
    auth: new SubmissionAuth(deps.credentials, deps.keyUsage, clock, { sql: deps.sql, config, clock }),
    rateLimit: new SubmissionRateLimit(deps.rateLimiter, deps.tenantLimits, config.limits.rate_limits),
    stopping: () => stopping,
    track(work) {
      const settled = work.catch(() => undefined).finally(() => inFlight.delete(settled));
      inFlight.add(settled);
    },
  });

  const common: SMTPServerOptions = {
    ...handlers,
    ...PROTOCOL_OPTIONS,
    name: config.hostname,
    banner: 'Mailpath submission',
    key: tls.key,
    cert: tls.cert,
    minVersion: 'TLSv1.2',
    size: config.limits.send.max_message_bytes,
    hideSize: false,
    hide8BITMIME: false,
    hideSMTPUTF8: false,
    hidePIPELINING: false,
    authMethods: ['PLAIN', 'LOGIN'],
    // Replaced per session (session.ts: AUTH too until TLS is up).
    disabledCommands: [...NOT_SMTP_COMMANDS],
    // AUTH carries an API key: never over a cleartext connection.
    allowInsecureAuth: false,
    authRequiredMessage: '5.7.0 Authentication required',
    // Every RCPT goes through normalizeEmail, the API's rule, answered 553 5.1.3; the library's
    // stricter parse would answer 501 first, without saying which rule the address broke.
    lenientAddressParsing: true,
    // Reverse look-ups would bypass the injectable resolver and add latency for nothing.
    disableReverseLookup: true,
    closeTimeout: Math.max(1, config.shutdownTimeoutMs),
    logger: false,
  };
  const servers = [new SMTPServer({ ...common, secure: false }), new SMTPServer({ ...common, secure: true })];
  // Resets and failed handshakes of single clients are routine; a listener failure surfaces from listen().
  for (const server of servers) server.on('error', (err) => log.debug({ err }, 'submission connection error'));
  for (const server of servers) countSessions(server, deps.metrics, 'submission');
  for (const server of servers) attachProtocolReplies(server, { authNeedsTls: true });
  let ports: number[];
  try {
    ports = await Promise.all([
      listen(servers[0]!, config.submissionPort, config.bindHost, 'MAILPATH_SUBMISSION_PORT'),
      listen(servers[1]!, config.submissionTlsPort, config.bindHost, 'MAILPATH_SUBMISSION_TLS_PORT'),
    ]);
  } catch (err) {
    await Promise.allSettled(servers.map((s) => closeServer(s, true)));
    throw err;
  }
  log.info({ starttls: ports[0], implicitTls: ports[1] }, 'submission listening');

  let stopped: Promise<void> | undefined;
  return {
    ports: { starttls: ports[0]!, implicitTls: ports[1]! },
    stop() {
      stopping = true;
      stopped ??= (async () => {
        const deadline = Date.now() + config.shutdownTimeoutMs;
        await Promise.all(servers.map((s) => closeServer(s)));
        // A session cut at the deadline may still be committing: let it settle before the database closes.
        await Promise.race([Promise.allSettled([...inFlight]), delay(Math.max(0, deadline - Date.now()) + 1000)]);
        log.info('submission stopped');
      })();
      return stopped;
    },
  };
}

/**
 * Closes a listener: no new connections; idle sessions (between transactions) are told 421 at
 * once; a session in a transaction gets until the closeTimeout, when smtp-server cuts it with a
 * 421. `immediate` cuts every session now (a start-up that failed half-way).
 */
function closeServer(server: SMTPServer, immediate = false): Promise<void> {
  return new Promise((resolve) => {
    const sweep = () => {
      for (const connection of server.connections) {
        // A connection still being set up has no envelope yet: it is idle too.
        if (!connection.session.envelope?.mailFrom) connection.send(421, shuttingDown().message);
      }
    };
    const timer = setInterval(sweep, 50);
    const done = () => {
      clearInterval(timer);
      resolve();
    };
    if (immediate) server.connections.forEach((c) => c.close());
    server.close(done);
    sweep();
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
