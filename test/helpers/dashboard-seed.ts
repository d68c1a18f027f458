// Seeds a `mailpath dev` through its public API over HTTPS, as a customer would: register, a key, the domain
// <slug>.localhost (the dev DNS answers for it) verified, transactional mail the dev sink accepts, waited for until
// delivered, a workspace mailbox and mail handed to its MX as another server would; and the browser signed in through
// the sign-in page. For the dashboard's browser tests.
import type { Page } from 'playwright-core';
import { Agent, request } from 'undici';
import type { DevServer } from './dev-server.js';
import { RawSmtpClient } from './smtp-client.js';

// The dev server's certificate is self-signed.
const insecure = new Agent({ connect: { rejectUnauthorized: false } });

export interface ApiAnswer {
  status: number;
  body: { data?: unknown; error?: string; message?: string; [key: string]: unknown };
}

export async function callDev(dev: DevServer, method: 'GET' | 'POST', path: string, token?: string, body?: unknown): Promise<ApiAnswer> {
  const res = await request(`${dev.origin}/api/v1${path}`, {
    method,
    dispatcher: insecure,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? (JSON.parse(text) as ApiAnswer['body']) : {} };
}

async function must(answer: Promise<ApiAnswer>, what: string): Promise<Record<string, unknown>> {
  const res = await answer;
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as Record<string, unknown>;
}

export interface SeededTenant {
  slug: string;
  email: string;
  password: string;
  token: string;
  key: string;
  domain: string;
}

/** A tenant with a live key and a verified sending domain, ready to send. */
export async function seedTenant(dev: DevServer, name: string): Promise<SeededTenant> {
  const slug = `${name}-${Math.random().toString(36).slice(2, 8)}`;
  const email = `owner@${slug}.localhost`;
  const password = 'Correct-horse-42';
  const registered = await must(
    callDev(dev, 'POST', '/auth/register', undefined, { tenant_name: `${name} Inc`, tenant_slug: slug, email, password }),
    'register',
  );
  const token = registered['token'] as string;
  const key = (await must(callDev(dev, 'POST', '/api-keys', token, { name: 'seed' }), 'create a key'))['key'] as string;
  const domain = `${slug}.localhost`;
  const added = await must(callDev(dev, 'POST', '/domains', token, { name: domain }), 'add the domain');
  const verified = await must(callDev(dev, 'POST', `/domains/${added['id'] as string}/verify`, token), 'verify the domain');
  if (verified['can_send'] !== true) throw new Error(`the domain did not verify: ${JSON.stringify(verified)}`);
  return { slug, email, password, token, key, domain };
}

/** Sends one transactional message; answers its id. */
export async function sendMail(dev: DevServer, tenant: SeededTenant, to: string, subject: string): Promise<string> {
  const sent = await must(
    callDev(dev, 'POST', '/transactional/send', tenant.key, { to, from_email: `hello@${tenant.domain}`, subject, body_text: `${subject}.` }),
    'send',
  );
  return sent['message_id'] as string;
}

/** Waits (at most 60 s) until every send has reached `status`. */
export async function waitForStatus(dev: DevServer, tenant: SeededTenant, ids: string[], status: string): Promise<void> {
  for (let i = 0; i < 120; i++) {
    const statuses = await Promise.all(ids.map(async (id) => ((await callDev(dev, 'GET', `/sends/${id}`, tenant.key)).body.data as { status: string }).status));
    if (statuses.every((s) => s === status)) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`sends did not all become ${status} within 60 s`);
}

/** A provider's figures as GET /analytics/esp-scores answers them. */
export interface ProviderFigures {
  esp: string;
  sent: number;
  delivered: number;
  deferred: number;
}

/**
 * Runs the analytics-rollup worker now (as an operator can) until GET /analytics/esp-scores shows what the test
 * seeded (at most 30 runs): a delivery's or a deferral's event may land after the send's status a test waited for.
 */
export async function refreshRollups(dev: DevServer, tenant: SeededTenant, seeded: (providers: ProviderFigures[]) => boolean): Promise<void> {
  const admin = await must(callDev(dev, 'POST', '/auth/login', undefined, { email: 'admin@mailpath.local', password: 'Root-password-123' }), 'admin login');
  let providers: ProviderFigures[] = [];
  for (let run = 0; run < 30; run++) {
    await must(callDev(dev, 'POST', '/admin/workers/analytics-rollup/run-now', admin['token'] as string), 'run the rollup worker');
    providers = ((await must(callDev(dev, 'GET', '/analytics/esp-scores', tenant.token), 'the provider figures'))['items'] ?? []) as ProviderFigures[];
    if (seeded(providers)) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the rollups never showed what was seeded: ${JSON.stringify(providers)}`);
}

/** Signs the browser in through the sign-in page and waits for the overview. */
export async function signIn(page: Page, dev: DevServer, tenant: SeededTenant): Promise<void> {
  await page.goto(`${dev.origin}/app/sign-in`);
  await page.getByLabel('Email').fill(tenant.email);
  await page.getByLabel('Password').fill(tenant.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${dev.origin}/app/`);
}

/** A workspace mailbox at the tenant's domain (`local@domain`); answers its id. */
export async function createMailbox(dev: DevServer, tenant: SeededTenant, local: string): Promise<string> {
  const made = await must(callDev(dev, 'POST', '/mail/mailboxes', tenant.token, { address: `${local}@${tenant.domain}` }), 'create a mailbox');
  return made['id'] as string;
}

/** Hands one message (its header and body, CRLF line ends, no line starting with a dot) to Mailpath's MX. */
export async function mailToMx(dev: DevServer, from: string, to: string, message: string): Promise<void> {
  const { client } = await RawSmtpClient.open(dev.ports.mx);
  await client.command('EHLO sender.example');
  await client.command(`MAIL FROM:<${from}>`);
  await client.command(`RCPT TO:<${to}>`);
  await client.command('DATA');
  const reply = await client.command(`${message}\r\n.`);
  if (reply.code !== 250) throw new Error(`the MX refused the message: ${reply.code} ${reply.text}`);
  await client.command('QUIT');
}

/** Waits (at most 20 s) until the mailbox holds `count` messages; answers their ids, newest first. */
export async function waitForMessages(dev: DevServer, tenant: SeededTenant, mailboxId: string, count: number): Promise<string[]> {
  for (let i = 0; i < 80; i++) {
    const listed = await callDev(dev, 'GET', `/mail/messages?mailbox_id=${mailboxId}&limit=50`, tenant.token);
    const items = (listed.body.data ?? []) as { id: string }[];
    if (items.length >= count) return items.map((m) => m.id);
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the mailbox did not hold ${count} messages within 20 s`);
}
