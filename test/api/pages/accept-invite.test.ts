// The /accept-invite page the team-invite e-mail links to: the form, the member it creates, used/unknown/conflicting invites, weak passwords, escaping,
// headers.
import { Writable } from 'node:stream';
import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { createLogger } from '../../../shared/kernel/log.js';
import { buildTestApp, call, registerTenant } from '../../helpers/app.js';
import { inviteMember } from '../../helpers/team.js';

const PASSWORD = 'Joined-via-page-42';

const getPage = (app: FastifyInstance, query: string) => app.inject({ method: 'GET', url: `/accept-invite${query}` });
const postPage = (app: FastifyInstance, fields: Record<string, string>) =>
  app.inject({
    method: 'POST',
    url: '/accept-invite',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(fields).toString(),
  });
const submit = (app: FastifyInstance, token: string, extra: Record<string, string> = {}) =>
  postPage(app, { token, password: PASSWORD, password_again: PASSWORD, ...extra });

const STRICT_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

t.test('the accept link opens a form carrying the token; posting it creates the member with the invited role', async (t) => {
  const lines: string[] = [];
  const log = createLogger(
    'info',
    new Writable({
      write: (chunk, _e, done) => {
        lines.push(String(chunk));
        done();
      },
    }),
  );
  const s = await buildTestApp(t, { log });
  const owner = await registerTenant(s.app);
  const inv = await inviteMember(s.app, owner.token, 'developer', 'casey@example.test');
  // Without a system sender the invite e-mail itself is logged (by design); the page requests come after it.
  const logged = lines.length;
  const url = new URL(inv.accept_url);
  t.equal(url.pathname, '/accept-invite', 'the link of the invite is this page');

  const page = await getPage(s.app, url.search);
  t.equal(page.statusCode, 200);
  t.match(page.headers, STRICT_HEADERS);
  t.match(page.body, /<html lang="en">/);
  t.match(page.body, /<h1>Join your team on Mailpath<\/h1>/);
  t.match(page.body, '<form method="post" action="accept-invite">');
  t.match(page.body, `<input type="hidden" name="token" value="${inv.token}">`);
  t.equal(page.body.split(inv.token).length, 2, 'the token appears once, in the hidden field');
  t.match(
    page.body,
    /<label for="first_name">First name \(optional\)<\/label>\n<input id="first_name" name="first_name" type="text" autocomplete="given-name"/,
  );
  t.match(page.body, /<label for="password">Password<\/label>/);
  t.match(page.body, /<label for="password_again">/);
  t.notMatch(page.body, /<script/);

  const res = await submit(s.app, inv.token, { first_name: ' Casey ' });
  t.equal(res.statusCode, 200);
  t.match(res.headers, STRICT_HEADERS);
  t.match(res.body, /<h1>Your account is ready<\/h1>/);
  t.notOk(res.body.includes(inv.token), 'the token is not echoed');
  t.notMatch(res.body, /eyJ/, 'no session token on the page');

  const members = await call(s.app, 'GET', '/team/members', { token: owner.token });
  t.match(
    members.body.data.items.find((m: { email: string }) => m.email === 'casey@example.test'),
    { role: 'developer', first_name: 'Casey' },
    'the member exists',
  );
  const login = await call(s.app, 'POST', '/auth/login', { body: { email: 'casey@example.test', password: PASSWORD } });
  t.equal(login.status, 200, 'and signs in with the chosen password');
  t.equal((await s.sql`select 1 from audit_events where action = 'team.invite_accepted'`).length, 1);
  t.notOk(
    lines.slice(logged).some((l) => l.includes(inv.token)),
    'no log line of the page requests holds the token',
  );

  const again = await submit(s.app, inv.token);
  t.equal(again.statusCode, 410, 'a used invite');
  t.match(again.headers, STRICT_HEADERS);
  t.match(again.body, /<h1>This invite can no longer be used<\/h1>/);
  t.match(again.body, /role="alert"/);
  t.notMatch(again.body, /<form/);
});

t.test('unknown, revoked and conflicting invites; broken links', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);

  const unknown = await submit(s.app, `mpi_${'A'.repeat(43)}`);
  t.equal(unknown.statusCode, 404);
  t.match(unknown.body, /<h1>This invite link is not valid<\/h1>/);

  const revoked = await inviteMember(s.app, owner.token, 'viewer');
  await call(s.app, 'DELETE', `/team/invites/${revoked.id}`, { token: owner.token });
  const res = await submit(s.app, revoked.token);
  t.equal(res.statusCode, 410, 'a revoked invite');

  const taken = await inviteMember(s.app, owner.token, 'viewer', 'taken@example.test');
  await registerTenant(s.app, { email: 'taken@example.test' });
  const conflict = await submit(s.app, taken.token);
  t.equal(conflict.statusCode, 409);
  t.match(conflict.body, /<h1>This address already has an account<\/h1>/);

  for (const query of ['', '?token=', '?token=a&token=b']) {
    const broken = await getPage(s.app, query);
    t.equal(broken.statusCode, 400, `GET ${query || '(no query)'}`);
    t.match(broken.body, 'This link is incomplete or damaged');
  }
  t.equal((await postPage(s.app, { password: PASSWORD, password_again: PASSWORD })).statusCode, 400, 'POST without a token');
});

t.test('a weak or mistyped password shows the form again, the first name kept and escaped; nothing is consumed', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app, { tenant_slug: 'acme-pages' });
  const inv = await inviteMember(s.app, owner.token, 'viewer', 'robin.page@example.test');
  const hostile = `<img src=x onerror="alert(1)">&'`;

  for (const [password, message] of [
    ['short1A', 'The password must be at least 10 characters.'],
    ['Acme-pages-2024!', 'The password must not contain your email or tenant name.'],
  ] as const) {
    const res = await submit(s.app, inv.token, { password, password_again: password, first_name: hostile });
    t.equal(res.statusCode, 422, message);
    t.match(res.headers, STRICT_HEADERS);
    t.match(res.body, message);
    t.match(res.body, 'value="&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;"', 'the first name is shown again, escaped');
    t.notMatch(res.body, /<img/);
    t.match(res.body, `<input type="hidden" name="token" value="${inv.token}">`);
  }
  const mistyped = await submit(s.app, inv.token, { password_again: `${PASSWORD}!` });
  t.equal(mistyped.statusCode, 422);
  t.match(mistyped.body, 'The two passwords differ');
  const longName = await submit(s.app, inv.token, { first_name: 'n'.repeat(101) });
  t.equal(longName.statusCode, 422);
  t.match(longName.body, 'The first name must be at most 100 characters');

  t.equal((await s.sql`select accepted_at from team_invites where id = ${inv.id}`)[0]!.accepted_at, null, 'nothing consumed');
  t.equal((await submit(s.app, inv.token, { first_name: hostile })).statusCode, 200, 'the invite then works');
  const [user] = await s.sql<{ first_name: string }[]>`select first_name from users where email = 'robin.page@example.test'`;
  t.equal(user!.first_name, `<img src=x onerror="alert(1)">&'`, 'stored as typed (escaping is for display)');
});
