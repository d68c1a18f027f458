// The inbound webhook's retry schedule: the one shared by every webhook (shared/webhooks/retry-schedule.ts).
export * from '../../shared/webhooks/retry-schedule.js';
