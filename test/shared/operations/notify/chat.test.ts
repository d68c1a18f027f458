// The chat notifier: logged only without MAILPATH_CHAT_WEBHOOK_URL; queued in the caller's transaction (gone with a rollback); POSTed as JSON {text} to a
// real receiver; a failed POST is retried by pg-boss.
import t from 'tap';
import { Writable } from 'node:stream';
import pino from 'pino';
import { postChat, startChatNotifier } from '../../../../jobs/chat-notifier.js';
import { CHAT_JOBS, notifyChat } from '../../../../shared/operations/notify/chat.js';
import { buildTestApp } from '../../../helpers/app.js';
import { startRogueHttp, type RogueHttpMode } from '../../../helpers/rogue-http.js';
import { pollUntil } from '../../../helpers/smtp-sink.js';
import { startWebhookReceiver } from '../../../helpers/webhook-receiver.js';

t.test('without a webhook: logged, nothing queued', async (t) => {
  const lines: string[] = [];
  const log = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => void (lines.push(String(chunk)), done()) }));
  const { ctx, sql } = await buildTestApp(t);
  t.equal(await notifyChat({ ...ctx, log }, sql, 'worker x is failing'), 'logged');
  t.equal((await sql`select 1 from pgboss.job where name = ${CHAT_JOBS}`).length, 0);
  t.match(JSON.parse(lines.at(-1)!), { level: 40, chat: 'worker x is failing', msg: /MAILPATH_CHAT_WEBHOOK_URL is not set/ });
});

t.test('with a webhook: queued in the transaction, POSTed as {text}, retried after a failure', async (t) => {
  const chat = await startWebhookReceiver(t);
  const { ctx, sql } = await buildTestApp(t, { env: { MAILPATH_CHAT_WEBHOOK_URL: chat.url, MAILPATH_CONFIG__NOTIFY__CHAT__RETRY_DELAY_SECONDS: '1' } });
  await sql
    .begin(async (tx) => {
      t.equal(await notifyChat(ctx, tx, 'rolled back'), 'queued');
      throw new Error('rollback');
    })
    .catch(() => undefined);
  t.equal((await sql`select 1 from pgboss.job where name = ${CHAT_JOBS}`).length, 0, 'a rolled-back notification is never sent');

  chat.answerNext({ status: 500, body: 'busy' });
  await notifyChat(ctx, sql, 'worker y is failing');
  const notifier = await startChatNotifier(ctx);
  t.teardown(() => notifier.stop());
  const requests = await pollUntil('a second POST after the 500', () => (chat.requests.length >= 2 ? chat.requests : undefined), 20_000);
  for (const r of requests) {
    t.equal(r.method, 'POST');
    t.same(JSON.parse(r.body.toString()), { text: 'worker y is failing' });
  }
  const state = await pollUntil('the job completed', async () => {
    const [job] = await sql<{ state: string; retry_count: number }[]>`select state, retry_count from pgboss.job where name = ${CHAT_JOBS}`;
    return job?.state === 'completed' ? job : undefined;
  });
  t.equal(state.retry_count, 1, 'one retry');
});

t.test('postChat: a non-2xx answer and a receiver that never answers are failures', async (t) => {
  const chat = await startWebhookReceiver(t);
  chat.answerNext({ status: 404 });
  await t.rejects(postChat(chat.url, 'x', 2000), /answered 404/);
  chat.answerNext({ hang: true });
  await t.rejects(postChat(chat.url, 'x', 300));
  t.equal(await postChat(chat.url, 'x', 2000), 200);
});

t.test('postChat against misbehaving chats: each ends within its timeout (a success or an error), the connection closed', async (t) => {
  const cases: [RogueHttpMode, number, 'ok' | RegExp][] = [
    ['drip-head', 200, /abort|timeout/i],
    // A 2xx whose body drips or never ends is a success all the same: only the status counts.
    ['drip-body', 200, 'ok'],
    ['drip-body', 500, /answered 500/],
    ['reset-mid-body', 200, 'ok'],
    ['endless-head', 200, /header/i],
    ['endless-body', 200, 'ok'],
    ['garbage', 200, /./],
  ];
  for (const [mode, status, expected] of cases) {
    const rogue = await startRogueHttp(t, mode, status);
    const outcome = await postChat(rogue.url, 'x', 1000).then(
      (code) => ({ code }),
      (err: Error) => ({ error: err.message }),
    );
    if (expected === 'ok') t.same(outcome, { code: 200 }, `${mode} ${status}: a success`);
    else t.match(outcome, { error: expected }, `${mode} ${status}: ${JSON.stringify(outcome)}`);
    await rogue.allClosed();
  }
});
