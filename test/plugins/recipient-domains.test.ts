// Plugin recipient-domains: which recipients are ours (tenant domains with a verified MX, mailboxes, bounce and feedback-loop addresses) and the refusal of
// everything else.
import t from 'tap';
import { createLogger } from '../../shared/kernel/log.js';
import { bounceAddress } from '../../shared/sending/outbound-log/verp.js';
import recipientDomains from '../../plugins/recipient-domains.js';
import type { PhaseContexts, Recipient } from '../../mta/hooks/phases.js';
import { MX_HOST, startTestMx, tenantDomain } from '../mta/inbound/fixtures.js';

const { deps, sql } = await startTestMx(t);
const plugin = recipientDomains(deps);
const session = {
  id: 's',
  remoteAddress: '127.0.0.1',
  remotePort: 1,
  clientHostname: '[127.0.0.1]',
  secure: false,
  helo: 'c.example',
  protocol: 'ESMTP',
  log: createLogger('silent'),
};

/** Runs the plugin's RCPT handler for one address; returns the decision and the route it set. */
async function rcpt(address: string, sourceRoute?: string) {
  const recipient: Recipient = { address, sourceRoute };
  const ctx: PhaseContexts['rcpt'] = {
    session,
    transaction: { id: 'tx', mailFrom: 's@sender.example', mailParams: {}, recipients: [], headers: [] },
    recipient,
  };
  const decision = await plugin.hooks.rcpt!(ctx, new AbortController().signal);
  return { decision, route: recipient.route };
}

const RELAY_DENIED = { kind: 'reject', code: 550, enhanced: '5.7.1' };
const NO_SUCH_USER = { kind: 'reject', code: 550, enhanced: '5.1.1' };

t.test('a tenant domain with a verified MX and an enabled webhook: any address there goes to the webhook', async (t) => {
  const d = await tenantDomain(sql);
  t.same(await rcpt(`anyone@${d.name}`), { decision: { kind: 'accept' }, route: { kind: 'tenant', tenantId: d.tenantId, mailboxId: null, webhook: true } });
});

t.test('a verified domain without a usable webhook takes only its mailboxes: other addresses are 550 5.1.1', async (t) => {
  for (const webhook of ['disabled', 'no-url', 'none'] as const) {
    const d = await tenantDomain(sql, { webhook, mailboxes: ['ann'] });
    t.match(await rcpt(`bob@${d.name}`), { decision: NO_SUCH_USER, route: undefined }, `webhook ${webhook}: unknown user`);
    t.same(
      (await rcpt(`ann@${d.name}`)).route,
      { kind: 'tenant', tenantId: d.tenantId, mailboxId: d.mailboxIds['ann'], webhook: false },
      `webhook ${webhook}: the mailbox`,
    );
  }
});

t.test('a mailbox at a verified domain with the webhook on gets both; the address is matched without case', async (t) => {
  const d = await tenantDomain(sql, { mailboxes: ['ann'] });
  t.same((await rcpt(`ANN@${d.name}`)).route, { kind: 'tenant', tenantId: d.tenantId, mailboxId: d.mailboxIds['ann'], webhook: true });
});

t.test('a workspace mailbox receives before its domain MX is verified; the webhook does not', async (t) => {
  const d = await tenantDomain(sql, { mxVerified: false, mailboxes: ['ann'] });
  t.same(await rcpt(`ann@${d.name}`), {
    decision: { kind: 'accept' },
    route: { kind: 'tenant', tenantId: d.tenantId, mailboxId: d.mailboxIds['ann'], webhook: false },
  });
  t.match(await rcpt(`other@${d.name}`), { decision: RELAY_DENIED, route: undefined }, 'other addresses of an unverified domain are not ours');
});

t.test('only the claim that owns a name receives: a pending claim of it, even with the same MX verified, gets nothing', async (t) => {
  const name = 'claimed-twice.example';
  const squatter = await tenantDomain(sql, { name, owned: false });
  t.match(await rcpt(`anyone@${name}`), { decision: RELAY_DENIED, route: undefined }, 'a name only claimed (MX verified, not owned) is not ours');
  const owner = await tenantDomain(sql, { name });
  t.not(owner.tenantId, squatter.tenantId);
  t.same(
    await rcpt(`anyone@${name}`),
    { decision: { kind: 'accept' }, route: { kind: 'tenant', tenantId: owner.tenantId, mailboxId: null, webhook: true } },
    'the owner, and only it',
  );
});

t.test('foreign domains and IP literals are relay attempts: 550 5.7.1', async (t) => {
  for (const address of ['someone@gmail.example', 'x@[127.0.0.1]', `x@sub.${(await tenantDomain(sql)).name}`]) {
    t.match(await rcpt(address), { decision: RELAY_DENIED, route: undefined }, address);
  }
});

