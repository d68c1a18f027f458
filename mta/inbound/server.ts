// The mx role: the SMTP listener on MAILPATH_MX_PORT that receives mail for tenant domains, mailboxes and our bounce addresses through the hook phases.
import { SMTPServer } from 'smtp-server';
import { loadTls } from '../../shared/kernel/tls.js';
import { HookRunner } from '../hooks/runner.js';
import { attachConnectionHooks } from './connection-hooks.js';
import { PregreetTest } from './pregreet.js';
import type { MxDeps } from './deps.js';
import { loadPlugins, type PluginCatalogue } from './plugins.js';
import { shuttingDown } from '../smtp/replies.js';
import { sessionHandlers } from './session.js';
import { listen } from '../smtp/listen.js';
import { countSessions } from '../smtp/session-metrics.js';
import { attachProtocolReplies, NOT_SMTP_COMMANDS, PROTOCOL_OPTIONS } from '../smtp/protocol-replies.js';

export interface RunningMx {
  /** The bound port (the real one when the configuration asked for port 0). */
  port: number;
  /** Stops accepting, lets sessions in a transaction finish within config.shutdownTimeoutMs, then closes. */
  stop(): Promise<void>;
}

/** Starts the MX with the plugins config/plugins.yaml enables, built from `catalogue` (plugins/index.ts; tests add misbehaving ones). */
export async function startMx(deps: MxDeps, catalogue: PluginCatalogue): Promise<RunningMx> {
  const { config, log } = deps;
  const tls = await loadTls(config);
  const plugins = await loadPlugins(deps, catalogue);
  const runner = new HookRunner(plugins, {
    timeoutMs: (phase) => config.plugins.phase_timeout_ms[phase] ?? config.plugins.hook_timeout_ms,
    log,
  });
  if (runner.handlersOf('queue').length === 0) log.warn('no MX plugin handles the queue phase (the store plugin does): every message will be deferred (451)');

  let stopping = false;
  const inFlight = new Set<Promise<unknown>>();
  const handlers = sessionHandlers({
    runner,
    hostname: config.hostname,
    log,
    maxMessageBytes: config.inbound.limits.max_message_bytes,
    maxClientsPerAddress: config.inbound.server.max_clients_per_address,
    now: () => deps.clock.now(),
    stopping: () => stopping,
    track(work) {
      const settled = work.catch(() => undefined).finally(() => inFlight.delete(settled));
      inFlight.add(settled);
    },
  });
  const { helo, ...smtpHandlers } = handlers;
  const server = new SMTPServer({
    ...smtpHandlers,
    ...PROTOCOL_OPTIONS,
    name: config.hostname,
    banner: config.inbound.server.banner,
    key: tls.key,
    cert: tls.cert,
    minVersion: 'TLSv1.2',
    secure: false,
    // Mail from anyone to our domains: no AUTH on an MX (submission is the authenticated door).
    authOptional: true,
    disabledCommands: ['AUTH', ...NOT_SMTP_COMMANDS],
    size: config.inbound.limits.max_message_bytes,
    hideSize: false,
    hide8BITMIME: false,
    hideSMTPUTF8: false,
    hidePIPELINING: false,
    maxClients: config.inbound.server.max_clients,
    socketTimeout: config.inbound.server.socket_timeout_ms,
    // Reverse look-ups would bypass the injectable resolver and add latency for nothing.
    disableReverseLookup: true,
    closeTimeout: Math.max(1, config.shutdownTimeoutMs),
    logger: false,
  });
  const pregreet = new PregreetTest({
    waitMs: config.inbound.server.pregreet_wait_ms,
    ttlMs: config.inbound.server.pregreet_ttl_seconds * 1000,
    maxWaitingPerAddress: config.inbound.server.max_clients_per_address,
    now: () => deps.clock.now().getTime(),
  });
  attachProtocolReplies(server, { authNeedsTls: false });
  attachConnectionHooks(
    server,
    { helo },
    {
      greetingDelayMs: config.inbound.server.greeting_delay_ms,
      pregreet,
      onPregreet(outcome, remote, pausedMs) {
        if (outcome === 'talked-early') log.info({ remote, pausedMs }, 'mx pregreet test: dropped a client that talked before the greeting');
        else log.debug({ remote, pausedMs }, 'mx pregreet test: passed');
      },
      maxSessionMs: config.inbound.server.max_session_ms,
    },
  );
  // Resets and failed handshakes of single clients are routine; a listener failure surfaces from listen().
  server.on('error', (err) => log.debug({ err }, 'mx connection error'));
  countSessions(server, deps.metrics, 'mx');
  let port: number;
  try {
    port = await listen(server, config.mxPort, config.bindHost, 'MAILPATH_MX_PORT');
  } catch (err) {
    await closeAll(plugins.map((p) => p.plugin));
    throw err;
  }
  log.info({ port, plugins: plugins.map((p) => p.plugin.name) }, 'mx listening');

  let stopped: Promise<void> | undefined;
  return {
    port,
    stop() {
      stopping = true;
      stopped ??= (async () => {
        const deadline = Date.now() + config.shutdownTimeoutMs;
        await closeServer(server);
        // A session cut at the deadline may still be committing: let it settle before the database closes.
        await Promise.race([Promise.allSettled([...inFlight]), delay(Math.max(0, deadline - Date.now()) + 1000)]);
        await closeAll(plugins.map((p) => p.plugin));
        log.info('mx stopped');
      })();
      return stopped;
    },
  };
}

async function closeAll(plugins: { close?(): Promise<void> }[]): Promise<void> {
  await Promise.allSettled(plugins.map((p) => p.close?.()));
}

/**
 * No new connections; idle sessions (between transactions) are told 421 at once; a session in a
 * transaction gets until the closeTimeout, when smtp-server cuts it with a 421.
 */
function closeServer(server: SMTPServer): Promise<void> {
  return new Promise((resolve) => {
    const sweep = () => {
      for (const connection of server.connections) {
        if (!connection.session.envelope?.mailFrom) connection.send(421, shuttingDown().message);
      }
    };
    const timer = setInterval(sweep, 50);
    server.close(() => {
      clearInterval(timer);
      resolve();
    });
    sweep();
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
