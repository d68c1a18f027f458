// A draft campaign's editor: name, subjects (a second one makes an A/B test), preheader, sender, the target (a list or
// a segment, with how many it reaches), a template for what is left empty, both bodies, UTM tagging and tracking.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, unwrap, unwrapList } from '../../api';
import { ErrorNotice, Field, Form, Notice, Submit, useAction } from '../../ui/form';
import { useLoad } from '../../ui/load';
import { LiquidField, liquidError } from '../templates/liquid-field';

export interface Draft {
  name: string;
  subject: string;
  subject_b: string;
  ab_split_pct: string;
  preheader_text: string;
  from_email: string;
  target: string;
  template_id: string;
  body_html: string;
  body_text: string;
  utm_tagging: boolean;
  track_opens: boolean;
  track_clicks: boolean;
}

export const EMPTY_DRAFT: Draft = {
  name: '',
  subject: '',
  subject_b: '',
  ab_split_pct: '',
  preheader_text: '',
  from_email: '',
  target: '',
  template_id: '',
  body_html: '',
  body_text: '',
  utm_tagging: false,
  track_opens: true,
  track_clicks: true,
};

interface Stored {
  name: string;
  subject: string | null;
  subject_b: string | null;
  ab_split_pct: number | null;
  preheader_text: string | null;
  from_email: string | null;
  list_id: string | null;
  segment_id: string | null;
  template_id: string | null;
  body_html: string | null;
  body_text: string | null;
  utm_tagging: boolean;
  track_opens: boolean;
  track_clicks: boolean;
}

export function draftOf(c: Stored): Draft {
  return {
    name: c.name,
    subject: c.subject ?? '',
    subject_b: c.subject_b ?? '',
    ab_split_pct: c.ab_split_pct === null ? '' : String(c.ab_split_pct),
    preheader_text: c.preheader_text ?? '',
    from_email: c.from_email ?? '',
    target: c.list_id ? `list:${c.list_id}` : c.segment_id ? `segment:${c.segment_id}` : '',
    template_id: c.template_id ?? '',
    body_html: c.body_html ?? '',
    body_text: c.body_text ?? '',
    utm_tagging: c.utm_tagging,
    track_opens: c.track_opens,
    track_clicks: c.track_clicks,
  };
}

function bodyOf(d: Draft) {
  const [kind, targetId] = d.target.split(':');
  const split = d.ab_split_pct.trim() ? Number(d.ab_split_pct) : null;
  return {
    name: d.name.trim(),
    subject: d.subject || null,
    subject_b: d.subject_b || null,
    ab_split_pct: split,
    preheader_text: d.preheader_text || null,
    from_email: d.from_email.trim() || null,
    list_id: kind === 'list' ? targetId! : null,
    segment_id: kind === 'segment' ? targetId! : null,
    template_id: d.template_id || null,
    body_html: d.body_html || null,
    body_text: d.body_text || null,
    utm_tagging: d.utm_tagging,
    track_opens: d.track_opens,
    track_clicks: d.track_clicks,
  };
}

/** How many the chosen target reaches now: a list's members, or a segment's count (run by the API, under its budget). */
function TargetReach(props: { target: string; lists: { id: string; member_count: number }[] }) {
  const [kind, id] = props.target.split(':');
  const count = useLoad(async () => {
    if (kind === 'segment' && id) return (await unwrap(api.GET('/segments/{id}/count', { params: { path: { id } } }))).count;
    return props.lists.find((l) => l.id === id)?.member_count;
  }, [props.target]);
  if (!props.target) return null;
  return (
    <p class="hint" data-testid="target-count" aria-live="polite">
      {count.data === undefined ? 'Counting…' : `${count.data.toLocaleString()} ${kind === 'list' ? 'members' : 'contacts match now'}`}
    </p>
  );
}

