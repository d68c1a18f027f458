// Test fixture: a tenant domain that may send (verified, with an active DKIM key sealed like the real one), without DNS round trips.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../shared/db/connection.js';
import { generateDkimKey, storeKey, type GeneratedKey } from '../../shared/deliverability/domains/dkim-keys.js';
import type { SealedBox } from '../../shared/kernel/secrets/sealed-box.js';

export interface SendingDomain {
  id: string;
  name: string;
  selector: string;
  key: GeneratedKey;
}

// One key pair for every fixture domain of a test process: RSA generation is the slow part.
let sharedKey: Promise<GeneratedKey> | undefined;

/** Inserts a verified domain (owning its name, verified_at set) for the tenant with an active key under selector `mptest`. */
export async function verifiedSendingDomain(
  db: Queryable,
  vault: SealedBox,
  tenantId: string,
  name = `${randomUUID().slice(0, 8)}.example`,
): Promise<SendingDomain> {
  const [row] = await db<{ id: string }[]>`
    insert into domains (tenant_id, name, unicode_name, owned_at, verified_at, created_at)
    values (${tenantId}, ${name}, ${name}, now(), now(), now()) returning id`;
  const key = await (sharedKey ??= generateDkimKey(1024));
  const selector = 'mptest';
  await storeKey(db, vault, { tenantId, domainId: row!.id, selector, key, state: 'active', at: new Date() });
  return { id: row!.id, name, selector, key };
}
