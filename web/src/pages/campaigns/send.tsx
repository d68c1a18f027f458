// Sending a campaign: the confirmation forecasts how many go today under the warm-up allowance and the quota and when
// the rest goes (GET /campaigns/{id}/forecast); scheduling in a chosen time zone; while it sends, a progress bar with why it waits, and
// pause, resume and cancel; duplicate and delete.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, unwrap } from '../../api';
import { ConfirmButton } from '../../ui/confirm';
import { ErrorNotice, useAction } from '../../ui/form';
import { useLoad } from '../../ui/load';
import { BROWSER_ZONE, chooseZone, knownZones, scheduleZone, zonedInstant } from '../../time-zone';
import { CampaignStatus } from './status';

const day = (date: string) => new Date(`${date}T00:00:00Z`).toLocaleDateString(undefined, { timeZone: 'UTC', dateStyle: 'medium' });

const LIMITED: Record<string, string> = {
  warmup: "the sending domain's warm-up allowance",
  domain_paused: 'the sending domain being paused',
  quota: "the month's quota",
};

/** What sending now will do, in words and figures. */
function Forecast(props: { id: string }) {
  const load = useLoad(() => unwrap(api.GET('/campaigns/{id}/forecast', { params: { path: { id: props.id } } })), [props.id]);
  const f = load.data;
  if (load.error) return <ErrorNotice error={load.error} />;
  if (!f) return <p role="status">Forecasting…</p>;
  return (
    <div data-testid="forecast">
      <p>
        <strong data-testid="forecast-today">
          {f.today.toLocaleString()} of {f.recipients.toLocaleString()}
        </strong>{' '}
        recipients go today{f.limited_by ? `, held back by ${LIMITED[f.limited_by] ?? f.limited_by}` : ''}.
      </p>
      {f.warmup && (
        <p class="hint">
          {f.warmup.domain}: warm-up tier {f.warmup.tier}, {f.warmup.daily_cap.toLocaleString()} a day, {f.warmup.sent_today.toLocaleString()} sent today.
        </p>
      )}
      <p class="hint">
        Quota: {f.quota.used.toLocaleString()} of {f.quota.monthly_cap.toLocaleString()} used this month.
      </p>
      {f.rest_starts_at && <p data-testid="forecast-rest">The rest starts going {new Date(f.rest_starts_at).toLocaleString()}.</p>}
      {f.completes_on && f.today < f.remaining && <p>The last goes on {day(f.completes_on)}, if the tier holds.</p>}
      {f.mode === 'test' && <p class="hint">A test key's send: simulated, nothing counted.</p>}
    </div>
  );
}

export interface Progress {
  targeted: number;
  skipped_total: number;
  queued: number;
  remaining: number;
  sent: number;
  delivered: number;
  deferred: number;
  failed: number;
  targeting_complete: boolean;
}

export function ProgressBar(props: { progress: Progress }) {
  const p = props.progress;
  const handled = p.queued + p.skipped_total;
  return (
    <div>
      <progress class="progress" aria-label="Campaign progress" max={Math.max(p.targeted, 1)} value={p.targeting_complete ? handled : undefined} />
      <p class="hint" data-testid="progress-words">
        {handled.toLocaleString()} of {p.targeted.toLocaleString()}
        {p.targeting_complete ? '' : '+'} handled: {p.queued.toLocaleString()} queued, {p.skipped_total.toLocaleString()} skipped,{' '}
        {p.remaining.toLocaleString()} to go; {p.delivered.toLocaleString()} delivered
      </p>
    </div>
  );
}

interface Campaign {
  id: string;
  status: string;
  waiting_reason: string | null;
  waiting_until: string | null;
  scheduled_at: string | null;
  progress: Progress;
}

export function SendPanel(props: { campaign: Campaign; onChange: () => void }) {
  const { route } = useLocation();
  const c = props.campaign;
  const [at, setAt] = useState('');
  const act = useAction(async (what: 'send' | 'pause' | 'resume' | 'cancel' | 'schedule' | 'unschedule' | 'duplicate' | 'delete') => {
    const path = { params: { path: { id: c.id } } };
    if (what === 'send') await unwrap(api.POST('/campaigns/{id}/send', path));
    else if (what === 'pause') await unwrap(api.POST('/campaigns/{id}/pause', path));
    else if (what === 'resume') await unwrap(api.POST('/campaigns/{id}/resume', path));
    else if (what === 'cancel') await unwrap(api.POST('/campaigns/{id}/cancel', path));
    else if (what === 'unschedule') await unwrap(api.DELETE('/campaigns/{id}/schedule', path));
    else if (what === 'schedule') {
      if (!at) throw new Error('Choose when to send it.');
      await unwrap(api.POST('/campaigns/{id}/schedule', { ...path, body: { scheduled_at: zonedInstant(at, scheduleZone.value).toISOString() } }));
    } else if (what === 'duplicate') {
      const copy = await unwrap(api.POST('/campaigns/{id}/duplicate', path));
      route(`/app/campaigns/${copy.id}`);
      return;
    } else {
      await unwrap(api.DELETE('/campaigns/{id}', path));
      route('/app/campaigns');
      return;
    }
    props.onChange();
  });
  const started = !['draft', 'scheduled'].includes(c.status);
  return (
    <section class="card" aria-labelledby="send-heading">
      <h2 id="send-heading">Sending</h2>
      <p data-testid="campaign-status">
        <CampaignStatus campaign={c} />
      </p>
      <ErrorNotice error={act.error} />
      {started && <ProgressBar progress={c.progress} />}
      <div class="actions">
        {c.status === 'draft' && (
          <ConfirmButton label="Send now" title="Send this campaign now?" tone="primary" onConfirm={() => void act.run('send')} busy={act.busy}>
            <Forecast id={c.id} />
          </ConfirmButton>
        )}
        {c.status === 'scheduled' && (
          <button type="button" class="secondary" onClick={() => void act.run('unschedule')} disabled={act.busy}>
            Unschedule
          </button>
        )}
        {c.status === 'sending' && (
          <button type="button" class="secondary" onClick={() => void act.run('pause')} disabled={act.busy}>
            Pause
          </button>
        )}
        {c.status === 'paused' && (
          <button type="button" onClick={() => void act.run('resume')} disabled={act.busy}>
            Resume
          </button>
        )}
        {['sending', 'paused', 'scheduled'].includes(c.status) && (
          <ConfirmButton label="Cancel campaign" title="Cancel this campaign?" onConfirm={() => void act.run('cancel')} busy={act.busy}>
            Nothing more is sent; what was sent stays sent.
          </ConfirmButton>
        )}
        <button type="button" class="secondary" onClick={() => void act.run('duplicate')} disabled={act.busy}>
          Duplicate
        </button>
        {c.status === 'draft' && (
          <ConfirmButton label="Delete campaign" title="Delete this draft?" onConfirm={() => void act.run('delete')} busy={act.busy}>
            The draft goes for good.
          </ConfirmButton>
        )}
      </div>
      {c.status === 'draft' && (
        <div class="search-row">
          <div class="field">
            <label for="schedule-at">Send later, at</label>
            <input id="schedule-at" type="datetime-local" value={at} onInput={(e) => setAt((e.currentTarget as HTMLInputElement).value)} />
          </div>
          <div class="field">
            <label for="schedule-zone">Time zone</label>
            <select id="schedule-zone" value={scheduleZone.value} onChange={(e) => chooseZone((e.currentTarget as HTMLSelectElement).value)}>
              {knownZones().map((z) => (
                <option key={z} value={z}>
                  {z === BROWSER_ZONE ? `${z} (this browser's)` : z}
                </option>
              ))}
            </select>
          </div>
          <button type="button" class="secondary" onClick={() => void act.run('schedule')} disabled={act.busy}>
            Schedule
          </button>
        </div>
      )}
    </section>
  );
}
