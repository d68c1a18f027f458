// Time-ordered (RFC 9562 version 7) UUIDs made in the process, for rows whose id is chosen before the insert.
import { randomUUID } from 'node:crypto';

/**
 * 48 bits of Unix milliseconds, then the random bits of a version 4 UUID with the version set to 7 (the variant
 * bits are already 10): ids written together land together at the right edge of their primary-key index, as
 * uuid_v7() does in SQL (migration 027), instead of on random pages.
 */
export function uuidV7(now = Date.now()): string {
  const time = now.toString(16).padStart(12, '0');
  // randomUUID(): xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx; from index 15 on it is the random part after the version digit.
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randomUUID().slice(15)}`;
}
