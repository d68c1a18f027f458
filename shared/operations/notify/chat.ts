// Operator notifications to the chat webhook (MAILPATH_CHAT_WEBHOOK_URL, Slack-compatible JSON {text}): queued in the caller's transaction, POSTed by a queue worker with pg-boss retries, only logged when no webhook is set.
import type { Config } from '../../config/index.js';
import type { Queryable, Sql } from '../../db/connection.js';
import { startBatchWorker, type RunningBatchWorker } from '../../jobs/batch-worker.js';
import { bossDb, createJobQueue, type Boss } from '../../jobs/boss.js';
import type { Logger } from '../../kernel/log.js';

/** One job per notification. */
export const CHAT_JOBS = 'notify.chat';

export interface ChatJob {
  text: string;
}

export interface ChatDeps {
  boss: Boss;
  config: Pick<Config, 'chatWebhookUrl' | 'notify'>;
  log: Logger;
}

/**
 * Creates the queue (idempotent). pg-boss keeps the retries (retry_limit, from retry_delay_seconds
 * doubling), so a notification survives a restart and a slow chat holds up nobody but this queue.
 */
export async function ensureChatJobs(sql: Sql, config: Pick<Config, 'notify'>): Promise<void> {
  const c = config.notify.chat;
  await createJobQueue(sql, CHAT_JOBS, {
    retryLimit: c.retry_limit,
    retryDelay: c.retry_delay_seconds,
    retryBackoff: true,
    // A POST ends within timeout_ms; a job running much longer belongs to a process that died.
    expireInSeconds: Math.ceil(c.timeout_ms / 1000) + 60,
  });
}

/**
 * Sends `text` to the chat: queued inside `db` (given a transaction, it goes iff that commits).
 * Without MAILPATH_CHAT_WEBHOOK_URL the text is logged instead. Returns which.
 */
export async function notifyChat(deps: ChatDeps, db: Queryable, text: string): Promise<'queued' | 'logged'> {
  if (deps.config.chatWebhookUrl === undefined) {
    deps.log.warn({ chat: text }, 'chat notification (MAILPATH_CHAT_WEBHOOK_URL is not set: logged only)');
    return 'logged';
  }
  await deps.boss.send(CHAT_JOBS, { text } satisfies ChatJob, { db: bossDb(db) } as never);
  return 'queued';
}

/** POSTs `{text}` once; throws unless the chat answers 2xx within `timeoutMs`. */
export async function postChat(url: string, text: string, timeoutMs: number): Promise<number> {
  // Imported here, on the first post: most processes never make one (see webhooks/http-post.ts).
  const { Agent, request } = await import('undici');
  const agent = new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connections: 1 });
  try {
    const res = await request(url, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', 'user-agent': 'Mailpath-Notify/1' },
      body: JSON.stringify({ text }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body.dump().catch(() => undefined);
    if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`the chat webhook answered ${res.statusCode}`);
    return res.statusCode;
  } finally {
    await agent.destroy().catch(() => undefined);
  }
}

/** Works the chat queue (scheduler role): each notification POSTed; a failure is retried by pg-boss. */
export async function startChatNotifier(deps: ChatDeps): Promise<RunningBatchWorker> {
  const log = deps.log.child({ worker: 'chat-notify' });
  return startBatchWorker<ChatJob>({
    boss: deps.boss,
    queue: CHAT_JOBS,
    name: 'chat notification',
    log,
    batchSize: 10,
    pollIntervalMs: 2000,
    handleBatch: async (jobs, runJob) => {
      await Promise.all(
        jobs.map((job) =>
          runJob(job, async () => {
            const text = typeof job.data?.text === 'string' ? job.data.text : '';
            const url = deps.config.chatWebhookUrl;
            // Queued while a webhook was set, worked by a process without one: the text still reaches the log.
            if (url === undefined || text === '') {
              log.warn({ chat: text }, 'chat notification not sent (MAILPATH_CHAT_WEBHOOK_URL is not set here)');
              return 'logged';
            }
            return postChat(url, text, deps.config.notify.chat.timeout_ms);
          }),
        ),
      );
    },
  });
}
