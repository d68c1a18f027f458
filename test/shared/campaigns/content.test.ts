// A campaign message's content: the template precedence, what refuses to send, Liquid per recipient (default, if, contact.email, custom_fields), the A/B
// subject, the preheader, and the bulk-sender headers with their signed token.
import { randomBytes, randomUUID } from 'node:crypto';
import t from 'tap';
import { effectiveContent, prepareContent, type CampaignRecipient, type MessageSettings } from '../../../shared/campaigns/content.js';
import { tenantFeedbackTag } from '../../../shared/campaigns/feedback-id.js';
import { composeMessage } from '../../helpers/inline-renderer.js';
import { readClickToken, readOpenToken } from '../../../shared/engagement/tracking/link-tokens.js';
import { uuidAt, verifyToken } from '../../../shared/engagement/tracking/tokens.js';
import { defaultUtmCampaign } from '../../../shared/engagement/tracking/utm.js';

const key = randomBytes(32);
const links = { key, publicUrl: new URL('https://mail.example.test:8443'), hostname: 'mx.mailpath.test' };
/** Tracking and UTM off unless a test turns them on, so bodies read back as rendered. */
const campaign = {
  id: randomUUID(),
  name: 'Spring Sale — 2026!',
  tenant_id: randomUUID(),
  ab_winner: null,
  track_opens: false,
  track_clicks: false,
  utm_tagging: false,
  utm_source: null,
  utm_medium: null,
  utm_campaign: null,
};

const empty = { subject: null, subject_b: null, preheader_text: null, body_html: null, body_text: null };

function recipient(over: Partial<CampaignRecipient> = {}): CampaignRecipient {
  return {
    sendId: randomUUID(),
    variant: null,
    email: 'ann@example.org',
    contact: { first_name: 'Ann', last_name: 'Lee', profile: { country: 'FR', city: 'Lyon' } },
    customFields: { plan: 'gold' },
    ...over,
  };
}

t.test("each part is the campaign's own when set, else the template's; subject_b and the preheader only ever the campaign's", async (t) => {
  const template = { subject: 'T subject', body_html: '<p>T</p>', body_text: 'T' };
  t.same(effectiveContent({ ...empty, subject: 'Own' }, template), {
    subject: 'Own',
    subject_b: null,
    preheader_text: null,
    body_html: '<p>T</p>',
    body_text: 'T',
  });
  t.same(effectiveContent({ ...empty, body_text: 'Own text', subject: '  ' }, template).subject, 'T subject', 'a blank subject is not set');
  t.same(effectiveContent({ ...empty, body_text: 'Own text' }, template).body_text, 'Own text');
  t.same(effectiveContent({ ...empty, subject: 'S', body_html: '<b>x</b>' }, null), { ...empty, subject: 'S', body_html: '<b>x</b>' });
  t.same(effectiveContent({ ...empty, subject_b: 'B', preheader_text: 'P' }, template).subject_b, 'B');
});

t.test('content that cannot be sent is refused with 422 naming the field', async (t) => {
  const cases: [Parameters<typeof prepareContent>[0], boolean, RegExp][] = [
    [{ ...empty, body_text: 'x' }, false, /^subject: is required/],
    [{ ...empty, subject: 'S' }, false, /^body_html: a campaign needs/],
    [{ ...empty, subject: 'S', body_text: 'x' }, true, /^subject_b: is required to send an A\/B test/],
    [{ ...empty, subject: 'S', subject_b: '{% if %}', body_text: 'x' }, true, /^subject_b: Liquid syntax error/],
    [{ ...empty, subject: 'S', preheader_text: '{{ x | nope }}', body_text: 'x' }, false, /^preheader_text: /],
    [{ ...empty, subject: 'S', body_html: '{% for %}' }, false, /^body_html: Liquid syntax error/],
  ];
  for (const [content, ab, message] of cases) t.throws(() => prepareContent(content, ab), { slug: 'validation_error', message }, String(message));
});

