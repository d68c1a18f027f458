// A campaign on the embedded backend (PGlite behind one connection, as a no-install start runs): sent, paused and resumed, cancelled — nothing waits on a
// second connection while a transaction is open.
import { rmSync } from 'node:fs';
import t from 'tap';
import { buildServices } from '../../../main/services.js';
import { runFanout, type FanoutOutcome } from '../../../shared/campaigns/fanout.js';
import { cancelCampaign, pauseCampaign, resumeCampaign, sendCampaign, type Caller } from '../../../shared/campaigns/lifecycle.js';
import { createCampaign, getCampaign } from '../../../shared/campaigns/service.js';
import { systemClock } from '../../../shared/kernel/clock.js';
import { loadConfig } from '../../../shared/config/index.js';
import { connect } from '../../../shared/db/connection.js';
import { startEmbeddedPostgres } from '../../../shared/db/embedded.js';
import { migrate } from '../../../shared/db/migrate.js';
import { startBoss } from '../../../shared/jobs/boss.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { testEnv } from '../../helpers/app.js';
import { addresses, CAMPAIGN_ENV, listOf } from '../../helpers/campaigns.js';
import { seededDataDir } from '../../helpers/embedded-data-dir.js';
import { verifiedSendingDomain } from '../../helpers/sending-domain.js';
import { insertTenant } from '../../helpers/tenant-rows.js';

const log = createLogger('silent');
const dataDir = await seededDataDir('mailpath-campaigns-embedded-');
const embedded = await startEmbeddedPostgres(dataDir, log);
// One connection, unprepared: as openDatabase connects to the embedded server.
const sql = connect(embedded.url, log, { max: 1, prepare: false });
await migrate(sql);
const config = loadConfig(testEnv(embedded.url, dataDir, CAMPAIGN_ENV));
const boss = await startBoss(sql, log, { supervise: false });
const ctx = await buildServices({ config, sql, log, boss, clock: systemClock });
t.teardown(async () => {
  await ctx.close();
  await boss.stop({ graceful: false, wait: true });
  await sql.end({ timeout: 5 });
  await embedded.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function drain(id: string): Promise<FanoutOutcome> {
  for (let i = 0; i < 50; i++) {
    const outcome = await runFanout(ctx, { campaign_id: id, slot: 0 });
    if (outcome !== 'continued') return outcome;
  }
  return 'continued';
}

t.test('send, pause, resume and cancel a campaign on PGlite', async (t) => {
  await sql`insert into plans (id, name, monthly_send_cap) values ('campaigns', 'Campaigns', 1000000) on conflict (id) do nothing`;
  const tenantId = await insertTenant(sql, 'campaigns');
  const domain = await verifiedSendingDomain(sql, ctx.vault, tenantId);
  const caller: Caller = { tenantId, actor: { type: 'system', id: null }, mode: 'live' };
  const { listId } = await listOf(sql, tenantId, addresses('e', 12));
  const body = {
    name: 'Embedded',
    list_id: listId,
    from_email: `news@${domain.name}`,
    subject: 'Hi {{ contact.email }}',
    body_html: '<p><a href="https://example.org/x">x</a></p>',
  };

  const first = await createCampaign(ctx, tenantId, caller.actor, body);
  t.match((await sendCampaign(ctx, caller, first.row.id, 'embedded-1')).answer, {
    campaign_id: first.row.id,
    status: 'sending',
    forecast: { recipients: 12, today: 12 },
  });
  t.equal(await drain(first.row.id), 'completed');
  const sent = await getCampaign(sql, tenantId, first.row.id);
  t.equal(sent.row.status, 'sent');
  t.equal(sent.counters.queued, 12);

  const second = await createCampaign(ctx, tenantId, caller.actor, body);
  await sendCampaign(ctx, caller, second.row.id);
  await pauseCampaign(ctx, caller, second.row.id);
  t.equal(await drain(second.row.id), 'nothing');
  await resumeCampaign(ctx, caller, second.row.id);
  t.equal(await drain(second.row.id), 'completed');

  const third = await createCampaign(ctx, tenantId, caller.actor, body);
  await sendCampaign(ctx, caller, third.row.id);
  await cancelCampaign(ctx, caller, third.row.id);
  t.equal(await drain(third.row.id), 'cancelled');
  const cancelled = await getCampaign(sql, tenantId, third.row.id);
  t.same([cancelled.row.status, cancelled.counters.targeted], ['cancelled', 0], 'cancelled before its recipients were fixed: none');
  const [sends] = await sql<{ n: number }[]>`select count(*)::int as n from sends where tenant_id = ${tenantId}`;
  t.equal(sends!.n, 24, 'one send per recipient of the two campaigns that went out');
});