export function CampaignEditor(props: { id: string | undefined; initial: Draft; onSaved: () => void }) {
  const { route } = useLocation();
  const [draft, setDraft] = useState<Draft>(props.initial);
  const [saved, setSaved] = useState(false);
  const options = useLoad(async () => {
    const [lists, segments, templates] = await Promise.all([
      unwrapList(api.GET('/lists', { params: { query: { limit: 200 } } })),
      unwrapList(api.GET('/segments', { params: { query: { limit: 200 } } })),
      unwrapList(api.GET('/templates', { params: { query: { limit: 200 } } })),
    ]);
    return { lists: lists.items, segments: segments.items, templates: templates.items };
  }, []);
  const set =
    <K extends keyof Draft>(key: K) =>
    (value: Draft[K]) => {
      setSaved(false);
      setDraft((d) => ({ ...d, [key]: value }));
    };
  const save = useAction(async () => {
    const body = bodyOf(draft);
    if (props.id) await unwrap(api.PATCH('/campaigns/{id}', { params: { path: { id: props.id } }, body }));
    else {
      const created = await unwrap(api.POST('/campaigns', { body }));
      route(`/app/campaigns/${created.id}`, true);
    }
    setSaved(true);
    props.onSaved();
  });
  const refusal = save.error instanceof Error ? save.error.message : '';
  const syntax = liquidError(refusal);
  const at = (part: string) => (syntax?.part === part ? syntax : undefined);
  const check = (label: string, key: 'utm_tagging' | 'track_opens' | 'track_clicks') => (
    <label class="check">
      <input type="checkbox" checked={draft[key]} onChange={(e) => set(key)((e.currentTarget as HTMLInputElement).checked)} />
      {label}
    </label>
  );
  return (
    <section class="card" aria-labelledby="editor-heading">
      <h2 id="editor-heading">Message and audience</h2>
      {!syntax && <ErrorNotice error={save.error} />}
      <div aria-live="polite">{saved && <Notice kind="done" title="Saved" />}</div>
      <Form onSubmit={save.run} label="Campaign">
        <Field label="Name" name="name" value={draft.name} onInput={set('name')} error={save.fieldError('name')} required />
        <div class="field">
          <label for="campaign-target">Send to</label>
          <select id="campaign-target" value={draft.target} onChange={(e) => set('target')((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">Choose a list or a segment</option>
            <optgroup label="Lists">
              {options.data?.lists.map((l) => (
                <option key={l.id} value={`list:${l.id}`}>
                  {l.name}
                </option>
              ))}
            </optgroup>
            <optgroup label="Segments">
              {options.data?.segments.map((s) => (
                <option key={s.id} value={`segment:${s.id}`}>
                  {s.name}
                </option>
              ))}
            </optgroup>
          </select>
          {options.data && <TargetReach target={draft.target} lists={options.data.lists} />}
        </div>
        <Field label="From address" name="from_email" type="email" value={draft.from_email} onInput={set('from_email')} hint="Blank: the default sender." />
        <LiquidField label="Subject" name="subject" rows={1} value={draft.subject} onInput={set('subject')} error={at('subject')} />
        <LiquidField
          label="Subject B (A/B test)"
          name="subject_b"
          rows={1}
          value={draft.subject_b}
          onInput={set('subject_b')}
          error={at('subject_b')}
          hint="Optional: a second subject tried on part of the audience."
        />
        <Field
          label="A/B test share (%)"
          name="ab_split_pct"
          type="number"
          inputMode="numeric"
          value={draft.ab_split_pct}
          onInput={set('ab_split_pct')}
          hint="1–100: that share of the audience is split evenly between the subjects; the rest gets the winner."
          error={save.fieldError('ab_split_pct')}
        />
        <LiquidField
          label="Preheader"
          name="preheader_text"
          rows={1}
          value={draft.preheader_text}
          onInput={set('preheader_text')}
          error={at('preheader_text')}
        />
        <div class="field">
          <label for="campaign-template">Template</label>
          <select id="campaign-template" value={draft.template_id} onChange={(e) => set('template_id')((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">None</option>
            {options.data?.templates.map((tpl) => (
              <option key={tpl.id} value={tpl.id}>
                {tpl.name}
              </option>
            ))}
          </select>
          <p class="hint">Supplies the subject and bodies left empty here.</p>
        </div>
        <LiquidField label="HTML body" name="body_html" rows={10} value={draft.body_html} onInput={set('body_html')} error={at('body_html')} />
        <LiquidField label="Text body" name="body_text" rows={6} value={draft.body_text} onInput={set('body_text')} error={at('body_text')} />
        <fieldset>
          <legend>Links and tracking</legend>
          {check('Tag links with UTM parameters', 'utm_tagging')}
          {check('Track opens', 'track_opens')}
          {check('Track clicks', 'track_clicks')}
        </fieldset>
        <Submit busy={save.busy}>{props.id ? 'Save campaign' : 'Create campaign'}</Submit>
      </Form>
    </section>
  );
}
