// config/ip-pools.yaml: the outbound source-address pools and which sends use which pool (by sending domain, tenant, or the default).
import { isIP } from 'node:net';
import { z } from 'zod';

const poolName = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'expected a pool name (a-z, 0-9, _ and -)');
const address = z
  .string()
  .refine((v) => isIP(v) !== 0, 'expected an IPv4 or IPv6 address')
  .transform((v) => v.toLowerCase());

export const ipPoolsSchema = z
  .strictObject({
    pools: z.record(poolName, z.array(address).min(1, 'a pool needs at least one address').max(1024)),
    default_pool: poolName.nullable(),
    tenants: z.record(z.uuid(), poolName),
    domains: z.record(z.string().regex(/^[a-z0-9.-]{1,253}$/, 'expected a domain name in lower case (A-label form)'), poolName),
  })
  .superRefine((c, ctx) => {
    const known = (name: string) => Object.hasOwn(c.pools, name);
    if (c.default_pool !== null && !known(c.default_pool)) ctx.addIssue({ code: 'custom', path: ['default_pool'], message: `no pool named ${c.default_pool}` });
    for (const [section, map] of [
      ['tenants', c.tenants],
      ['domains', c.domains],
    ] as const) {
      for (const [key, pool] of Object.entries(map)) {
        if (!known(pool)) ctx.addIssue({ code: 'custom', path: [section, key], message: `no pool named ${pool}` });
      }
    }
    for (const [name, members] of Object.entries(c.pools)) {
      if (new Set(members).size !== members.length) ctx.addIssue({ code: 'custom', path: ['pools', name], message: 'an address is listed twice' });
    }
  });

export type IpPoolsConfig = z.infer<typeof ipPoolsSchema>;
