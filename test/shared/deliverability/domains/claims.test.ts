// Domain claims below the API: one owner when several claims prove control at once, the database's guarantees, and the expiry sweep with an injected clock.
import t from 'tap';
import type { AuditActor } from '../../../../shared/operations/audit/log.js';
import { ManualClock } from '../../../../shared/kernel/clock.js';
import { expireStaleClaims } from '../../../../shared/deliverability/domains/claims.js';
import { findDomainById, listRecords } from '../../../../shared/deliverability/domains/queries.js';
import { createDomain, type DomainDetail } from '../../../../shared/deliverability/domains/service.js';
import { verifyDomain } from '../../../../shared/deliverability/domains/verification.js';
import { buildTestApp } from '../../../helpers/app.js';
import { startDnsServer } from '../../../helpers/dns-server.js';
import { publishRecords, type ApiRecord } from '../../../helpers/domains.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

const START = new Date('2026-11-21T10:00:00Z');
const DAY = 86_400_000;
const actor: AuditActor = { type: 'system', id: 'test' };

const dns = await startDnsServer(t);
const clock = new ManualClock(START);
const { ctx: deps, sql } = await buildTestApp(t, {
  clock,
  env: { MAILPATH_DNS_SERVERS: dns.address, MAILPATH_HOSTNAME: 'mx.mailpath.test', MAILPATH_CONFIG__DNS__TIMEOUT_MS: '150', MAILPATH_CONFIG__DNS__TRIES: '1' },
});

const asApiRecords = (d: DomainDetail): ApiRecord[] =>
  d.records.map((r) => ({ kind: r.kind, type: r.type, host: r.host, value: r.expected, priority: r.priority }));
const claimAs = async (name: string) => createDomain(deps, await insertTenant(sql), actor, name);
const row = async (id: string) => (await findDomainById(sql, id))!;

t.test('several claims proving control at the same moment: exactly one owns the name, the others are superseded', async (t) => {
  const claims: DomainDetail[] = [];
  for (let i = 0; i < 6; i++) claims.push(await claimAs('race.example'));
  // The name's DNS controller published every claim's records (each DKIM key at its own selector).
  for (const c of claims) publishRecords(dns, asApiRecords(c));
  const outcomes = await Promise.all(claims.map(async (c) => verifyDomain(deps, await row(c.domain.id), actor)));
  const rows = await Promise.all(claims.map((c) => row(c.domain.id)));
  const owners = rows.filter((r) => r.owned_at !== null);
  t.equal(owners.length, 1, 'one owner');
  t.equal(rows.filter((r) => r.superseded_at !== null).length, 5, 'the rest closed');
  t.ok(owners[0]!.verified_at, 'the owner can send');
  t.same(
    rows.filter((r) => r.verified_at !== null).map((r) => r.id),
    [owners[0]!.id],
    'no other claim can',
  );
  t.equal(outcomes.filter((o) => o?.claim === 'won').length, 1, 'one check won');
  t.equal(outcomes.filter((o) => o === undefined).length + outcomes.filter((o) => o?.claim === 'won').length, 6, 'the others found their claim closed');
  const [audits] = await sql<{ owned: number; superseded: number }[]>`
    select count(*) filter (where action = 'domain.owned')::int as owned, count(*) filter (where action = 'domain.superseded')::int as superseded
    from audit_events where metadata->>'domain' = 'race.example'`;
  t.same(audits, { owned: 1, superseded: 5 });
});

/** The constraint a statement violated, or undefined when it succeeded. */
const violated = (statement: Promise<unknown>): Promise<string | undefined> =>
  statement.then(
    () => undefined,
    (err: { constraint_name?: string }) => err.constraint_name ?? String(err),
  );

