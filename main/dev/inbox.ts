// The dev inbox: a small HTTP server on loopback listing what the sink caught and receiving (and listing) inbound-webhook POSTs, so every path of `mailpath
// dev` can be watched with curl.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Logger } from '../../shared/kernel/log.js';
import { summarize, type CaughtMessage, type DevStore, type ReceivedPost } from './store.js';

/** A webhook body larger than this is refused (413): well above the MX's 25 MiB message limit. */
const MAX_POST_BYTES = 64 * 1024 * 1024;

/** The headers Mailpath's POSTs carry and the receiver lists: X-MP-* (inbound) and Standard Webhooks' signature (event webhooks). */
const SIGNATURE_HEADERS = new Set(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
const isMailpathHeader = (name: string) => name.startsWith('x-mp-') || SIGNATURE_HEADERS.has(name);

export interface DevInbox {
  port: number;
  /** "http://127.0.0.1:<port>" */
  url: string;
  stop(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(`${JSON.stringify(body, null, 2)}\n`);
}

function raw(res: ServerResponse, contentType: string, bytes: Buffer): void {
  res.writeHead(200, { 'content-type': contentType, 'content-length': bytes.length, 'x-content-type-options': 'nosniff' });
  res.end(bytes);
}

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_POST_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

const presentMessage = (m: CaughtMessage, base: string) => ({
  id: m.id,
  received_at: m.received_at.toISOString(),
  mail_from: m.mail_from,
  rcpt_to: m.rcpt_to,
  from: m.from,
  to: m.to,
  subject: m.subject,
  message_id: m.message_id,
  size_bytes: m.raw.length,
  dkim: m.dkim,
  dmarc: m.dmarc,
  raw_url: `${base}/messages/${m.id}`,
});

const presentPost = (p: ReceivedPost, base: string) => ({
  id: p.id,
  received_at: p.received_at.toISOString(),
  path: p.path,
  content_type: p.content_type,
  headers: p.mailpath_headers,
  from: p.from ?? null,
  subject: p.subject ?? null,
  size_bytes: p.body.length,
  raw_url: `${base}/webhooks/${p.id}`,
});

/**
 * GET /messages (newest first), GET /messages/{id} (message/rfc822), DELETE /messages;
 * POST /webhook (or any path under it) is the receiver, answering 200;
 * GET /webhooks (newest first), GET /webhooks/{id} (the body as posted), DELETE /webhooks.
 */
export async function startDevInbox(deps: { store: DevStore; log: Logger }, port: number, host = '127.0.0.1'): Promise<DevInbox> {
  let base = `http://${host}:${port}`;
  const { store } = deps;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', base).pathname.replace(/\/+$/, '') || '/';
    const method = req.method ?? 'GET';
    if (method === 'POST' && (path === '/webhook' || path.startsWith('/webhook/'))) {
      const body = await readBody(req);
      if (body === undefined) return json(res, 413, { ok: false, error: `larger than ${MAX_POST_BYTES} bytes` });
      const contentType = req.headers['content-type'] ?? null;
      const mailpathHeaders = Object.fromEntries(
        Object.entries(req.headers).filter(([name, value]) => isMailpathHeader(name) && typeof value === 'string') as [string, string][],
      );
      const summary = contentType?.startsWith('message/rfc822') ? await summarize(body) : {};
      const post = store.addPost({ received_at: new Date(), path, content_type: contentType, mailpath_headers: mailpathHeaders, body, ...summary });
      deps.log.info({ id: post.id, path, recipient: mailpathHeaders['x-mp-inbound-recipient'], subject: post.subject }, 'dev webhook receiver got a POST');
      return json(res, 200, { ok: true, id: post.id });
    }
    const item = /^\/(messages|webhooks)\/(\d+)$/.exec(path);
    if (method === 'GET' && item) {
      const id = Number(item[2]);
      if (item[1] === 'messages') {
        const m = store.messages.find((x) => x.id === id);
        return m ? raw(res, 'message/rfc822', m.raw) : json(res, 404, { ok: false, error: `no message ${id}` });
      }
      const p = store.posts.find((x) => x.id === id);
      return p ? raw(res, p.content_type ?? 'application/octet-stream', p.body) : json(res, 404, { ok: false, error: `no webhook POST ${id}` });
    }
    if (path === '/messages' && method === 'GET')
      return json(
        res,
        200,
        [...store.messages].reverse().map((m) => presentMessage(m, base)),
      );
    if (path === '/webhooks' && method === 'GET')
      return json(
        res,
        200,
        [...store.posts].reverse().map((p) => presentPost(p, base)),
      );
    if ((path === '/messages' || path === '/webhooks') && method === 'DELETE') {
      (path === '/messages' ? store.messages : store.posts).length = 0;
      return json(res, 200, { ok: true });
    }
    if (path === '/' && method === 'GET') {
      return json(res, 200, {
        messages: `${base}/messages`,
        webhooks: `${base}/webhooks`,
        webhook_url: `${base}/webhook`,
        caught: store.messages.length,
        caught_total: store.caughtTotal,
        posts: store.posts.length,
      });
    }
    return json(res, 404, { ok: false, error: `no ${method} ${path} here: try GET /messages, GET /webhooks or POST /webhook` });
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      deps.log.warn({ err }, 'dev inbox');
      if (!res.headersSent) json(res, 500, { ok: false, error: (err as Error).message });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  base = `http://${host}:${bound}`;
  return {
    port: bound,
    url: base,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
