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
  const obj = value as Record<string, unknown>;
  // Default sort compares UTF-16 code units, as < does; a plain loop keeps the verifier's hot path cheap.
  const keys = Object.keys(obj).sort();
  let out = '{';
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    if (out.length > 1) out += ',';
    out += `${JSON.stringify(k)}:${canonicalJson(v)}`;
  }
  return `${out}}`;
}

type IsoContent = Omit<AuditContent, 'created_at'> & { created_at: string };

/**
 * The canonical JSON of a row's content, its nine keys written in their sorted order directly (what canonicalJson
 * gives for the whole object, without sorting the top level per row); a content with an undefined member takes the
 * general path, which leaves such members out.
 */
export function contentJson(c: IsoContent): string {
  if (
    c.action === undefined ||
    c.actor_id === undefined ||
    c.actor_type === undefined ||
    c.created_at === undefined ||
    c.ip === undefined ||
    c.metadata === undefined ||
    c.resource_id === undefined ||
    c.resource_type === undefined ||
    c.tenant_id === undefined
  ) {
    return canonicalJson(c);
  }
  const q = JSON.stringify;
  return (
    `{"action":${q(c.action)},"actor_id":${q(c.actor_id)},"actor_type":${q(c.actor_type)},"created_at":${q(c.created_at)},"ip":${q(c.ip)},` +
    `"metadata":${canonicalJson(c.metadata)},"resource_id":${q(c.resource_id)},"resource_type":${q(c.resource_type)},"tenant_id":${q(c.tenant_id)}}`
  );
}

export function auditHash(content: AuditContent, prevHash: string): string {
  return auditHashIso({ ...content, created_at: content.created_at.toISOString() }, prevHash);
}

/** The same hash from content whose created_at is already its ISO 8601 text (the verifier reads it so, skipping Date round trips). */
export function auditHashIso(content: IsoContent, prevHash: string): string {
  return createHash('sha256')
    .update(`${prevHash}\n${contentJson(content)}`)
    .digest('hex');
}
