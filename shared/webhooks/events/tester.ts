// POST /webhooks/{id}/test: one synthetic 'test' event signed and POSTed exactly as real ones are, once, with the outcome reported.
import { randomUUID } from 'node:crypto';
import type { PostSigned } from '../post.js';
import { describeResult } from '../retry-schedule.js';
import type { WebhookPayload } from './event-types.js';
import { requireEndpoint, type EndpointDeps } from './service.js';
import { activeSecrets, bodyOf, signedHeaders } from './signing.js';

export interface EndpointTestResult {
  /** The receiver answered 2xx in time: a real delivery would have been recorded as delivered. */
  delivered: boolean;
  /** The webhook-id the test carried. */
  webhook_id: string;
  http_status: number | null;
  duration_ms: number;
  error: string | null;
}

/** Sent whether the endpoint is enabled or not (so it can be tried first); not retried, not in the delivery log. 404 for another tenant's endpoint. */
export async function testEndpoint(deps: EndpointDeps & { postSigned: PostSigned }, tenantId: string, id: string): Promise<EndpointTestResult> {
  const endpoint = await requireEndpoint(deps.sql, tenantId, id);
  const at = deps.clock.now();
  const messageId = randomUUID();
  const payload: WebhookPayload = {
    type: 'test',
    timestamp: at.toISOString(),
    data: { webhook_id: endpoint.id, message: 'A test event from Mailpath (POST /webhooks/{id}/test); real events have the same headers and signature.' },
  };
  const body = bodyOf(payload);
  const headers = signedHeaders({ id: messageId, at, body, secrets: activeSecrets(deps.vault, endpoint, at) });
  const result = await deps.postSigned({ dns: deps.dns, webhooks: deps.config.webhooks }, { url: endpoint.url, headers, body: Buffer.from(body) });
  const delivered = result.kind === 'answered' && result.status >= 200 && result.status < 300;
  return {
    delivered,
    webhook_id: messageId,
    http_status: result.kind === 'answered' ? result.status : null,
    duration_ms: result.durationMs,
    error: delivered ? null : describeResult(result),
  };
}
