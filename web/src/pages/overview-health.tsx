// The overview's health sections: the month's quota (warned at 80 %), the trust score with its factors, deliverability
// per mailbox provider, each domain's warm-up allowance today, and the set-up card of an account that cannot send yet.
import { api, unwrap } from '../api';
import { Notice } from '../ui/form';
import { Loading, useLoad, type Loaded } from '../ui/load';

const number = new Intl.NumberFormat();
const percent = (share: number | null) => (share === null ? '–' : `${(share * 100).toFixed(1)} %`);

const PROVIDERS: Record<string, string> = {
  gmail: 'Gmail',
  outlook: 'Outlook',
  yahoo: 'Yahoo',
  aol: 'AOL',
  icloud: 'iCloud',
  proton: 'Proton',
  fastmail: 'Fastmail',
  other: 'Other',
};

const TIER_TONE: Record<string, string> = { excellent: 'ok', good: 'ok', caution: 'warning', 'at-risk': 'problem' };

function Tier(props: { tier: string | null }) {
  if (!props.tier) return <span class="muted">–</span>;
  return <span class={`badge ${TIER_TONE[props.tier] ?? ''}`}>{props.tier}</span>;
}

/** An account without a verified domain cannot send (the API answers 412): the onboarding page walks it through. */
export function SetupCard() {
  return (
    <section class="card setup" aria-labelledby="setup-heading">
      <h2 id="setup-heading">Finish setting up</h2>
      <p>No sending domain is verified yet, so Mailpath cannot send for this workspace. Add a domain, publish its DNS records and verify it.</p>
      <p>
        <a class="button" href="/app/onboarding">
          Finish setting up
        </a>
      </p>
    </section>
  );
}

export function QuotaCard() {
  const quota = useLoad(() => unwrap(api.GET('/quota')), []);
  return (
    <section class="card" aria-labelledby="quota-heading">
      <h2 id="quota-heading">Monthly quota</h2>
      <Loading state={quota} what="the quota">
        {(q) => (
          <>
            <p class="kpi-value" data-testid="quota-used">
              {number.format(q.used)} <span class="muted">of {number.format(q.cap)}</span>
            </p>
            <meter
              class="quota-meter"
              min={0}
              max={Math.max(q.cap, 1)}
              low={q.cap * 0.8}
              high={q.cap * 0.95}
              optimum={0}
              value={q.used}
              aria-label="Quota used"
            >
              {q.used_pct ?? 0} %
            </meter>
            <p class="hint">
              {q.used_pct ?? 0} % used in {q.month} (UTC); {number.format(q.remaining)} left until{' '}
              {new Date(q.resets_at).toLocaleDateString(undefined, { timeZone: 'UTC' })}.
            </p>
            {q.warning && (
              <Notice kind="warning" title="Over 80 % of this month's quota">
                At the cap sends are refused (402) until the month ends. A larger plan raises the cap.
              </Notice>
            )}
          </>
        )}
      </Loading>
    </section>
  );
}

const FACTOR_LABELS: Record<string, string> = { delivery: 'Delivery', bounce: 'Bounces', complaint: 'Complaints', engagement: 'Engagement' };

