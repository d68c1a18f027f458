// The webhook test-send as the API sees it: a port the composition root fills with the real signed POST (jobs/inbound-webhooks/test-send.ts).

export interface WebhookTestResult {
  /** The receiver answered 2xx in time: a real delivery would have been recorded as delivered. */
  delivered: boolean;
  /** The receiver's HTTP status; null when it never answered (refused address, timeout, connection error). */
  http_status: number | null;
  round_trip_ms: number;
  /** What went wrong, as a real delivery's last_error would say; null when delivered. */
  error: string | null;
}

/** POSTs a synthetic message to the tenant's webhook once; 409 conflict when no webhook URL is configured. */
export type WebhookTester = (tenantId: string) => Promise<WebhookTestResult>;
