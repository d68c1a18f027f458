// The `mailpath dev` profile: its own ports (loopback DNS, catch-all SMTP sink, inbox/webhook receiver) and the defaults it gives the ordinary variables so
// everything stays on one machine.
import { z } from 'zod';
import type { Env } from './env.js';

const devPort = (fallback: number) =>
  z.string().trim().regex(/^\d+$/, 'expected a whole number').transform(Number).pipe(z.number().int().min(1).max(65535)).default(fallback);

/** The dev pieces' ports; the defaults are the usual ones of local mail catchers (1025 SMTP, 8025 HTTP). */
export const devEnvSchema = z.object({
  MAILPATH_DEV_DNS_PORT: devPort(1053),
  MAILPATH_DEV_SMTP_PORT: devPort(1025),
  MAILPATH_DEV_HTTP_PORT: devPort(8025),
});

export interface DevConfig {
  /** The loopback DNS server (UDP and TCP) answering for *.localhost names. */
  dnsPort: number;
  /** The catch-all SMTP sink every outbound message is relayed to. */
  smtpPort: number;
  /** The HTTP server listing what the sink and the webhook receiver got. */
  httpPort: number;
}

/**
 * The ordinary variables dev mode sets when they are unset (an explicit value always wins): loopback
 * listeners, a data dir of its own, a mail host under .localhost, every DNS look-up (verification,
 * rotation checks, sender authentication) through the dev DNS, every outbound message to the sink,
 * inbound webhooks allowed to a plain-http loopback receiver, and room for a trial campaign.
 */
export function devDefaults(dev: DevConfig): Env {
  const dns = `127.0.0.1:${dev.dnsPort}`;
  return {
    MAILPATH_BIND_HOST: '127.0.0.1',
    MAILPATH_DATA_DIR: './data-dev',
    MAILPATH_HOSTNAME: 'mx.mailpath.localhost',
    MAILPATH_DNS_SERVERS: dns,
    MAILPATH_PUBLIC_RESOLVERS: dns,
    MAILPATH_OUTBOUND_RELAY: `127.0.0.1:${dev.smtpPort}`,
    MAILPATH_CONFIG__WEBHOOKS__ALLOW_HTTP: 'true',
    MAILPATH_CONFIG__WEBHOOKS__ALLOW_PRIVATE_ADDRESSES: 'true',
    // A trial campaign of a few thousand goes out at once: new domains start at tier 6 (5,000 a day), new tenants
    // on the starter plan (50,000 a month), not at production's 50 a day and 3,000 a month.
    MAILPATH_CONFIG__WARMUP__INITIAL_TIER: '6',
    MAILPATH_CONFIG__AUTH__REGISTRATION_PLAN: 'starter',
    MAILPATH_VALIDATE_RESPONSES: 'true',
  };
}
