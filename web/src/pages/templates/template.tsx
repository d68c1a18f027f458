// A template's editor: name, subject and both bodies in Liquid, saved through the API, whose syntax check is shown at
// the line and column it names; and a preview rendered by the API for a contact of the workspace (or a sample one).
import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso/router';
import { ApiError, api, unwrap } from '../../api';
import { hasRole, identity } from '../../session';
import { ConfirmButton } from '../../ui/confirm';
import { ErrorNotice, Field, Form, Notice, Submit, useAction } from '../../ui/form';
import { useTitle } from '../../ui/layout';
import { useLoad } from '../../ui/load';
import { LiquidField, liquidError } from './liquid-field';
import { Preview } from './preview';

interface Draft {
  name: string;
  subject: string;
  body_html: string;
  body_text: string;
}

const EMPTY: Draft = { name: '', subject: '', body_html: '', body_text: '' };

export default function Template() {
  const { params } = useRoute();
  const { route } = useLocation();
  const id = params['id'] === 'new' ? undefined : params['id'];
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [saved, setSaved] = useState(false);
  const load = useLoad(
    async () => (id ? unwrap(api.GET('/templates/{id}', { params: { path: { id } } })) : undefined),
    [id],
    (t) => setDraft(t ? { name: t.name, subject: t.subject, body_html: t.body_html ?? '', body_text: t.body_text ?? '' } : EMPTY),
  );
  useTitle(id ? (load.data?.name ?? 'Template') : 'New template');
  const set = (key: keyof Draft) => (value: string) => {
    setSaved(false);
    setDraft((d) => ({ ...d, [key]: value }));
  };
  const save = useAction(async () => {
    const body = { name: draft.name.trim(), subject: draft.subject, body_html: draft.body_html || null, body_text: draft.body_text || null };
    if (id) {
      await unwrap(api.PATCH('/templates/{id}', { params: { path: { id } }, body }));
      setSaved(true);
    } else {
      const created = await unwrap(api.POST('/templates', { body }));
      route(`/app/templates/${created.id}`, true);
      setSaved(true);
    }
  });
  const remove = useAction(async () => {
    await unwrap(api.DELETE('/templates/{id}', { params: { path: { id: id! } } }));
    route('/app/templates');
  });
  const refusal = save.error instanceof ApiError ? save.error.message : '';
  const syntax = liquidError(refusal);
  // A refusal that names a field is shown at the field; any other above the form.
  const fieldMessage = (name: string) => (!syntax && refusal.startsWith(`${name}:`) ? refusal : undefined);
  const named = syntax !== undefined || ['name', 'subject', 'body_html', 'body_text'].some((n) => fieldMessage(n));
  const canWrite = hasRole(identity.value, 'developer');
  return (
    <>
      <p>
        <a href="/app/templates">All templates</a>
      </p>
      <h1>{id ? (load.data?.name ?? 'Template') : 'New template'}</h1>
      <ErrorNotice error={load.error} />
      <section class="card" aria-labelledby="editor-heading">
        <h2 id="editor-heading">Editor</h2>
        <p class="muted">
          Liquid: <code>{'{{ contact.first_name | default: "there" }}'}</code>, <code>{'{{ custom_fields.plan }}'}</code>, <code>{'{% if %}'}</code>,{' '}
          <code>{'{% for %}'}</code>. Checked when saved: an error is shown at its line and column.
        </p>
        {!named && <ErrorNotice error={save.error} />}
        <div aria-live="polite">{saved && <Notice kind="done" title="Saved" />}</div>
        <Form onSubmit={save.run} label="Template">
          <Field label="Name" name="name" value={draft.name} onInput={set('name')} error={fieldMessage('name')} required />
          <LiquidField
            label="Subject"
            name="subject"
            rows={1}
            value={draft.subject}
            onInput={set('subject')}
            error={syntax?.part === 'subject' ? syntax : undefined}
            message={fieldMessage('subject')}
          />
          <LiquidField
            label="HTML body"
            name="body_html"
            rows={12}
            value={draft.body_html}
            onInput={set('body_html')}
            error={syntax?.part === 'body_html' ? syntax : undefined}
            message={fieldMessage('body_html')}
            hint="Output is HTML-escaped unless | raw ends the filters."
          />
          <LiquidField
            label="Text body"
            name="body_text"
            rows={8}
            value={draft.body_text}
            onInput={set('body_text')}
            error={syntax?.part === 'body_text' ? syntax : undefined}
            message={fieldMessage('body_text')}
          />
          {canWrite && <Submit busy={save.busy}>{id ? 'Save template' : 'Create template'}</Submit>}
        </Form>
      </section>
      {id && <Preview id={id} />}
      {id && canWrite && (
        <section class="card" aria-labelledby="delete-heading">
          <h2 id="delete-heading">Delete</h2>
          <ErrorNotice error={remove.error} />
          <ConfirmButton label="Delete template" title="Delete this template?" onConfirm={() => void remove.run()} busy={remove.busy}>
            Campaigns and sends that used it keep what they sent; its name can be used again.
          </ConfirmButton>
        </section>
      )}
    </>
  );
}
