// A Mailpath API listening on a loopback port for the client tests, and the steps every client goes through against it.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { buildTestApp, type TestApp, type TestLike } from '../helpers/app.js';

/** A test app listening over plain HTTP on 127.0.0.1 (the clients speak to it as to any server); its API base URL. */
export async function liveServer(t: TestLike): Promise<TestApp & { baseUrl: string }> {
  const s = await buildTestApp(t);
  await s.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = s.app.server.address() as AddressInfo;
  return { ...s, baseUrl: `http://127.0.0.1:${port}/api/v1` };
}

/** What a new API user registers and sends: fresh names per call, so several clients can run against one server. */
export function newcomerNames(): { tenant_name: string; tenant_slug: string; email: string; password: string; domain: string } {
  const tag = randomUUID().slice(0, 8);
  return {
    tenant_name: `Client ${tag}`,
    tenant_slug: `client-${tag}`,
    email: `owner-${tag}@client.test`,
    password: 'Correct-horse-42',
    domain: `mail-${tag}.client.test`,
  };
}
