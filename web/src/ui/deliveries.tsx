// Event webhook deliveries as a log table (an endpoint's log, the dead letters): status, attempts, the receiver's
// last answer, and the body POSTed, folded away until asked for.
import type { paths } from '../../../clients/typescript/index';

export type Endpoint = paths['/webhooks/{id}']['get']['responses'][200]['content']['application/json']['data'];
export type Delivery = paths['/webhooks/{id}/deliveries']['get']['responses'][200]['content']['application/json']['data'][number];

const TONE: Record<Delivery['status'], string> = { delivered: 'ok', pending: 'warning', dead: 'problem' };
const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');

export function DeliveryTable(props: { caption: string; items: Delivery[]; onReplay?: ((id: string) => void) | undefined; busy?: boolean }) {
  return (
    <div class="table-wrap">
      <table class="deliveries">
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Attempts
            </th>
            <th scope="col">Last answer</th>
            <th scope="col">When</th>
            {props.onReplay && <th scope="col">Replay</th>}
          </tr>
        </thead>
        <tbody>
          {props.items.map((d) => (
            <tr key={d.id} data-testid="delivery-row">
              <td>
                <strong>{d.event_type}</strong>
                <details>
                  <summary>Body</summary>
                  <pre>{JSON.stringify(d.payload, null, 2)}</pre>
                </details>
              </td>
              <td>
                <span class={`badge ${TONE[d.status]}`}>{d.status}</span>
                {d.next_attempt_at && <p class="hint">next try {when(d.next_attempt_at)}</p>}
              </td>
              <td class="num">{d.attempts}</td>
              <td>
                {d.response_code !== null ? `HTTP ${d.response_code}` : 'no answer'}
                {d.duration_ms !== null && <span class="muted"> · {d.duration_ms} ms</span>}
                {d.last_error && <p class="hint">{d.last_error}</p>}
              </td>
              <td>{when(d.delivered_at ?? d.dead_at ?? d.last_attempt_at ?? d.created_at)}</td>
              {props.onReplay && (
                <td>
                  <button type="button" class="secondary" onClick={() => props.onReplay!(d.id)} disabled={props.busy}>
                    Replay<span class="visually-hidden"> the {d.event_type} delivery</span>
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
