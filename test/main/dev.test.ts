// The README's "Watch it arrive" followed as a new user would: the real `mailpath dev` as a child process, then every shell block of that section pasted
// into one bash session (ports moved to free ones), each block's outcome checked; and the TypeScript client example of docs/api.md run against it.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import t from 'tap';
import { projectRoot } from '../../shared/kernel/paths.js';
import { startDevServer } from '../helpers/dev-server.js';
import { shippedMailpathArgs } from '../helpers/cli.js';
import { startShell, type ShellSession } from '../helpers/shell-session.js';

const SWAKS = '/usr/bin/swaks';
const PYTHON = '/usr/bin/python3';
const VERIFIER = join(projectRoot(), 'test', 'helpers', 'dkim-verify.py');
if (!existsSync(SWAKS)) throw new Error(`${SWAKS} is missing: apt-get install swaks (the README's steps use it)`);

/** The shell blocks of one README section, in order. */
function sectionBlocks(readme: string, heading: string): string[] {
  const start = readme.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README has no "## ${heading}" section`);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trimEnd());
}

const dev = await startDevServer(t, shippedMailpathArgs('dev'));
const { ports } = dev;
const sql = postgres(dev.databaseUrl, { max: 1, onnotice: () => {} });
t.teardown(() => sql.end({ timeout: 5 }));

const shell: ShellSession = startShell({ PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? tmpdir() });
t.teardown(() => shell.close());

/** The block as the README has it, with the default ports moved to this test's. */
const localize = (block: string) =>
  block
    .replace(/:8443\b/g, `:${ports.https}`)
    .replace(/:2587\b/g, `:${ports.submission}`)
    .replace(/:2525\b/g, `:${ports.mx}`)
    .replace(/:8025\b/g, `:${ports.inbox}`);

interface Listed {
  subject: string | null;
  [field: string]: unknown;
}

/** Re-runs a read-only listing block until its answer holds `want` (bounded); returns the parsed listing. */
async function listingUntil(block: string, want: (items: Listed[]) => boolean): Promise<Listed[]> {
  let last = '';
  for (let i = 0; i < 60; i++) {
    const { output } = await shell.run(block);
    last = output;
    try {
      const items = JSON.parse(output) as Listed[];
      if (want(items)) return items;
    } catch {
      // not JSON yet: keep asking
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the listing never showed what was expected; last answer:\n${last}`);
}

const subjects = (items: Listed[]) => items.map((i) => i.subject);

