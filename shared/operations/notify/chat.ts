// Operator notifications to the chat webhook (MAILPATH_CHAT_WEBHOOK_URL, Slack-compatible JSON {text}): queued in the caller's transaction, POSTed by a
// queue worker with pg-boss retries, only logged when no webhook is set.
import type { Config } from '../../config/index.js';
import type { Queryable, Sql } from '../../db/connection.js';
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
