// Works the chat notification queue (scheduler role): each queued text POSTed to MAILPATH_CHAT_WEBHOOK_URL; a failure is retried by pg-boss.
import { startBatchWorker, type RunningBatchWorker } from '../shared/jobs/batch-worker.js';
import { CHAT_JOBS, type ChatDeps, type ChatJob } from '../shared/operations/notify/chat.js';

/** POSTs `{text}` once; throws unless the chat answers 2xx within `timeoutMs`. */
export async function postChat(url: string, text: string, timeoutMs: number): Promise<number> {
  // Imported here, on the first post: most processes never make one (see jobs/webhook-post.ts).
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