t.test('the database holds one owner per name, and only an owner verified or drifted', async (t) => {
  const [a, b] = [await insertTenant(sql), await insertTenant(sql)];
  await sql`insert into domains (tenant_id, name, unicode_name, owned_at, created_at) values (${a}, 'held.example', 'held.example', now(), now())`;
  t.equal(
    await violated(sql`insert into domains (tenant_id, name, unicode_name, owned_at, created_at) values (${b}, 'held.example', 'held.example', now(), now())`),
    'domains_owned_name_key',
    'a second owner',
  );
  t.equal(
    await violated(sql`insert into domains (tenant_id, name, unicode_name, created_at) values (${b}, 'held.example', 'held.example', now())`),
    undefined,
    'a second, pending claim is fine',
  );
  t.equal(
    await violated(sql`insert into domains (tenant_id, name, unicode_name, created_at) values (${b}, 'held.example', 'held.example', now())`),
    'domains_tenant_name_key',
    'the same tenant twice',
  );
  for (const column of ['verified_at', 'drifted_at']) {
    t.equal(
      await violated(
        sql`insert into domains (tenant_id, name, unicode_name, ${sql(column)}, created_at) values (${b}, ${`${column}.example`}, 'x', now(), now())`,
      ),
      'domains_verified_owned',
      `${column} without ownership`,
    );
  }
  t.equal(
    await violated(
      sql`insert into domains (tenant_id, name, unicode_name, owned_at, superseded_at, created_at)
          values (${b}, 'both.example', 'both.example', now(), now(), now())`,
    ),
    'domains_superseded_unowned',
  );
});

t.test('a failed DKIM look-up proves nothing: the claim stays pending', async (t) => {
  const c = await claimAs('flaky.example');
  publishRecords(dns, asApiRecords(c));
  dns.setMode('timeout');
  t.teardown(() => dns.setMode('answer'));
  const outcome = await verifyDomain(deps, await row(c.domain.id), actor);
  t.equal(outcome?.claim, 'pending');
  t.equal((await row(c.domain.id)).owned_at, null);
  dns.setMode('answer');
  t.equal((await verifyDomain(deps, await row(c.domain.id), actor))?.claim, 'won', 'once DNS answers');
});

t.test('the expiry sweep removes unowned claims at their expiry, audited; owned claims and claims not yet due stay', async (t) => {
  await sql`delete from domains`;
  clock.set(START);
  const early = await claimAs('early.example');
  t.same((await row(early.domain.id)).expires_at, new Date(START.getTime() + 7 * DAY), 'claim_expiry_days (7) after it was added');
  clock.advance(DAY);
  const late = await claimAs('late.example');
  const proved = await claimAs('proved.example');
  publishRecords(dns, asApiRecords(proved));
  t.equal((await verifyDomain(deps, await row(proved.domain.id), actor))?.claim, 'won');
  t.equal((await row(proved.domain.id)).expires_at, null, 'owning clears the expiry');

  clock.set(new Date(START.getTime() + 7 * DAY - 1));
  t.equal(await expireStaleClaims(deps), 0);
  clock.set(new Date(START.getTime() + 7 * DAY));
  t.equal(await expireStaleClaims(deps), 1);
  t.equal(await findDomainById(sql, early.domain.id), undefined, 'removed');
  t.same(await listRecords(sql, [early.domain.id]), [], 'with its records');
  t.equal(await expireStaleClaims(deps), 0, 'a second sweep finds nothing');
  t.ok(await findDomainById(sql, late.domain.id), 'a later claim waits for its own expiry');
  const [audit] = await sql<{ tenant_id: string; actor_id: string; metadata: Record<string, unknown> }[]>`
    select tenant_id, actor_id, metadata from audit_events where action = 'domain.expired' and resource_id = ${early.domain.id}`;
  t.match(audit, {
    tenant_id: early.domain.tenant_id,
    actor_id: 'domain-recheck',
    metadata: { domain: 'early.example', superseded: false, created_at: START.toISOString() },
  });

  clock.advance(400 * DAY);
  t.equal(await expireStaleClaims(deps), 1, 'the later claim in its turn');
  t.ok(await findDomainById(sql, proved.domain.id), 'the owned one never');
});
