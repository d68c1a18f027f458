// The TypeScript client of the Mailpath API: openapi-fetch over the types generated from the OpenAPI document (schema.d.ts).
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { paths } from './schema.js';

export type { components, paths } from './schema.js';
export type MailpathClient = Client<paths>;

export interface MailpathClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** The API base URL, ending in /api/v1 (e.g. https://mail.example.net/api/v1). */
  baseUrl: string;
  /** A session JWT (from /auth/register or /auth/login) or an API key, sent as Authorization: Bearer. */
  token?: string;
}

/**
 * A typed client: every path, parameter, body and answer is checked against the API's document.
 *
 *   const api = createMailpathClient({ baseUrl: 'https://localhost:8443/api/v1', token: key });
 *   const { data, error } = await api.POST('/transactional/send', { body: { to, from_email, subject, body_text } });
 *
 * `data` is the envelope ({ ok: true, data }); `error` the error envelope ({ ok: false, error, message }).
 */
export function createMailpathClient(options: MailpathClientOptions): MailpathClient {
  const { token, headers, ...rest } = options;
  return createClient<paths>({
    ...rest,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(headers as Record<string, string> | undefined) },
  });
}
