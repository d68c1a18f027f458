// Tracking planned on the template writes exactly the message that decorating each rendered message writes, and is
// declined wherever Liquid could change the links (links in blocks, Liquid in hrefs, tags or comments, `| raw`).
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { prepareContent, trackedContent, type CampaignRecipient, type MessageSettings } from '../../../../shared/campaigns/content.js';
import { trackTemplate } from '../../../../shared/engagement/tracking/template-links.js';
import { composeMessage } from '../../../helpers/inline-renderer.js';

const links = { key: Buffer.alloc(32, 9), publicUrl: new URL('https://mail.example.test:8443'), hostname: 'mx.example.test' };
const settings = (o: Partial<MessageSettings> = {}): MessageSettings => ({
  id: randomUUID(),
  name: 'Spring news',
  tenant_id: randomUUID(),
  ab_winner: null,
  track_opens: true,
  track_clicks: true,
  utm_tagging: true,
  utm_source: 'news',
  utm_medium: 'email',
  utm_campaign: null,
  ...o,
});
const empty = { subject: 'S', subject_b: null, preheader_text: 'Pre {{ contact.first_name }}', body_text: null };

function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

const recipientWith = (firstName: string | null, plan: string): CampaignRecipient => ({
  sendId: randomUUID(),
  variant: null,
  email: 'ann@example.org',
  contact: { first_name: firstName, last_name: null, profile: {} },
  customFields: { plan, color: 'red' },
});

t.test('the planned template renders the decorated message, byte for byte, over random templates', async (t) => {
  const random = seeded(3);
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!;
  const pieces = [
    '<p>',
    '</p>',
    'text ',
    ' ',
    '\n',
    '<a href="https://shop.test/x?a=1">Shop</a>',
    "<a href='http://y.test/'>Y</a>",
    '<a href=https://z.test/u>Z</a>',
    '<a href="mailto:a@b.test">M</a>',
    '<a href="/rel">R</a>',
    '<a href="{{ unsubscribe_url }}">Leave</a>',
    '<a href="https://shop.test/{{ contact.first_name }}">Dyn</a>',
    '<area href="https://area.test/">',
    '<!--[if mso]><v:roundrect href="https://mso.test/"></v:roundrect><![endif]-->',
    '<!-- note -->',
    '</body>',
    '<body>',
    '<body class="b">',
    '<html>',
    '<script>var a = "<a href=x>";</script>',
    '&amp;',
    '<',
    '<!',
    '-',
    '{{ contact.first_name }}',
    '{{- contact.first_name -}}',
    '{{ custom_fields.plan | default: "x" }}',
    '{% if custom_fields.plan == "pro" %}',
    '{% endif %}',
    '{% for i in (1..2) %}',
    '{% endfor %}',
    '{% assign x = 1 %}',
    '{{ contact.first_name | raw }}',
    '{% comment %}',
    '{% endcomment %}',
    '{% cycle "a", "b" %}',
    '<img alt="{{ contact.first_name }}" src="https://img.test/i.png">',
    "<td style='color:{{ custom_fields.color }}'>",
    '<a title="{{ contact.first_name }}" href="https://t.test/">T</a>',
    '<a href="https://shop.test/x?a=1">Again</a>',
    '<a href="https://mail.example.test:8443/u/abc">Ours</a>',
    '<a href="https://q.test/?utm_source=keep">Q</a>',
  ];
  const names = ['Ann', null, 'a', '<b>', '[if mso]>', '" onclick="x', 'https://evil.test/', '--', '&amp;'];
  let eligible = 0;
  let compared = 0;
  const differing: string[] = [];
  for (let i = 0; i < 1500; i++) {
    const source = `<html><body>${Array.from({ length: 1 + Math.floor(random() * 14) }, () => pick(pieces)).join('')}</body></html>`;
    let content;
    try {
      content = prepareContent({ ...empty, body_html: source }, false);
    } catch {
      continue; // not valid Liquid
    }
    const campaign = settings(pick([{}, { track_clicks: false }, { track_opens: false }, { utm_tagging: false }, { track_clicks: false, track_opens: false }]));
    const tracked = trackedContent(content, campaign, links);
    if (!tracked.tracked) continue;
    eligible++;
    for (let n = 0; n < 3; n++) {
      const recipient = recipientWith(pick(names), pick(['pro', 'free']));
      let slow: string | undefined;
      try {
        slow = (await composeMessage({ content, campaign, links, recipient })).html;
      } catch {
        continue; // a render error (e.g. a filter on null): the same for both
      }
      const fast = (await composeMessage({ content: tracked, campaign, links, recipient })).html;
      compared++;
      if (fast !== slow) differing.push(JSON.stringify({ source, name: recipient.contact.first_name, fast, slow }));
    }
  }
  t.ok(eligible > 300, `the plan was made for ${eligible} of 1500 templates`);
  t.ok(compared > 900, `${compared} messages compared`);
  t.same(differing.slice(0, 3), [], 'no message differs');
});

t.test('declined where Liquid could change the links', async (t) => {
  const plan = (source: string) => trackTemplate(source, { publicUrl: links.publicUrl, trackOpens: true, trackClicks: true });
  t.ok(
    plan('<body><p>Hi {{ contact.first_name }}</p><a href="https://a.test/">A</a> <a href="{{ unsubscribe_url }}">U</a></body>'),
    'text output and the unsubscribe link: planned',
  );
  t.ok(plan('<body>{% if x %}<p>no link</p>{% endif %}<a href="https://a.test/">A</a></body>'), 'a block without links: planned');
  const declined: [string, string][] = [
    ['{% if x %}<a href="https://a.test/">A</a>{% endif %}', 'a link in a block'],
    ['<a href="https://a.test/{{ contact.id }}">A</a>', 'Liquid in an href'],
    ['<a {% if x %}href="https://a.test/"{% endif %}>A</a>', 'a Liquid tag inside an HTML tag'],
    ['<{{ t }} href="https://a.test/">A</a>', 'Liquid right after <'],
    ['<a {{ attrs }}>A</a>', 'Liquid output among attributes'],
    ['<a title="{{ a | default: "x" }}" href="https://a.test/">A</a>', 'an output holding the quote it sits in'],
    ['<!-- {{ x }} --><a href="https://a.test/">A</a>', 'Liquid in a comment'],
    ['{{ x | raw }}<a href="https://a.test/">A</a>', 'an unescaped output'],
    ['{% raw %}{{ x }}{% endraw %}<a href="https://a.test/">A</a>', 'raw'],
    ['{% cycle "<a href=x>", "b" %}', 'a tag that writes'],
  ];
  for (const [source, why] of declined) t.equal(plan(`<body>${source}</body>`), undefined, why);
  t.equal(plan('<body><a href="https://a.test/">A</a>{% if x %}</body>{% endif %}'), undefined, "the pixel's </body> in a block");
  t.equal(
    trackTemplate('<a href="https://a.test/">A</a>', { publicUrl: new URL('https://x.test/a&b/'), trackOpens: true, trackClicks: true }),
    undefined,
    'a public URL that would need escaping',
  );
  t.equal(
    trackTemplate('<a href="https://a.test/">A</a>', { publicUrl: links.publicUrl, trackOpens: false, trackClicks: false }),
    undefined,
    'nothing to track',
  );
});