t.test('the README "Watch it arrive" steps, pasted in order, each do what the README says', async (t) => {
  const blocks = sectionBlocks(readFileSync(join(projectRoot(), 'README.md'), 'utf8'), 'Watch it arrive');
  t.equal(blocks[0], 'npm run dev', 'the section starts dev mode with npm run dev (this test starts the same command from source)');
  const seen = new Set<string>();
  let caught: Listed[] = [];
  let firstRaw = Buffer.alloc(0);
  for (const original of blocks.slice(1)) {
    const block = localize(original);
    const listing = /^curl -s http:\/\/127\.0\.0\.1:\d+\/(messages|webhooks)$/.exec(block.replace(/\n#.*$/gm, '').trim());
    if (listing?.[1] === 'messages') {
      caught = await listingUntil(block, (items) => ['Hello from dev', 'Over SMTP'].every((s) => subjects(items).includes(s)));
      for (const m of caught) {
        t.match(
          m,
          { dkim: /^pass \(d=acme\.localhost s=mp\d{8}-[0-9a-f]{8}\)$/, dmarc: 'pass', mail_from: /^b-[0-9a-f]{32}-[0-9a-f]+@mx\.mailpath\.localhost$/ },
          `${m.subject}: caught, DKIM and DMARC pass through the dev DNS`,
        );
      }
      t.same(caught.find((m) => m.subject === 'Over SMTP')?.['rcpt_to'], ['bob@example.org']);
      // Fetched now: the sink keeps the newest 1,000, and the campaign later in the section sends 2,000.
      firstRaw = Buffer.from(await (await fetch(String(caught.find((m) => m.subject === 'Hello from dev')!['raw_url']))).arrayBuffer());
      seen.add('messages');
      continue;
    }
    if (listing?.[1] === 'webhooks') {
      const posts = await listingUntil(block, (items) => subjects(items).includes('Hello Acme'));
      t.match(posts[0], {
        content_type: 'message/rfc822',
        from: 'ann@example.org',
        headers: { 'x-mp-inbound-sig': /^hmac-sha256=[0-9a-f]{64}$/, 'x-mp-inbound-recipient': 'support@acme.localhost', 'x-mp-inbound-attempt': '1' },
      });
      seen.add('webhooks');
      continue;
    }
    // Bounded by the block's own loops (the campaign's at four minutes); this only stops a block that hangs.
    const { output, status } = await shell.run(block, 300_000);
    t.equal(status, 0, `exits 0: ${original.split('\n')[0]}`, { output });
    if (/auth\/register/.test(block)) {
      t.match(output, /^key mp_live_\S+, test key mp_test_\S+, domain [0-9a-f-]{36}$/m, 'registered, two keys and the domain');
      seen.add('setup');
    } else if (/\$TEST_KEY/.test(block)) {
      t.match(output, /^simulated$/m, "the test key's send is simulated");
      t.match(
        output,
        /^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=acme\.localhost;[^]*? s=mp\d{8}-[0-9a-f]{8};[^]*\r\nSubject: First try\r\n/m,
        'its signed message is downloadable before the domain is verified',
      );
      seen.add('test key');
    } else if (/\/verify/.test(block)) {
      t.match(output, /^verified$/m, 'the domain verifies against the dev DNS');
      seen.add('verify');
    } else if (/transactional\/send/.test(block)) {
      t.match(output, /"status":"queued"/);
      seen.add('live send');
    } else if (/swaks --server 127\.0\.0\.1:\d+ --tls/.test(block)) {
      t.match(output, /250 2\.0\.0 Ok: queued as </, 'swaks submission accepted');
      seen.add('submission');
    } else if (/inbound-webhook/.test(block)) {
      t.match(output, /^true$/m, 'webhook enabled');
      t.match(output, /250 2\.0\.0 Ok: queued as [0-9a-f-]{36}/, 'the MX took the message for the dev domain');
      seen.add('inbound');
    } else if (/contacts\/imports/.test(block)) {
      t.match(output, /^2000$/m, 'the 2,000 readers imported into the list');
      t.match((await shell.run('echo "$CAMPAIGN"')).output, /^[0-9a-f-]{36}$/m, 'the spec-shaped campaign was created');
      seen.add('campaign setup');
    } else if (/\/proof/.test(block)) {
      t.match(output, /^queued\n2000$/m, 'the proof is queued; the forecast sends all 2,000 today');
      seen.add('proof and forecast');
    } else if (/campaigns\/\$CAMPAIGN\/send/.test(block)) {
      t.match(output, /^2000\n2000\n2003$/m, "the send's forecast, 2,000 delivered, and the sink caught them all");
      seen.add('campaign');
    } else {
      t.fail(`a README block this test does not know how to check:\n${original}`);
    }
  }
  t.same(
    [...seen].sort(),
    ['campaign', 'campaign setup', 'inbound', 'live send', 'messages', 'proof and forecast', 'setup', 'submission', 'test key', 'verify', 'webhooks'],
    'every step of the README was run',
  );

  // What the README says besides the blocks: the live send is delivered, and the message the sink caught is the signed one.
  const [delivered] = await sql<{ status: string }[]>`select status from sends where subject = 'Hello from dev'`;
  t.equal(delivered?.status, 'delivered');
  const verifier = existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import dkim, dns.resolver']).status === 0;
  t.ok(verifier, 'the independent DKIM verifier is installed (apt-get install python3-dkim python3-dnspython)');
  const raw = firstRaw;
  const [stored] = await sql<{ message: Buffer }[]>`select message from sends where subject = 'Hello from dev'`;
  t.ok(raw.equals(stored!.message), 'the sink caught the stored signed message byte for byte');
  if (verifier) {
    const check = spawnSync(PYTHON, [VERIFIER, `127.0.0.1:${ports.dns}`], { input: raw, timeout: 20_000 });
    t.equal(check.status, 0, `python3-dkim verifies it with the key the dev DNS serves: ${check.stdout?.toString()}${check.stderr?.toString()}`);
  }
});

t.test('the TypeScript client example of docs/api.md runs as written against dev mode', async (t) => {
  const doc = readFileSync(join(projectRoot(), 'docs', 'api.md'), 'utf8');
  const at = doc.indexOf('\nTypeScript (`clients/typescript/index.ts`');
  if (at < 0) return t.fail('no TypeScript example in docs/api.md');
  const code = /```ts\n([\s\S]*?)```/.exec(doc.slice(at))?.[1];
  if (!code) return t.fail('no TypeScript example in docs/api.md');
  // As written, but for the port: the file sits in the project root, as docs/api.md says, under a name of its own.
  const file = join(projectRoot(), `.readme-example-${process.pid}.ts`);
  writeFileSync(file, code.replace('https://localhost:8443/', `https://localhost:${ports.https}/`));
  t.teardown(() => rmSync(file, { force: true }));
  const run = spawnSync(process.execPath, ['--import', 'tsx', file], {
    cwd: projectRoot(),
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? tmpdir(), NODE_EXTRA_CA_CERTS: join(dev.dataDir, 'tls', 'cert.pem') },
    timeout: 60_000,
  });
  t.equal(run.status, 0, `it exits 0: ${run.stderr?.toString().slice(0, 2000)}`);
  t.match(run.stdout?.toString(), /type: 'send'/, 'it prints the send event');
});

t.test('dev mode stops cleanly on SIGTERM', async (t) => {
  t.equal(await dev.stop(), 0, 'exit status 0', { stdout: dev.stdout() });
});
