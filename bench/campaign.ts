// Benchmark: a campaign to a list of BENCH_RECIPIENTS (100,000) contacts, rendered with Liquid per recipient, tracked
// (open pixel, click redirects, UTM), DKIM-signed and delivered to Postfix's smtp-sink, beside Postfix relaying the same
// number of messages of the same size to the same sink.
//
// Goals: all recipients delivered within 100 s on this 2-core machine, and delivered/s at least 1.5x Postfix's.
// Mailpath runs built, as three processes on one database: api+scheduler (the send request, schedules) and two with the
// outbound role (the fan-out and delivery workers), one per core, each working one of the campaign's two fan-out jobs
// and delivering what it fanned out (BENCH_OUTBOUND_PROCESSES changes their number). Prints recipients/s of the fan-out
// (recipients turned into signed, queued sends) and of delivery, CPU per message of each process and of PostgreSQL,
// and the peak RSS of each Mailpath process.
// Needs PostgreSQL at 127.0.0.1:5432 (BENCH_DATABASE_URL overrides) and Postfix (installed through
// ../shared/bench/postfix-peer.sh when missing); creates and drops a database of its own.
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { freePort } from '../test/helpers/net.js';
import { measuredCpu, threadCpuSeconds, threadSchedNs } from './lib/cpu.js';
import { postfixRelay, startDeployment } from './lib/deployment.js';
import { httpsJson } from './lib/http.js';
import { waitFor } from './lib/mailpath.js';
import { ensurePostfix, startSink } from './lib/postfix-peer.js';
import { pgStatements } from './lib/pg-statements.js';

const RECIPIENTS = Math.max(1000, Number(process.env['BENCH_RECIPIENTS'] ?? 100_000));
const OUTBOUND_PROCESSES = Math.max(1, Number(process.env['BENCH_OUTBOUND_PROCESSES'] ?? 2));
const GOAL = { seconds: 100, ratio: 1.5 };
const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 0 });
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** A newsletter of about 5 KB: Liquid in the subject and both bodies, four links, a custom field. */
const PARAGRAPH = 'Our spring collection is here, with new arrivals every week and free returns on every order. '.repeat(5);
const BODY_HTML = `<html><body>
<h1>Hello {{ contact.first_name | default: "there" }},</h1>
{% if custom_fields.plan == "pro" %}<p>As a Pro member you get early access.</p>{% endif %}
${Array.from({ length: 8 }, (_, i) => `<p>${PARAGRAPH}<a href="https://shop.bench.test/item/${i}?ref=news">Item ${i}</a></p>`).join('\n')}
<p><a href="https://shop.bench.test/">Visit the shop</a> · <a href="{{ unsubscribe_url }}">Unsubscribe</a></p>
</body></html>`;
const BODY_TEXT = `Hello {{ contact.first_name | default: "there" }},\n\n${PARAGRAPH}\n\nhttps://shop.bench.test/\n`;

/** Peak resident set size of a process in MiB (VmHWM), 0 when it is gone. */
function peakRssMiB(pid: number): number {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : 0;
  } catch {
    return 0;
  }
}

