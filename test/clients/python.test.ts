// The generated Python client (clients/python, standard library only) against a live server, run with python3: register, create a test key, add a domain,
// send in test mode, list the events.
import { spawn } from 'node:child_process';
import t from 'tap';
import { liveServer, newcomerNames } from './live-server.js';
import { join } from 'node:path';
import { projectRoot } from '../../shared/kernel/paths.js';

const FLOW = join(projectRoot(), 'test', 'clients', 'python-client-flow.py');

/** Runs the flow script; its stdout is one JSON object. Bounded by a timeout. */
function runFlow(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // No bytecode written into clients/python.
    const child = spawn('python3', [FLOW, ...args], { timeout: 60_000, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

t.test('register, key, domain, send in test mode, events', async (t) => {
  const { baseUrl } = await liveServer(t);
  const names = newcomerNames();
  const run = await runFlow([baseUrl, names.tenant_slug, names.email, names.password, names.domain]);
  t.equal(run.code, 0, run.stderr);
  const seen = JSON.parse(run.stdout);
  t.ok(seen.typed_methods > 100, `${seen.typed_methods} methods, every annotation resolves`);
  t.match(seen, {
    tenant_id: String,
    key_mode: 'test',
    key_prefix: 'mp_test_',
    credential: 'api_key',
    domain: names.domain,
    send: { message_id: String, status: 'simulated' },
    refused: { status: 403, error: 'forbidden' },
  });
  t.match(seen.events, { data: [{ type: 'send', message_id: seen.send.message_id }], next_cursor: null, total: 1 }, 'a cursor page: data, next_cursor, total');
  t.match(seen.import, { id: String, status: /uploading|queued|running|completed/ }, 'a CSV file sent as the request body');
  t.match(seen.errors_csv, /^line,reason\r?\n/, 'a CSV answer comes back as bytes');
});
