// A contact found by the address typed into a preview or proof form: the one rule for it (the API's search, then the
// exact address, since the search matches any address containing the text).
import { api, unwrap } from './api';
import type { ApiContact } from './pages/audiences/profile';

/** The live contact (active or unsubscribed) with this address, or undefined; the address is compared lower-cased. */
export async function contactByAddress(typed: string): Promise<ApiContact | undefined> {
  const address = typed.trim().toLowerCase();
  if (!address) return undefined;
  const found = await unwrap(api.GET('/contacts', { params: { query: { q: address, limit: 5 } } }));
  return found.items.find((c) => c.email === address);
}
