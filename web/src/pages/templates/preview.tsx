// A template rendered by the API (POST /templates/{id}/render, the renderer every send uses) for a contact of the
// workspace found by address, or for a sample address: subject, text, and the HTML in a sandboxed frame (no scripts,
// no requests) beside its source.
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api';
import { contactByAddress } from '../../contacts';
import { ErrorNotice, Field, Form, Submit, useAction } from '../../ui/form';
import { RenderedMessage, type RenderedParts } from '../../ui/rendered';

export function Preview(props: { id: string }) {
  const [email, setEmail] = useState('');
  const [result, setResult] = useState<{ rendered: RenderedParts; who: string } | undefined>(undefined);
  const render = useAction(async () => {
    const address = email.trim().toLowerCase();
    const match = await contactByAddress(address);
    const contact = match
      ? {
          email: match.email!,
          first_name: match.first_name,
          last_name: match.last_name,
          custom_fields: match.custom_fields,
        }
      : { email: address || 'someone@example.com' };
    const rendered = await unwrap(api.POST('/templates/{id}/render', { params: { path: { id: props.id } }, body: { contact } }));
    setResult({ rendered, who: match ? `the contact ${contact.email}` : `${contact.email} (not a contact: no fields)` });
  });
  return (
    <section class="card" aria-labelledby="preview-heading">
      <h2 id="preview-heading">Preview</h2>
      <ErrorNotice error={render.error} />
      <Form onSubmit={render.run} label="Preview for a contact">
        <div class="search-row">
          <Field label="Contact's address" name="preview-email" type="email" value={email} onInput={setEmail} hint="Blank: a sample address." />
          <Submit busy={render.busy}>Preview</Submit>
        </div>
      </Form>
      {result && (
        <RenderedMessage message={result.rendered}>
          <p class="muted">As {result.who} would get it (the saved version).</p>
        </RenderedMessage>
      )}
    </section>
  );
}