t.test('Liquid renders per recipient: default, if on a field, contact.email, custom_fields.<key>, profile columns', async (t) => {
  const content = prepareContent(
    {
      ...empty,
      subject: 'Hi {{ first_name | default: "there" }}',
      body_text: '{% if contact.country == "FR" %}Bonjour{% else %}Hello{% endif %} {{ contact.email }}, plan {{ custom_fields.plan }}, {{ contact.city }}',
      body_html: '<html><body class="x"><p>{{ contact.first_name }} &amp; {{ custom_fields.plan | default: "none" }}</p></body></html>',
      preheader_text: 'For {{ first_name }} <b>',
    },
    false,
  );
  const fr = await composeMessage({ content, campaign, links, recipient: recipient() });
  t.equal(fr.subject, 'Hi Ann');
  t.equal(fr.text, 'Bonjour ann@example.org, plan gold, Lyon');
  t.equal(
    fr.html,
    '<html><body class="x"><div style="display:none;max-height:0;overflow:hidden;mso-hide:all" aria-hidden="true">For Ann &lt;b&gt;</div><p>Ann &amp; ' +
      'gold</p></body></html>',
    'the preheader is the hidden first text of the body, escaped',
  );
  const other = await composeMessage({
    content,
    campaign,
    links,
    recipient: recipient({ email: 'bob@example.org', contact: { first_name: null, last_name: null, profile: { country: 'US' } }, customFields: {} }),
  });
  t.equal(other.subject, 'Hi there', 'default filter on a missing first name');
  t.equal(other.text, 'Hello bob@example.org, plan , ');
  t.match(other.html, /<p> &amp; none<\/p>/);
});

t.test('variant b and the remainder after b won get subject_b; a and the rest get the subject', async (t) => {
  const content = prepareContent({ ...empty, subject: 'A {{ first_name }}', subject_b: 'B {{ first_name }}', body_text: 'x' }, true);
  const subject = async (variant: 'a' | 'b' | null, winner: 'a' | 'b' | null) =>
    (await composeMessage({ content, campaign: { ...campaign, ab_winner: winner }, links, recipient: recipient({ variant }) })).subject;
  t.equal(await subject('a', null), 'A Ann');
  t.equal(await subject('b', null), 'B Ann');
  t.equal(await subject(null, null), 'A Ann');
  t.equal(await subject(null, 'b'), 'B Ann');
  t.equal(await subject(null, 'a'), 'A Ann');
  t.equal(await subject('a', 'b'), 'A Ann', 'the test portion keeps its own variant');
});

t.test('bulk headers: List-Unsubscribe (https and mailto, one signed token naming the send), one-click, Feedback-ID; unsubscribe_url in Liquid', async (t) => {
  const content = prepareContent({ ...empty, subject: 'S', body_html: '<a href="{{ unsubscribe_url }}">unsubscribe</a>' }, false);
  const r = recipient();
  const message = await composeMessage({ content, campaign, links, recipient: r });
  const match = /^<https:\/\/mail\.example\.test:8443\/u\/([A-Za-z0-9_.-]+)>, <mailto:u-([A-Za-z0-9_.-]+)@mx\.mailpath\.test>$/.exec(
    message.headers['List-Unsubscribe']!,
  );
  t.ok(match, String(message.headers['List-Unsubscribe']));
  t.equal(match![1], match![2], 'the same token in both');
  const payload = verifyToken(key, 'unsubscribe', match![1]!);
  t.ok(payload);
  t.equal(uuidAt(payload!), r.sendId, 'the token carries the send id');
  t.equal(verifyToken(key, 'click', match![1]!), undefined, 'and is good for nothing else');
  t.equal(message.headers['List-Unsubscribe-Post'], 'List-Unsubscribe=One-Click');
  t.equal(message.headers['Feedback-ID'], `${campaign.id}:${tenantFeedbackTag(key, campaign.tenant_id)}:campaign:mailpath`);
  t.equal(message.html, `<a href="${message.unsubscribeUrl}">unsubscribe</a>`);
  t.equal(message.unsubscribeUrl, `https://mail.example.test:8443/u/${match![1]}`);
});

t.test('a render that fails for one recipient is a 422 naming the part', async (t) => {
  const content = prepareContent({ ...empty, subject: '{{ first_name }}', body_text: 'x' }, false);
  await t.rejects(composeMessage({ content, campaign, links, recipient: recipient({ contact: { first_name: null, last_name: null, profile: {} } }) }), {
    slug: 'validation_error',
    message: /^subject: renders to an empty subject/,
  });
});

