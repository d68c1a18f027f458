// A tenant's goal regexes cannot stall the tracking recorder for other tenants: the issue's pattern is refused, a goal
// stored with it before never runs it, and a click on the worst patterns still allowed, at the longest URL a regex goal
// is matched against, still leaves another tenant's open recorded (the default deployment: spool and thread). How soon is a figure of bench/neighbours.ts;
// here a stall (the issue's pattern spun for minutes) fails the bounded wait.
import t from 'tap';
import { MAX_MATCHED_URL } from '../../../shared/engagement/goals/rules.js';
import type { SpooledHitRecorder } from '../../../shared/engagement/tracking/spooled-recorder.js';
import { buildTestApp, call, registerTenant } from '../../helpers/app.js';
import { pollUntil } from '../../helpers/smtp-sink.js';
import { campaignSend, engagementEvents, HUMAN_UA, markDelivered } from '../../helpers/tracking.js';

const { app, ctx, sql } = await buildTestApp(t, {
  env: { MAILPATH_CONFIG__TRACKING__RECORDER__SPOOL__ENABLED: 'true', MAILPATH_CONFIG__TRACKING__RECORDER__THREAD: 'true' },
});
const attacker = await registerTenant(app);
const neighbour = await registerTenant(app);

/** The issue's pattern: O(n³) backtracking in JavaScript on a URL of a's that does not end in b. */
const ISSUE_PATTERN = 'a{0,2000}a{0,2000}a{0,2000}b';
/** The slowest shapes still accepted (near the program-size cap), measured on RE2JS: a DFA rebuilt per URL, or the NFA. */
const WORST_ALLOWED = [
  '(.*a){49}',
  '(?i)[a-z]{0,40}[a-z]{0,40}[a-z]{0,40}\\d',
  '[a-z]{0,40}[a-z]{0,40}[a-z]{0,40}\\d',
  '(.*a.*b){1,24}x',
  '.*.*.*.*=.*.*.*.*b',
];

const get = (url: string) => app.inject({ method: 'GET', url, headers: { 'user-agent': HUMAN_UA }, remoteAddress: '203.0.113.77' });

t.test("the worst goal regexes at the longest URL: another tenant's open is still recorded", async (t) => {
  const refused = await call(app, 'POST', '/goals', { token: attacker.token, body: { name: 'Issue', match_type: 'regex', match_value: ISSUE_PATTERN } });
  t.equal(refused.status, 422);
  t.equal(refused.body.error, 'validation_error');
  t.match(refused.body.message, /match_value/);
  // As if saved before goal regexes ran on RE2: stored, but never run (JavaScript's engine would spin for minutes).
  await sql`insert into goals (tenant_id, name, match_type, match_value, created_at, updated_at)
            values (${attacker.tenantId}, 'Legacy', 'regex', ${ISSUE_PATTERN}, now() - interval '1 day', now())`;
  for (const [i, pattern] of WORST_ALLOWED.entries()) {
    for (const [copy, prefix] of ['', 'x?', 'y?', 'w?'].entries()) {
      // Distinct patterns (each compiled and matched on its own), about the same cost.
      const res = await call(app, 'POST', '/goals', {
        token: attacker.token,
        body: { name: `Worst ${i}.${copy}`, match_type: 'regex', match_value: `${prefix}${pattern}` },
      });
      t.equal(res.status, 201, pattern);
    }
  }

  const longest = `https://shop.example/?q=${'a'.repeat(MAX_MATCHED_URL - 'https://shop.example/?q='.length)}`;
  t.equal(longest.length, MAX_MATCHED_URL);
  const own = await campaignSend(ctx, {
    tenantId: attacker.tenantId,
    body: `<html><body><a href="https://shop.example/?q=warm">w</a><a href="${longest}">x</a></body></html>`,
  });
  const other = await campaignSend(ctx, { tenantId: neighbour.tenantId });
  const earlier = await campaignSend(ctx, { tenantId: neighbour.tenantId });
  for (const f of [own, other, earlier]) await markDelivered(sql, f.sendId, new Date(Date.now() - 3_600_000));
  // A running recorder (its thread started and connected, the engine's code compiled by the JIT), as in a process
  // that has served hits before: the neighbour opened an earlier message, the attacker clicked a short link.
  t.equal((await get(earlier.open)).statusCode, 200);
  t.equal((await get(own.clicks[0]!)).statusCode, 302);
  await (ctx.hits as SpooledHitRecorder).idle();

  for (let i = 0; i < 3; i++) t.equal((await get(own.clicks[1]!)).statusCode, 302, 'the attacker clicks its own longest link');
  t.equal((await get(other.open)).statusCode, 200);
  const opens = await pollUntil("the neighbour's open to be recorded", async () => {
    const n = (await engagementEvents(sql, other.sendId, 'open')).length;
    return n > 0 ? n : undefined;
  });
  t.equal(opens, 1, "the neighbour's open is recorded, once");

  await (ctx.hits as SpooledHitRecorder).idle();
  t.equal((await engagementEvents(sql, own.sendId, 'click')).length, 4, "the attacker's clicks are recorded too");
});
