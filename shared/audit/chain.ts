// The audit hash chain: each row's SHA-256 covers its own content and the previous row's hash.
import { createHash } from 'node:crypto';

export const GENESIS_HASH = '0'.repeat(64);

export interface AuditContent {
  tenant_id: string | null;
  actor_type: 'user' | 'api_key' | 'system';
  actor_id: string | null;
  action: string;
  resource_type: string | null;
  resource_id: string | null;
  metadata: Record<string, unknown>;
  ip: string | null;
  created_at: Date;
}

/** JSON with object keys sorted at every depth, so equal content always hashes equally (jsonb reorders keys). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export function auditHash(content: AuditContent, prevHash: string): string {
  return auditHashIso({ ...content, created_at: content.created_at.toISOString() }, prevHash);
}

/** The same hash from content whose created_at is already its ISO 8601 text (the verifier reads it so, skipping Date round trips). */
export function auditHashIso(content: Omit<AuditContent, 'created_at'> & { created_at: string }, prevHash: string): string {
  return createHash('sha256').update(prevHash).update('\n').update(canonicalJson(content)).digest('hex');
}
