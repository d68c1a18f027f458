// UTM tagging of one link: utm_source, utm_medium and utm_campaign appended to an http(s) URL, its query and fragment kept, a parameter the URL already has
// never added twice;
// and the values a campaign gets when it sets none.

export interface UtmValues {
  source?: string | null | undefined;
  medium?: string | null | undefined;
  campaign?: string | null | undefined;
}

const HTTP = /^https?:\/\//i;

/** utm_source and utm_medium of a campaign that sets none: the spec appends all three parameters. */
export const DEFAULT_UTM_SOURCE = 'mailpath';
export const DEFAULT_UTM_MEDIUM = 'email';
const SLUG_MAX = 100;

/**
 * utm_campaign for a campaign that sets none (the spec appends all three parameters): its name as a slug, lower case,
 * accents dropped from Latin letters, letters and digits of every script kept, every other run of characters one
 * hyphen ("Spring Sale — 2026!" → spring-sale-2026), at most 100 code points. A name with no letter or digit at all
 * (only emoji or punctuation) has no slug: the campaign id stands in, so the parameter is never empty.
 */
export function defaultUtmCampaign(campaign: { name: string; id: string }): string {
  const words = campaign.name
    .normalize('NFKD')
    .replace(/(\p{Script=Latin})\p{M}+/gu, '$1')
    .normalize('NFC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}]+/gu, '-')
    .replace(/^-+/, '');
  const slug = [...words].slice(0, SLUG_MAX).join('').replace(/-+$/, '');
  return slug || campaign.id;
}

/** The parameters to add, in a fixed order; empty values are left out. */
export function utmParameters(utm: UtmValues | undefined): [string, string][] {
  if (!utm) return [];
  const params: [string, string][] = [];
  if (utm.source) params.push(['utm_source', utm.source]);
  if (utm.medium) params.push(['utm_medium', utm.medium]);
  if (utm.campaign) params.push(['utm_campaign', utm.campaign]);
  return params;
}

function decodedName(pair: string): string {
  const eq = pair.indexOf('=');
  const name = eq < 0 ? pair : pair.slice(0, eq);
  try {
    return decodeURIComponent(name.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    return name.toLowerCase();
  }
}

/**
 * The URL with the parameters appended to its query (before any #fragment). The rest of the URL is kept as
 * written (no re-serialization, which would re-encode or re-case parts of it); a parameter whose name the
 * query already has (any case) is not added. Anything but an http(s) URL is returned unchanged.
 */
export function withUtm(url: string, params: readonly [string, string][]): string {
  if (params.length === 0 || !HTTP.test(url)) return url;
  const hashAt = url.indexOf('#');
  const beforeHash = hashAt < 0 ? url : url.slice(0, hashAt);
  const fragment = hashAt < 0 ? '' : url.slice(hashAt);
  const queryAt = beforeHash.indexOf('?');
  const query = queryAt < 0 ? '' : beforeHash.slice(queryAt + 1);
  const present = new Set(
    query
      .split(/[&;]/)
      .filter((p) => p !== '')
      .map(decodedName),
  );
  const added = params.filter(([name]) => !present.has(name)).map(([name, value]) => `${name}=${encodeURIComponent(value)}`);
  if (added.length === 0) return url;
  const joiner = queryAt < 0 ? '?' : query === '' || query.endsWith('&') ? '' : '&';
  return `${beforeHash}${joiner}${added.join('&')}${fragment}`;
}
