// `mailpath dev`: Mailpath with every role, plus on loopback a DNS server answering *.localhost with the records Mailpath asks to publish, a catch-all SMTP
// sink all outbound mail is relayed to, and an inbox listing the sink and receiving inbound webhooks.
import type { Config } from '../../shared/config/index.js';
import type { Queryable } from '../../shared/db/connection.js';
import { createResolver } from '../../shared/kernel/dns.js';
import type { Logger } from '../../shared/kernel/log.js';
import { startMailpath } from '../runtime.js';
import { startDevDns } from './dns.js';
import { startDevInbox } from './inbox.js';
import { startDevSink } from './sink.js';
import { DevStore } from './store.js';
import { devZone } from './zone.js';

export interface RunningDev {
  stop(): Promise<void>;
}

/** The one human-readable block dev mode prints (on stderr, outside the JSON log): where everything is. */
function banner(config: Config, dns: string, sinkPort: number, inboxUrl: string): string {
  const api = new URL('/api/v1', config.publicUrl).toString();
  return [
    `Mailpath dev mode: everything on ${config.bindHost}, data in ${config.dataDir}`,
    `  dashboard          ${new URL('/app/', config.publicUrl).toString()}`,
    `  API                ${api}`,
    `  MX                 ${config.bindHost}:${config.mxPort}   (mail for your *.localhost domains)`,
    `  submission         ${config.bindHost}:${config.submissionPort} (STARTTLS), ${config.bindHost}:${config.submissionTlsPort} (TLS)`,
    `  DNS                ${dns}   answers *.localhost with the records Mailpath asks you to publish`,
    `  mail sink          127.0.0.1:${sinkPort}   catches all outbound mail (MAILPATH_OUTBOUND_RELAY=${config.outboundRelay ?? 'unset'})`,
    `  caught mail        ${inboxUrl}/messages`,
    `  webhook receiver   ${inboxUrl}/webhook   (what it got: ${inboxUrl}/webhooks)`,
    '',
  ].join('\n');
}

export async function startDev(config: Config, log: Logger): Promise<RunningDev> {
  const dev = config.dev;
  if (!dev) throw new Error('startDev needs the dev profile (loadConfig with dev: true)');
  const store = new DevStore();
  let db: Queryable | undefined;
  // The DNS server first, so nothing Mailpath does at start-up can ask before it answers.
  const dns = await startDevDns(
    devZone(config, () => db),
    dev.dnsPort,
    log.child({ dev: 'dns' }),
  );
  const stops: (() => Promise<void>)[] = [() => dns.stop()];
  let stopping: Promise<void> | undefined;
  const stopAll = () =>
    (stopping ??= (async () => {
      for (const stop of [...stops].reverse()) await stop().catch((err: unknown) => log.warn({ err }, 'dev mode stop'));
    })());
  try {
    const resolver = createResolver([dns.address], { timeoutMs: config.dns.timeout_ms, tries: config.dns.tries });
    const sink = await startDevSink({ store, dns: resolver, hostname: config.hostname, log: log.child({ dev: 'sink' }) }, dev.smtpPort);
    stops.push(() => sink.stop());
    const inbox = await startDevInbox({ store, log: log.child({ dev: 'inbox' }) }, dev.httpPort);
    stops.push(() => inbox.stop());
    const mailpath = await startMailpath(config, log);
    // Mailpath stops first: its deliveries in flight still reach the sink.
    stops.push(() => mailpath.stop());
    db = mailpath.sql;
    process.stderr.write(banner(config, dns.address, sink.port, inbox.url));
  } catch (err) {
    await stopAll();
    throw err;
  }
  return { stop: stopAll };
}
