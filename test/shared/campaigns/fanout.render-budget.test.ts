// A campaign whose renders exceed the render budget is paused with a reason the tenant reads; its recipients are left pending (not skipped, no sends, no
// quota), another tenant is not held up, and resuming renders them again.
import t from 'tap';
import { call } from '../../helpers/app.js';
import { addresses, campaignApp, createCampaign, drain, listOf, readCampaign, sender, sendNow, sendsPerRecipient } from '../../helpers/campaigns.js';

const s = await campaignApp(t);
const { sql } = s;

/** 25 million loop turns over an array the template builds itself: each render stops at its part's 500 ms limit. */
const WORST = `{% assign xs = "${'x'.repeat(5000)}" | split: "" %}{% for i in xs %}{% for j in xs %}{{ j }}{% endfor %}{% endfor %}`;

t.test(
  'a worst-case campaign of A is paused with the reason, its recipients not skipped; B is not held up; resuming sends them',
  { timeout: 180_000 },
  async (t) => {
    const a = await sender(s);
    const b = await sender(s);
    const { listId } = await listOf(sql, a.tenant.tenantId, addresses('heavy', 40));
    // Its body from a stored template: a paused campaign cannot be changed, its template can.
    const template = await call(s.app, 'POST', '/templates', { token: a.tenant.token, body: { name: 'Heavy', subject: 'Hello', body_text: WORST } });
    t.equal(template.status, 201);
    const heavy = await createCampaign(s, a.tenant.token, { list_id: listId, from_email: a.from, body_text: null, template_id: template.body.data.id });
    const bList = await listOf(sql, b.tenant.tenantId, addresses('light', 6));
    const light = await createCampaign(s, b.tenant.token, { list_id: bList.listId, from_email: b.from, subject: 'Hi {{ first_name | default: "you" }}' });

    await sendNow(s, a.tenant.token, heavy.id);
    let paused = false;
    const running = drain(s, heavy.id).then((outcome) => {
      paused = true;
      return outcome;
    });
    // B's API meanwhile: the same process, whose event loop never renders A's template.
    for (let i = 0; i < 5; i++) t.equal((await call(s.app, 'GET', '/whoami', { token: b.tenant.token })).status, 200);
    t.notOk(paused, "B's five /whoami calls were all answered while A's fan-out was still rendering");
    t.equal(await running, 'paused', 'the fan-out paused the campaign');

    const view = await readCampaign(s, a.tenant.token, heavy.id);
    t.equal(view.status, 'paused');
    t.equal(view.waiting_reason, 'render_budget');
    t.match(
      view.paused_reason,
      new RegExp(
        /^rendering its messages exceeded the render budget \(5000 ms per batch of recipients; each part at most 500 ms\): /.source +
          /body_text: could not render at line \d+, column \d+: template render limit exceeded \(500 ms\)\. /.source +
          /Resuming renders the recipients left again \(a stored template it uses may be made cheaper first\), or cancel it$/.source,
      ),
    );
    t.equal(view.progress.skipped_total, 0, 'no recipient skipped');
    t.equal(view.progress.skipped.invalid, 0);
    t.equal(view.progress.queued, 0);
    t.equal((await sendsPerRecipient(sql, heavy.id)).size, 0, 'nothing sent, so no quota used');
    const [pending] = await sql<{ n: number }[]>`select count(*)::int as n from campaign_recipients where campaign_id = ${heavy.id} and status = 'pending'`;
    t.equal(pending!.n, 40, 'every recipient left pending');

    await sendNow(s, b.tenant.token, light.id);
    t.equal(await drain(s, light.id), 'completed', "B's campaign is sent");
    t.equal((await sendsPerRecipient(sql, light.id)).size, 6);

    // Resumed as it is, it pauses again on the same budget; made cheaper and resumed, it is sent to everyone.
    t.equal((await call(s.app, 'POST', `/campaigns/${heavy.id}/resume`, { token: a.tenant.token })).status, 200);
    t.equal((await readCampaign(s, a.tenant.token, heavy.id)).paused_reason, null, 'the reason is cleared on resume');
    t.equal(await drain(s, heavy.id), 'paused', 'resumed unchanged: paused again');
    const patched = await call(s.app, 'PATCH', `/templates/${template.body.data.id}`, {
      token: a.tenant.token,
      body: { body_text: 'Cheap {{ contact.email }}' },
    });
    t.equal(patched.status, 200, JSON.stringify(patched.body));
    t.equal((await call(s.app, 'POST', `/campaigns/${heavy.id}/resume`, { token: a.tenant.token })).status, 200);
    t.equal(await drain(s, heavy.id), 'completed');
    const done = await readCampaign(s, a.tenant.token, heavy.id);
    t.equal(done.status, 'sent');
    t.equal(done.progress.queued, 40);
    t.equal(done.progress.skipped_total, 0);
    t.equal((await sendsPerRecipient(sql, heavy.id)).size, 40, 'every recipient sent once');
  },
);