export default async function runCampaignBench(): Promise<void> {
  await ensurePostfix();
  const sinkPort = await freePort();
  const stopSink = await startSink(sinkPort);
  // Each outbound process works one fan-out job at a time, so the campaign's jobs (campaigns.fanout.parallel_jobs, 2)
  // land one per process instead of both in whichever process fetches first.
  const outboundEnv: Record<string, string> = OUTBOUND_PROCESSES > 1 ? { MAILPATH_CONFIG__CAMPAIGNS__FANOUT__WORKERS: '1' } : {};
  const deployment = await startDeployment({
    name: 'campaign',
    frontRoles: 'api,scheduler',
    sinkPort,
    outboundProcesses: OUTBOUND_PROCESSES,
    outboundEnv,
  }).catch((err: unknown) => {
    stopSink();
    throw err;
  });
  const { sql, apiPort, front, outbounds, tenantId, token } = deployment;
  try {
    await sql`insert into contact_custom_fields (tenant_id, key, label, type, options, created_at, updated_at)
              values (${tenantId}, 'plan', 'Plan', 'select', ${['free', 'pro']}, now(), now())`;
    await sql`
      insert into contacts (tenant_id, email, first_name, custom_fields, created_at, updated_at)
      select ${tenantId}, 'reader' || i || '@bench-dest.test', case when i % 5 = 0 then null else 'Reader' || i end,
             jsonb_build_object('plan', case when i % 3 = 0 then 'pro' else 'free' end), now(), now()
      from generate_series(1, ${RECIPIENTS}) i`;
    const [list] = await sql<
      { id: string }[]
    >`insert into lists (tenant_id, name, created_at, updated_at) values (${tenantId}, 'Everyone', now(), now()) returning id`;
    await sql`insert into list_members (list_id, contact_id, tenant_id, added_at)
              select ${list!.id}, id, ${tenantId}, now() from contacts where tenant_id = ${tenantId}`;
    await sql`analyze`;

    const created = await httpsJson(
      apiPort,
      'POST',
      '/api/v1/campaigns',
      {
        name: 'Spring newsletter',
        subject: 'Spring is here, {{ contact.first_name | default: "friend" }}',
        preheader_text: 'New arrivals every week',
        body_html: BODY_HTML,
        body_text: BODY_TEXT,
        list_id: list!.id,
        from_email: 'news@bench.test',
        from_name: 'Bench Shop',
        utm_tagging: true,
        utm_source: 'newsletter',
        utm_medium: 'email',
        track_opens: true,
        track_clicks: true,
      },
      token,
    );
    const campaignId = created.data.id as string;
    // The campaign's own progress counters (what GET /campaigns/{id} shows), kept as it goes: a poll reads two rows
    // instead of counting a growing table ten times a second, which would weigh on the PostgreSQL being measured.
    const counts = async () => {
      const [row] = await sql<{ queued: number; delivered: number }[]>`
        select coalesce(sum(queued), 0)::int as queued, coalesce(sum(delivered), 0)::int as delivered from campaign_stats where campaign_id = ${campaignId}`;
      return row!;
    };

    // BENCH_PG_STATEMENTS=1 (with pg_stat_statements preloaded by the server): the bench database's costliest statements.
    const statements = process.env['BENCH_PG_STATEMENTS'] ? await pgStatements(sql) : undefined;
    process.stdout.write(
      `campaign bench: ${fmt(RECIPIENTS)} recipients, Liquid, tracked, DKIM rsa-2048, relay to Postfix smtp-sink; Mailpath as ${OUTBOUND_PROCESSES + 1} ` +
        `processes (api+scheduler, ${OUTBOUND_PROCESSES} x outbound); ${cpus().length} cores, load average ${load()}\n`,
    );
    let fannedOutAt = 0;
    const threadsBefore = outbounds.map((o) => threadCpuSeconds(o.pid));
    const schedBefore = outbounds.map((o) => threadSchedNs(o.pid));
    let phaseMs = 0;
    const { result: deliveredAt, perMessage } = await measuredCpu(
      [front, ...outbounds],
      RECIPIENTS,
      async () => {
        const started = performance.now();
        await httpsJson(apiPort, 'POST', `/api/v1/campaigns/${campaignId}/send`, undefined, token);
        // One poll for both figures; the fan-out finishes first.
        const done = await waitFor(
          async () => {
            const c = await counts();
            if (!fannedOutAt && c.queued >= RECIPIENTS) fannedOutAt = performance.now();
            return c.delivered;
          },
          RECIPIENTS,
          'campaign sends delivered',
        );
        phaseMs = done - started;
        return { fanout: (fannedOutAt - started) / 1000, total: (done - started) / 1000 };
      },
      async () =>
        (
          await sql<{ pid: number }[]>`
      select pid from pg_stat_activity where datname = current_database() or backend_type <> 'client backend'`
        ).map((r) => r.pid),
    );
    const [size] = await sql<{ avg: number }[]>`select avg(size_bytes)::int as avg from sends where campaign_id = ${campaignId}`;
    // Where the outbound processes' CPU goes (summed): their event loops, libuv's pool (the RSA signatures), V8's GC threads.
    const byThread = new Map<string, number>();
    outbounds.forEach((o, i) => {
      for (const [name, sec] of threadCpuSeconds(o.pid))
        byThread.set(name, (byThread.get(name) ?? 0) + ((sec - (threadsBefore[i]!.get(name) ?? 0)) * 1000) / RECIPIENTS);
    });
    const threads = [...byThread].filter(([, ms]) => ms >= 0.01).sort((a, b) => b[1] - a[1]);
    process.stdout.write(`    outbound CPU per message by thread: ${threads.map(([n, ms]) => `${n} ${ms.toFixed(2)} ms`).join(', ')}\n`);
    // An outbound event loop runs the gates, the database client and SMTP for every message it handles: the share of the
    // run it spent on a core, and waiting for one behind the machine's other threads (signatures, PostgreSQL, the sink).
    const share = (ns: number) => ((ns / 1e6 / phaseMs) * 100).toFixed(0);
    const loops = outbounds.map((o, i) => {
      const sched = threadSchedNs(o.pid);
      return `on a core ${share(sched.runNs - schedBefore[i]!.runNs)}%, waiting for one ${share(sched.waitNs - schedBefore[i]!.waitNs)}%`;
    });
    process.stdout.write(`    outbound event loops, share of the run: ${loops.join('; ')}\n`);
    if (process.env['BENCH_TABLE_STATS']) {
      // Row writes per message by table (HOT updates need no index entries): where PostgreSQL's share of the work goes.
      const tables = await sql<{ relname: string; ins: number; upd: number; hot: number; del: number }[]>`
        select relname, n_tup_ins::int as ins, n_tup_upd::int as upd, n_tup_hot_upd::int as hot, n_tup_del::int as del
        from pg_stat_user_tables where n_tup_ins + n_tup_upd + n_tup_del > 0 order by n_tup_ins + n_tup_upd + n_tup_del desc limit 12`;
      for (const t of tables) {
        const per = (n: number) => (n / RECIPIENTS).toFixed(2);
        process.stdout.write(`    ${t.relname}: per message ${per(t.ins)} inserts, ${per(t.upd)} updates (${per(t.hot)} HOT), ${per(t.del)} deletes\n`);
      }
    }
    if (statements) await statements.print(RECIPIENTS, 'message');
    const rss = `peak RSS api ${peakRssMiB(front.pid).toFixed(0)} MiB, outbound ${outbounds.map((o) => `${peakRssMiB(o.pid).toFixed(0)} MiB`).join(' + ')}`;
    process.stdout.write(
      `  Mailpath: fan-out ${fmt(RECIPIENTS / deliveredAt.fanout)} recipients/s (${deliveredAt.fanout.toFixed(1)} s), delivered ` +
        `${fmt(RECIPIENTS / deliveredAt.total)}/s, ` +
        `all delivered in ${deliveredAt.total.toFixed(1)} s (goal <= ${GOAL.seconds} s); messages of ${fmt(size!.avg)} bytes; ${perMessage}; ${rss}\n`,
    );
    await deployment.stopMailpath();
    const postfix = await postfixRelay(sinkPort, { messages: RECIPIENTS, bytes: size!.avg, sessions: 20 });
    process.stdout.write(
      `  Postfix (smtp-source, 20 sessions, ${fmt(size!.avg)}-byte messages, relaying): delivered ${fmt(postfix.deliveredPerSec)}/s; whole machine ` +
        `${postfix.machineMs.toFixed(2)} ms CPU per message\n`,
    );
    const ratio = RECIPIENTS / deliveredAt.total / postfix.deliveredPerSec;
    const met = ratio >= GOAL.ratio && deliveredAt.total <= GOAL.seconds;
    process.stdout.write(
      `  delivered/s vs Postfix: ${ratio.toFixed(2)}x (goal >= ${GOAL.ratio}x, all within ${GOAL.seconds} s): ${met ? 'goal met' : 'GOAL MISSED'}; ` +
        `load average after ${load()}\n`,
    );
  } finally {
    await deployment.close();
    stopSink();
  }
}
