// A campaign's A/B test (GET /campaigns/{id}/ab-results): each subject's sends, opens and clicks with their rates,
// the two-proportion test on the deciding metric (z, p, significant at 95 % or how many more deliveries it needs),
// Mailpath's recommendation, and the button that declares a winner and releases the held recipients to it.
import { api, unwrap } from '../../api';
import { hasRole, identity } from '../../session';
import { ConfirmButton } from '../../ui/confirm';
import { ErrorNotice, Notice, useAction } from '../../ui/form';
import { Loading, useLoad } from '../../ui/load';
import { TableWrap } from '../settings/nav';

const needed = (more: number | null) => (more ? `: about ${more.toLocaleString()} more deliveries per variant needed` : '');
const percent = (rate: number) => `${(rate * 100).toLocaleString(undefined, { maximumFractionDigits: 1 })} %`;

export function AbTest(props: { id: string; version: number; onFinalized: () => void }) {
  const load = useLoad(() => unwrap(api.GET('/campaigns/{id}/ab-results', { params: { path: { id: props.id } } })), [props.id, props.version]);
  const finalize = useAction(async (winner: 'a' | 'b') => {
    await unwrap(api.POST('/campaigns/{id}/ab/finalize', { params: { path: { id: props.id } }, body: { winner } }));
    await load.reload();
    props.onFinalized();
  });
  if (load.data && !load.data.has_ab_test) return null;
  return (
    <section class="card" aria-labelledby="ab-heading">
      <h2 id="ab-heading">A/B test</h2>
      <ErrorNotice error={finalize.error} />
      <Loading state={load} what="the A/B results">
        {(r) => {
          const variants = [r.variant_a, r.variant_b].filter((v) => v !== null);
          const s = r.significance;
          return (
            <>
              <TableWrap label="Variants">
                <table data-testid="ab-variants">
                  <caption>Decided by {r.metric === 'open' ? 'opens' : 'clicks'}</caption>
                  <thead>
                    <tr>
                      <th scope="col">Variant</th>
                      <th scope="col">Subject</th>
                      <th scope="col" class="num">
                        Delivered
                      </th>
                      <th scope="col" class="num">
                        Opened
                      </th>
                      <th scope="col" class="num">
                        Clicked
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {variants.map((v) => (
                      <tr key={v.variant} data-testid={`ab-variant-${v.variant}`}>
                        <th scope="row">
                          {v.variant.toUpperCase()}
                          {r.winner === v.variant && <span class="badge ok"> winner</span>}
                        </th>
                        <td class="break">{v.subject ?? '—'}</td>
                        <td class="num">{v.delivered.toLocaleString()}</td>
                        <td class="num">
                          {v.unique_opens.toLocaleString()} ({percent(v.open_rate)})
                        </td>
                        <td class="num">
                          {v.unique_clicks.toLocaleString()} ({percent(v.click_rate)})
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
              {s && (
                <p data-testid="ab-significance">
                  {s.significant
                    ? `${s.leader?.toUpperCase()} leads, significant at 95 % confidence`
                    : `No significant difference yet${needed(s.more_per_variant)}`}{' '}
                  <span class="hint">
                    (z = {s.z.toFixed(2)}, p = {s.p_value.toFixed(3)})
                  </span>
                </p>
              )}
              <Notice kind="info" title="Recommendation">
                {r.recommendation}
              </Notice>
              {r.winner === null && hasRole(identity.value, 'developer') && (
                <div class="actions">
                  {(['a', 'b'] as const).map((w) => (
                    <ConfirmButton
                      key={w}
                      label={`Send ${w.toUpperCase()} to the rest`}
                      title={`Declare ${w.toUpperCase()} the winner?`}
                      tone="primary"
                      onConfirm={() => void finalize.run(w)}
                      busy={finalize.busy}
                    >
                      The recipients held back get subject {w.toUpperCase()}; this cannot be changed afterwards.
                    </ConfirmButton>
                  ))}
                </div>
              )}
            </>
          );
        }}
      </Loading>
    </section>
  );
}
