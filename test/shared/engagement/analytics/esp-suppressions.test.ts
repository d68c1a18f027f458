// Automatic per-provider suppressions: what is a block, how a custom domain's provider is read from the MX host reached, the deferral-storm threshold per
// window, one open suppression at a time.
import t from 'tap';
import {
  DEFERRAL_THRESHOLD,
  REFUSAL_WINDOW_MINUTES,
  SUPPRESSION_HOURS,
  isBlock,
  noteRefusal,
  providerOfRefusal,
  type Refusal,
} from '../../../../shared/engagement/analytics/esp-suppressions.js';
import { buildTestApp } from '../../../helpers/app.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

const { sql } = await buildTestApp(t);

t.test('blocks: permanent policy codes or block wording; greylisting and mailbox faults are not', async (t) => {
  t.ok(isBlock({ smtpCode: 550, enhancedCode: '5.7.1', reply: '550 5.7.1 Service unavailable' }));
  t.ok(
    isBlock({
      smtpCode: 421,
      enhancedCode: '4.7.0',
      reply: '421 4.7.0 [TSS04] Messages temporarily deferred due to unexpected volume or user complaints - rate limited',
    }),
  );
  t.ok(isBlock({ smtpCode: 554, enhancedCode: null, reply: '554 Your IP is on our blocklist' }));
  t.notOk(isBlock({ smtpCode: 451, enhancedCode: '4.7.1', reply: '451 4.7.1 Greylisted, try again later' }));
  t.notOk(isBlock({ smtpCode: 550, enhancedCode: '5.1.1', reply: '550 5.1.1 User unknown' }));
  t.notOk(isBlock({ smtpCode: null, enhancedCode: null, reply: 'connection timed out' }));
});

t.test('provider of a refusal: the address first, then the MX host reached', async (t) => {
  t.equal(providerOfRefusal({ recipient: 'a@yahoo.com', remoteHost: null }), 'yahoo');
  t.equal(providerOfRefusal({ recipient: 'a@corp.example', remoteHost: 'corp-example.mail.protection.outlook.com' }), 'outlook');
  t.equal(providerOfRefusal({ recipient: 'a@corp.example', remoteHost: 'mx.corp.example' }), 'other');
});

t.test('a deferral storm: the threshold within one window raises one suppression; windows count apart', async (t) => {
  const tenantId = await insertTenant(sql);
  const windowStart = new Date('2026-05-06T10:00:00Z');
  const refusal = (at: Date): Refusal => ({
    tenantId,
    recipient: 'r@outlook.com',
    remoteHost: null,
    verdict: 'temporary',
    smtpCode: 451,
    enhancedCode: '4.3.0',
    reply: '451 4.3.0 Try later',
    at,
  });
  // Just under the threshold at the end of one window, then again in the next: no storm.
  for (let i = 0; i < DEFERRAL_THRESHOLD - 1; i++)
    t.equal(await noteRefusal(sql, refusal(new Date(windowStart.getTime() + REFUSAL_WINDOW_MINUTES * 60_000 - 1000))), 'counted');
  const next = new Date(windowStart.getTime() + REFUSAL_WINDOW_MINUTES * 60_000);
  for (let i = 0; i < DEFERRAL_THRESHOLD - 1; i++) await noteRefusal(sql, refusal(next));
  t.equal((await sql`select count(*)::int as n from esp_suppressions where tenant_id = ${tenantId}`)[0]!['n'], 0);
  t.equal(await noteRefusal(sql, refusal(next)), 'raised', 'the threshold reached within one window');
  t.equal(await noteRefusal(sql, refusal(next)), 'counted');
  const [row] = await sql`select provider, reason, refusals, triggered_at, expires_at from esp_suppressions where tenant_id = ${tenantId}`;
  t.match(row, { provider: 'outlook', reason: 'deferral_storm', refusals: DEFERRAL_THRESHOLD });
  t.same(row!['expires_at'], new Date(next.getTime() + SUPPRESSION_HOURS * 3_600_000));

  // While it is open, a storm in a later window raises nothing; once revoked, the next storm raises a new one.
  const later = new Date(next.getTime() + 3_600_000);
  for (let i = 0; i < DEFERRAL_THRESHOLD; i++) await noteRefusal(sql, refusal(later));
  t.equal((await sql`select count(*)::int as n from esp_suppressions where tenant_id = ${tenantId}`)[0]!['n'], 1);
  await sql`update esp_suppressions set revoked_at = ${later} where tenant_id = ${tenantId}`;
  const again = new Date(later.getTime() + REFUSAL_WINDOW_MINUTES * 60_000);
  for (let i = 0; i < DEFERRAL_THRESHOLD; i++) await noteRefusal(sql, refusal(again));
  t.equal((await sql`select count(*)::int as n from esp_suppressions where tenant_id = ${tenantId}`)[0]!['n'], 2);
  t.equal(await noteRefusal(sql, { ...refusal(again), smtpCode: null, reply: 'timeout' }), 'ignored', 'no reply: not the provider speaking');
  t.equal(await noteRefusal(sql, { ...refusal(again), recipient: 'r@corp.example' }), 'ignored', 'unknown provider');
});