t.test('relay tricks are refused even at our own domains: %-hack, bang path, quoted @, source route', async (t) => {
  const d = await tenantDomain(sql, { mailboxes: ['user'] });
  for (const address of [
    `user%other.example@${d.name}`,
    `other.example!user@${d.name}`,
    `"user@other.example"@${d.name}`,
    `user%other.example@${MX_HOST}`,
    `fbl%x@${MX_HOST}`,
  ]) {
    t.match(await rcpt(address), { decision: RELAY_DENIED, route: undefined }, address);
  }
  t.match(
    await rcpt(`user@${d.name}`, '@relay.example'),
    { decision: { ...RELAY_DENIED, text: /source route/ }, route: undefined },
    'a source route before a valid mailbox',
  );
});

t.test('our own addresses: signed VERP bounce addresses and the feedback-loop address are bounce recipients', async (t) => {
  const sendId = '6f1c2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b';
  const verp = bounceAddress(deps.verpKey, sendId, MX_HOST);
  t.same(await rcpt(verp), { decision: { kind: 'accept' }, route: { kind: 'bounce', sendId } });
  t.same((await rcpt(verp.toUpperCase().replace(MX_HOST.toUpperCase(), MX_HOST))).route, { kind: 'bounce', sendId }, 'in upper case too');
  t.same(await rcpt(`fbl@${MX_HOST}`), { decision: { kind: 'accept' }, route: { kind: 'bounce', sendId: null } });
  t.same((await rcpt(`FBL@${MX_HOST}`)).route, { kind: 'bounce', sendId: null });
  const forged = verp.replace(/-[0-9a-f]{10}@/, '-0000000000@');
  t.match(await rcpt(forged), { decision: NO_SUCH_USER, route: undefined }, 'a VERP address with a wrong signature');
  t.match(await rcpt(`abuse@${MX_HOST}`), { decision: NO_SUCH_USER }, 'other local parts of our host');
  t.match(await rcpt(verp.replace(MX_HOST, 'other.example')), { decision: RELAY_DENIED }, 'a VERP-looking address at another domain is not ours');
});

t.test('postmaster (RFC 5321 §4.5.1), in any case, without a domain, at our host and at a served domain that takes no mail for it: bounce mail', async (t) => {
  const postmaster = { decision: { kind: 'accept' }, route: { kind: 'bounce', sendId: null } };
  for (const address of ['postmaster', 'Postmaster', 'POSTMASTER', `postmaster@${MX_HOST}`, `PostMaster@${MX_HOST}`])
    t.same(await rcpt(address), postmaster, address);
  const quiet = await tenantDomain(sql, { webhook: 'disabled', mailboxes: ['ann'] });
  t.same(await rcpt(`postmaster@${quiet.name}`), postmaster, 'a verified domain whose webhook is off');
  const own = await tenantDomain(sql, { webhook: 'disabled', mailboxes: ['postmaster'] });
  const ownMailbox = { kind: 'tenant', tenantId: own.tenantId, mailboxId: own.mailboxIds['postmaster'], webhook: false };
  t.same((await rcpt(`postmaster@${own.name}`)).route, ownMailbox, 'its own postmaster mailbox wins');
  const hooked = await tenantDomain(sql);
  t.same((await rcpt(`postmaster@${hooked.name}`)).route, { kind: 'tenant', tenantId: hooked.tenantId, mailboxId: null, webhook: true }, 'its webhook wins');
  const unverified = await tenantDomain(sql, { mxVerified: false, webhook: 'disabled' });
  t.match(await rcpt(`postmaster@${unverified.name}`), { decision: RELAY_DENIED }, 'a domain we do not serve (MX not verified) is not ours');
  t.match(await rcpt('postmaster@gmail.example'), { decision: RELAY_DENIED }, 'nor a foreign one');
  for (const address of ['abuse', 'postmaster.x', 'x-postmaster'])
    t.match(await rcpt(address), { decision: NO_SUCH_USER }, `${address}: no other domainless address`);
  t.match(await rcpt('postmaster', '@relay.example'), { decision: RELAY_DENIED }, 'a source route before it is still refused');
});

t.test('nothing is cached: a change to a domain, mailbox or webhook is seen at the next RCPT', async (t) => {
  const d = await tenantDomain(sql, { webhook: 'disabled' });
  t.match(await rcpt(`x@${d.name}`), { decision: NO_SUCH_USER });
  await sql`update inbound_webhooks set enabled = true where tenant_id = ${d.tenantId}`;
  t.match(await rcpt(`x@${d.name}`), { decision: { kind: 'accept' } }, 'webhook enabled');
  await sql`update domain_records set verified = false where domain_id = ${d.domainId} and kind = 'mx'`;
  t.match(await rcpt(`x@${d.name}`), { decision: RELAY_DENIED }, 'MX no longer verified');
  await sql`insert into mailboxes (id, tenant_id, domain_id, address, created_at, updated_at)
            values (gen_random_uuid(), ${d.tenantId}, ${d.domainId}, ${`x@${d.name}`}, now(), now())`;
  t.match(await rcpt(`x@${d.name}`), { decision: { kind: 'accept' }, route: { mailboxId: String } }, 'a mailbox created');
  await sql`delete from domains where id = ${d.domainId}`;
  t.match(await rcpt(`x@${d.name}`), { decision: RELAY_DENIED }, 'the domain deleted (its mailboxes with it)');
});