export function TrustScore() {
  const trust = useLoad(() => unwrap(api.GET('/analytics/trust-score')), []);
  return (
    <section class="card" aria-labelledby="trust-heading">
      <h2 id="trust-heading">Trust score</h2>
      <Loading state={trust} what="the trust score">
        {(score) => (
          <>
            <p class="kpi-value" data-testid="trust-score">
              {score.score} <span class="muted">/ 100</span> <Tier tier={score.tier} />
            </p>
            {score.basis === 'no_sends' && <p class="hint">No delivered or bounced mail in 30 days yet: this is the new-sender baseline.</p>}
            <table class="factors">
              <caption class="visually-hidden">Factors of the trust score (each 0 to 1, with its weight)</caption>
              <thead>
                <tr>
                  <th scope="col">Factor</th>
                  <th scope="col" class="num">
                    Weight
                  </th>
                  <th scope="col">Value</th>
                </tr>
              </thead>
              <tbody>
                {score.factors.map((f) => (
                  <tr key={f.name}>
                    <th scope="row">{FACTOR_LABELS[f.name] ?? f.name}</th>
                    <td class="num">{Math.round(f.weight * 100)} %</td>
                    <td>
                      <meter min={0} max={1} value={f.value} aria-label={`${FACTOR_LABELS[f.name] ?? f.name} factor`} /> {f.value.toFixed(2)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </Loading>
    </section>
  );
}

export function ProviderTable() {
  const scores = useLoad(() => unwrap(api.GET('/analytics/esp-scores')), []);
  return (
    <section aria-labelledby="providers-heading">
      <h2 id="providers-heading">Mailbox providers</h2>
      <Loading state={scores} what="the providers">
        {({ items }) => (
          <div class="table-wrap">
            <table data-testid="providers">
              <caption class="visually-hidden">Deliverability per mailbox provider over the last 30 days</caption>
              <thead>
                <tr>
                  <th scope="col">Provider</th>
                  <th scope="col" class="num">
                    Sent
                  </th>
                  <th scope="col" class="num">
                    Delivered
                  </th>
                  <th scope="col" class="num">
                    Deferred
                  </th>
                  <th scope="col" class="num">
                    Bounced
                  </th>
                  <th scope="col" class="num">
                    Opened or clicked
                  </th>
                  <th scope="col" class="num">
                    Complained
                  </th>
                  <th scope="col" class="num">
                    Delivery rate
                  </th>
                  <th scope="col" class="num">
                    Score
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((p) => (
                  <tr key={p.esp} data-testid={`provider-${p.esp}`}>
                    <th scope="row">{PROVIDERS[p.esp] ?? p.esp}</th>
                    <td class="num">{number.format(p.sent)}</td>
                    <td class="num">{number.format(p.delivered)}</td>
                    <td class="num" data-testid="deferred">
                      {number.format(p.deferred)}
                    </td>
                    <td class="num">{number.format(p.bounced)}</td>
                    <td class="num">{number.format(p.engaged)}</td>
                    <td class="num">{number.format(p.complained)}</td>
                    <td class="num">{percent(p.delivery_rate)}</td>
                    <td class="num">
                      {p.score === null ? (
                        <span class="muted">–</span>
                      ) : (
                        <>
                          {p.score} <Tier tier={p.tier} />
                        </>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Loading>
      <p class="hint">
        The last 30 days. Deferred counts each time a send was put off to be tried again: the provider asked to retry later, or a warm-up cap held it. A custom
        domain's provider is found from its MX hosts (Google Workspace counts as Gmail).
      </p>
    </section>
  );
}

/** Read once by the overview: its domains' verification decides the set-up card, their warm-up fills this table. */
export const loadReputation = () => unwrap(api.GET('/reputation'));
type Reputation = Awaited<ReturnType<typeof loadReputation>>;

export function DomainsWarmup(props: { state: Loaded<Reputation> }) {
  return (
    <section aria-labelledby="domains-heading">
      <h2 id="domains-heading">Sending domains</h2>
      <Loading state={props.state} what="the domains">
        {({ domains }) =>
          domains.length === 0 ? (
            <p>No sending domain yet.</p>
          ) : (
            <div class="table-wrap">
              <table data-testid="domains">
                <caption class="visually-hidden">Warm-up of each sending domain today (UTC)</caption>
                <thead>
                  <tr>
                    <th scope="col">Domain</th>
                    <th scope="col">Status</th>
                    <th scope="col" class="num">
                      Warm-up tier
                    </th>
                    <th scope="col" class="num">
                      Today's cap
                    </th>
                    <th scope="col" class="num">
                      Sent today
                    </th>
                    <th scope="col" class="num">
                      Trust score
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {domains.map((d) => (
                    <tr key={d.domain_id} data-testid={`domain-${d.domain}`}>
                      <th scope="row">{d.domain}</th>
                      <td>{d.verified ? <span class="badge ok">verified</span> : <span class="badge warning">not verified</span>}</td>
                      <td class="num">{d.warmup.tier}</td>
                      <td class="num">{number.format(d.warmup.daily_cap)}</td>
                      <td class="num" data-testid="sent-today">
                        {number.format(d.warmup.sent_today)}
                      </td>
                      <td class="num">
                        {d.trust_score ? (
                          <>
                            {d.trust_score.score} <Tier tier={d.trust_score.tier} />
                          </>
                        ) : (
                          <span class="muted">–</span>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loading>
      <p class="hint">
        A new domain sends up to its tier's cap a day; sends past it wait for 00:00 UTC. Tiers rise a step a day while bounces and complaints stay low.
      </p>
    </section>
  );
}
