// A template rendered by the API (POST /templates/{id}/render, the renderer every send uses) for a contact of the
// workspace found by address, or for a sample address: subject, text, and the HTML in a sandboxed frame (no scripts,
// no requests) beside its source.
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api';
import { ErrorNotice, Field, Form, Submit, useAction } from '../../ui/form';

interface Rendered {
  subject: string;
  html: string | null;
  text: string | null;
}

export function Preview(props: { id: string }) {
  const [email, setEmail] = useState('');
  const [result, setResult] = useState<{ rendered: Rendered; who: string } | undefined>(undefined);
  const render = useAction(async () => {
    const address = email.trim().toLowerCase();
    const found = address ? (await unwrap(api.GET('/contacts', { params: { query: { q: address, status: 'all', limit: 5 } } }))).items : [];
    const match = found.find((c) => c.email === address);
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
        <div data-testid="preview" aria-live="polite">
          <p class="muted">As {result.who} would get it (the saved version).</p>
          <p>
            <strong>Subject:</strong> <span data-testid="preview-subject">{result.rendered.subject}</span>
          </p>
          {result.rendered.html !== null && (
            <>
              <h3>HTML</h3>
              <iframe class="preview-frame" title="The HTML body, rendered" sandbox="" srcdoc={result.rendered.html} />
              <details>
                <summary>HTML source</summary>
                <pre data-testid="preview-html">{result.rendered.html}</pre>
              </details>
            </>
          )}
          {result.rendered.text !== null && (
            <>
              <h3>Text</h3>
              <pre data-testid="preview-text">{result.rendered.text}</pre>
            </>
          )}
        </div>
      )}
    </section>
  );
}