t.test('the HTML gets UTM parameters, click redirects and the open pixel as the campaign asks; the unsubscribe link stays as it is', async (t) => {
  const content = prepareContent(
    {
      ...empty,
      subject: 'S',
      body_html:
        '<html><body><a href="https://shop.example/sale?id=7#top">Sale</a> <a href="{{ unsubscribe_url }}">Leave</a> <a ' +
        'href="mailto:x@example.org">Mail</a></body></html>',
    },
    false,
  );
  const r = recipient();
  const tracked = await composeMessage({
    content,
    links,
    recipient: r,
    campaign: { ...campaign, track_opens: true, track_clicks: true, utm_tagging: true, utm_source: 'newsletter', utm_medium: 'email', utm_campaign: 'spring' },
  });
  const click = /href="https:\/\/mail\.example\.test:8443\/c\/([\w.-]+)"/.exec(tracked.html!);
  t.ok(click, 'the shop link goes through a click redirect');
  t.same(readClickToken(key, click![1]!), {
    sendId: r.sendId,
    url: 'https://shop.example/sale?id=7&utm_source=newsletter&utm_medium=email&utm_campaign=spring#top',
    links: 1,
    tenantId: campaign.tenant_id,
    interstitial: false,
  });
  // A test-mode campaign's or a sandbox tenant's message: its links answer a page rather than redirect.
  const simulated = await composeMessage({ content, links: { ...links, interstitial: true }, recipient: r, campaign: { ...campaign, track_clicks: true } });
  const simulatedClick = /href="https:\/\/mail\.example\.test:8443\/c\/([\w.-]+)"/.exec(simulated.html!);
  t.match(readClickToken(key, simulatedClick![1]!), { tenantId: campaign.tenant_id, interstitial: true });
  t.ok(tracked.html!.includes(`<a href="${tracked.unsubscribeUrl}">Leave</a>`), 'the unsubscribe link is untouched');
  t.ok(tracked.html!.includes('<a href="mailto:x@example.org">Mail</a>'));
  const pixel = /<img src="https:\/\/mail\.example\.test:8443\/o\/([\w.-]+)" width="1" height="1" alt=""><\/body>/.exec(tracked.html!);
  t.ok(pixel, 'the open pixel before </body>');
  t.equal(readOpenToken(key, pixel![1]!), r.sendId);

  const utmOnly = await composeMessage({ content, links, recipient: r, campaign: { ...campaign, utm_tagging: true, utm_source: 'news' } });
  t.match(
    utmOnly.html,
    /href="https:\/\/shop\.example\/sale\?id=7&amp;utm_source=news&amp;utm_medium=email&amp;utm_campaign=spring-sale-2026#top"/,
    'UTM without tracking: the link itself is tagged',
  );
  t.notMatch(utmOnly.html, /\/o\//);
  const plain = await composeMessage({ content, links, recipient: r, campaign });
  t.match(plain.html, /href="https:\/\/shop\.example\/sale\?id=7#top"/, 'neither: as rendered');
});

t.test("with utm_tagging, utm_campaign is always appended: the campaign's own, else its name as a slug, else its id", async (t) => {
  const content = prepareContent({ ...empty, subject: 'S', body_html: '<a href="https://shop.example/a">A</a>' }, false);
  const href = async (over: Partial<MessageSettings>) =>
    /href="([^"]+)"/.exec(
      (
        await composeMessage({
          content,
          links,
          recipient: recipient(),
          campaign: { ...campaign, utm_tagging: true, utm_source: 'news', utm_medium: 'email', ...over },
        })
      ).html!,
    )![1];
  t.equal(await href({}), 'https://shop.example/a?utm_source=news&amp;utm_medium=email&amp;utm_campaign=spring-sale-2026', "unset: the name's slug");
  t.equal(await href({ utm_campaign: 'spring' }), 'https://shop.example/a?utm_source=news&amp;utm_medium=email&amp;utm_campaign=spring', 'set: its own');
  t.equal(
    await href({ name: 'Été à Zoë — 東京 ガイド' }),
    `https://shop.example/a?utm_source=news&amp;utm_medium=email&amp;utm_campaign=${encodeURIComponent('ete-a-zoe-東京-ガイド')}`,
  );
  t.equal(
    await href({ name: '🎉 !!' }),
    `https://shop.example/a?utm_source=news&amp;utm_medium=email&amp;utm_campaign=${campaign.id}`,
    'no letter or digit: the id',
  );
  t.equal(
    await href({ utm_source: null, utm_medium: null }),
    'https://shop.example/a?utm_source=mailpath&amp;utm_medium=email&amp;utm_campaign=spring-sale-2026',
    'source and medium unset: the defaults',
  );
  t.equal(await href({ utm_tagging: false }), 'https://shop.example/a', 'without utm_tagging: nothing');
});

t.test('the utm_campaign slug of a name', async (t) => {
  const id = '0b9a3f1e-5d2c-4e8a-9f10-2b3c4d5e6f70';
  for (const [name, slug] of [
    ['Spring Sale — 2026!', 'spring-sale-2026'],
    ['  Weekly: Digest #4 ', 'weekly-digest-4'],
    ['ﬁnal Ⅳ', 'final-iv'],
    ['हिन्दी समाचार', 'हिन्दी-समाचार'],
    [`${'a'.repeat(99)} b`, 'a'.repeat(99)],
    ['---', id],
  ])
    t.equal(defaultUtmCampaign({ name: name!, id }), slug, JSON.stringify(name));
});
