// The delivery path counts refusals per mailbox provider and raises an automatic suppression when a provider blocks the tenant's mail, against a real SMTP
// sink.
import t from 'tap';
import { BLOCK_THRESHOLD } from '../../../../shared/engagement/analytics/esp-suppressions.js';
import { deliveryFixture } from '../../../helpers/delivery-fixture.js';
import { startSmtpSink } from '../../../helpers/smtp-sink.js';

const sink = await startSmtpSink(t);
const { sql, sender, send, settled, outbound } = await deliveryFixture(t, { env: { MAILPATH_OUTBOUND_RELAY: sink.address } });

t.test('ten policy refusals from one provider raise one suppression; greylisting and unknown providers count for nothing', async (t) => {
  const from = await sender();
  await outbound(t);
  // Greylisting (4.7.1 without block wording) at gmail, and a block at a domain of no known provider.
  sink.answerFor('grey@gmail.com', { code: 451, text: '4.7.1 Greylisted, try again later' });
  sink.answerFor('x@dest.example', { code: 550, text: '5.7.1 Message blocked' });
  const grey = await send(from, { to: 'grey@gmail.com' });
  const unknown = await send(from, { to: 'x@dest.example' });
  await settled(grey.id, ['deferred']);
  await settled(unknown.id, ['bounced']);
  t.same(await sql`select provider, blocks, deferrals from esp_refusal_windows where tenant_id = ${from.tenant.id}`, [
    { provider: 'gmail', blocks: 0, deferrals: 1 },
  ]);

  const ids: string[] = [];
  for (let i = 0; i < BLOCK_THRESHOLD + 2; i++) {
    const to = `user${i}@gmail.com`;
    sink.answerFor(to, {
      code: 550,
      text:
        '5.7.1 [203.0.113.9] Our system has detected that this message is likely unsolicited mail. To reduce the amount of spam this message has been ' +
        'blocked.',
    });
    ids.push((await send(from, { to })).id);
  }
  for (const id of ids) await settled(id, ['bounced']);

  const rows = await sql`select provider, reason, refusals, window_minutes, sample_reply, expires_at - triggered_at as lasts from esp_suppressions
              where tenant_id = ${from.tenant.id}`;
  t.equal(rows.length, 1, 'one suppression, however many refusals follow');
  t.match(rows[0], { provider: 'gmail', reason: 'blocked', refusals: BLOCK_THRESHOLD, window_minutes: 15, sample_reply: /^550 5\.7\.1 .*blocked/ });
  const [window] = await sql`select sum(blocks)::int as blocks from esp_refusal_windows where tenant_id = ${from.tenant.id} and provider = 'gmail'`;
  t.equal(window!['blocks'], BLOCK_THRESHOLD + 2);
});
