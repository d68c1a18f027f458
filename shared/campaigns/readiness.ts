// Whether a campaign can be sent now: a target, a From address (its own or the tenant's default) at a domain that may send, and content that parses (its own
// or its template's). Checked at schedule and send, and again when the fan-out starts.
import type { Queryable } from '../db/connection.js';
import { AppError, validationError } from '../kernel/errors.js';
import type { SendLookups } from '../sending/lookups.js';
import { findTemplate } from '../sending/templates/queries.js';
import { campaignSender } from './default-sender.js';
import { effectiveContent, prepareContent, type PreparedContent } from './content.js';
import type { CampaignRow } from './queries.js';

export interface ReadinessDeps {
  sql: Queryable;
  lookups: Pick<SendLookups, 'tenantDomains'>;
}

/** The campaign's content as it is sent now: the template read afresh, every part parsed (422 naming the field otherwise). */
export async function loadContent(db: Queryable, row: CampaignRow): Promise<PreparedContent> {
  const template = row.template_id ? await findTemplate(db, row.tenant_id, row.template_id) : undefined;
  return prepareContent(effectiveContent(row, template ?? null), row.ab_split_pct !== null);
}

/**
 * The sending domain of the campaign's From address (its own, else the tenant's default: campaignSender, 422 when
 * there is neither), as the send path will resolve it: a live send needs a domain with SPF, DKIM and DMARC verified
 * (412 no_verified_domain while the tenant has none, 422 from_email when the address is at another domain); a
 * test-key send may use any domain the tenant has added.
 */
async function checkFromDomain(deps: ReadinessDeps, row: CampaignRow, mode: 'live' | 'test'): Promise<void> {
  const from = (await campaignSender(deps.sql, row, mode)).from_email;
  // Whose address it is, so a default sender whose domain stopped verifying is named as such.
  const whose = row.from_email === null ? "the default sender's domain" : 'its domain';
  const name = from.slice(from.lastIndexOf('@') + 1);
  const domains = await deps.lookups.tenantDomains(row.tenant_id);
  if (mode === 'test') {
    if (!domains.some((d) => d.name === name)) throw validationError('from_email', `${whose} ${name} is not a domain of this tenant; add it under /domains`);
    return;
  }
  const sending = domains.filter((d) => d.canSend);
  if (sending.length === 0) {
    throw new AppError('no_verified_domain', 'no sending domain of this tenant has SPF, DKIM and DMARC verified; add and verify one under /domains');
  }
  if (!sending.some((d) => d.name === name)) {
    throw validationError(
      'from_email',
      `${whose} ${name} is not a verified sending domain of this tenant${row.from_email === null ? ' (PUT /settings/sender to change it)' : ''}`,
    );
  }
}

/** Throws what stands in the way of sending the campaign now (422 naming the field, or 412); returns its parsed content. */
export async function checkSendable(deps: ReadinessDeps, row: CampaignRow, mode: 'live' | 'test'): Promise<PreparedContent> {
  if (row.list_id === null && row.segment_id === null) {
    throw validationError('list_id', 'the campaign has no target (its list or segment was deleted): set list_id or segment_id');
  }
  await checkFromDomain(deps, row, mode);
  return loadContent(deps.sql, row);
}
