// Super-admin IP watchdog: the pool members with their quarantine state and latest event, the recent events, and releasing a quarantined address.
import { isIP } from 'node:net';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import type { WatchdogEventRow } from '../../shared/delivery/ip-pools/queries.js';
import { releaseQuarantine, watchdogView } from '../../shared/delivery/ip-pools/view.js';
import { defineRoute } from '../route.js';
import { iso, timestamp } from '../schemas/common.js';

const TAGS = ['Super-admin: platform'];

const event = z.object({
  id: z.string(),
  occurred_at: timestamp,
  kind: z.enum(['quarantined', 'released', 'expired']),
  address: z.string(),
  pool: z.string().nullable(),
  rule: z.string().nullable().describe('The block rule of config/ip-watchdog.yaml that matched'),
  reply: z.string().nullable().describe('quarantined: the SMTP reply that matched'),
  destination: z.string().nullable().describe('quarantined: the host that gave the reply'),
  send_id: z.string().nullable(),
  quarantined_until: timestamp.nullable(),
  actor_id: z.string().nullable().describe('released: the user who released it'),
});

const member = z.object({
  pool: z.string(),
  address: z.string(),
  quarantined: z.boolean().describe('Deliveries avoid the address now'),
  quarantined_at: timestamp.nullable(),
  quarantined_until: timestamp.nullable().describe('When the cool-down ends (config/ip-watchdog.yaml cooldown_minutes)'),
  rule: z.string().nullable(),
  latest_event: event.nullable(),
});

const presentEvent = (e: WatchdogEventRow): z.input<typeof event> => ({
  id: e.id,
  occurred_at: e.occurred_at.toISOString(),
  kind: e.kind,
  address: e.address,
  pool: e.pool,
  rule: e.rule,
  reply: e.reply,
  destination: e.destination,
  send_id: e.send_id,
  quarantined_until: iso(e.quarantined_until),
  actor_id: e.actor_id,
});

export const adminIpWatchdogRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/admin/ip-watchdog',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'IP pools and their quarantines',
    description:
      'One row per IP-pool member (config/ip-pools.yaml) with its quarantine state and latest event, and the last 50 events (quarantined, released, ' +
      'expired), newest first.',
    response: z.object({ pools: z.array(member), events: z.array(event) }),
    handler: async () => {
      const view = await watchdogView(ctx);
      return {
        pools: view.pools.map((m) => ({
          pool: m.pool,
          address: m.address,
          quarantined: m.quarantined,
          quarantined_at: iso(m.quarantine?.quarantined_at ?? null),
          quarantined_until: iso(m.quarantine?.quarantined_until ?? null),
          rule: m.quarantine?.rule ?? null,
          latest_event: m.latest_event ? presentEvent(m.latest_event) : null,
        })),
        events: view.events.map(presentEvent),
      };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/ip-watchdog/:address/release',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Release a quarantined address',
    description:
      'Ends the quarantine of a pool address before its cool-down (audited as ip_watchdog.release); outbound processes use it again within state_cache_ms. ' +
      '404 for an address in no pool, 409 when it is not quarantined.',
    params: z.object({
      address: z
        .string()
        .max(64)
        .refine((v) => isIP(v) !== 0, 'expected an IPv4 or IPv6 address'),
    }),
    errors: [404, 409, 422],
    response: z.object({ address: z.string(), released_at: timestamp, quarantined_at: timestamp, quarantined_until: timestamp, rule: z.string() }),
    handler: async ({ params, principal, ip }) => {
      const r = await releaseQuarantine(ctx, params.address, actorOf(principal, ip));
      return {
        address: r.address,
        released_at: r.released_at.toISOString(),
        quarantined_at: r.quarantine.quarantined_at.toISOString(),
        quarantined_until: r.quarantine.quarantined_until.toISOString(),
        rule: r.quarantine.rule,
      };
    },
  });
};
