// A campaign previewed for a contact of the workspace (found by address) or for nobody: the message its send would
// carry (POST /campaigns/{id}/preview, the proof's renderer), shown here instead of sent, links untracked.
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api';
import { ErrorNotice, Field, Form, Submit, useAction } from '../../ui/form';
import { RenderedMessage } from '../../ui/rendered';
import { contactIdOf, VariantSelect } from './proof';

type Preview = Awaited<ReturnType<typeof previewOf>>;

const previewOf = (id: string, contactId: string | undefined, variant: 'a' | 'b' | undefined) =>
  unwrap(
    api.POST('/campaigns/{id}/preview', {
      params: { path: { id } },
      body: { ...(contactId ? { contact_id: contactId } : {}), ...(variant ? { variant } : {}) },
    }),
  );

export function CampaignPreview(props: { id: string; hasVariantB: boolean }) {
  const [contact, setContact] = useState('');
  const [variant, setVariant] = useState<'a' | 'b'>('a');
  const [shown, setShown] = useState<Preview | undefined>(undefined);
  const render = useAction(async () => {
    setShown(await previewOf(props.id, await contactIdOf(contact), props.hasVariantB ? variant : undefined));
  });
  return (
    <section class="card" aria-labelledby="campaign-preview-heading">
      <h2 id="campaign-preview-heading">Preview</h2>
      <ErrorNotice error={render.error} />
      <Form onSubmit={render.run} label="Preview the campaign">
        <Field
          label="Preview it for the contact"
          name="preview-contact"
          type="email"
          value={contact}
          onInput={setContact}
          hint="Blank: as nobody (empty fields)."
        />
        {props.hasVariantB && <VariantSelect value={variant} onChange={setVariant} />}
        <Submit busy={render.busy}>Preview</Submit>
      </Form>
      {shown && (
        <RenderedMessage message={shown}>
          <p class="muted" data-testid="preview-envelope">
            From {shown.from} to {shown.to}
            {shown.variant ? `, subject ${shown.variant.toUpperCase()}` : ''}: as the campaign stands, with links untracked.
          </p>
        </RenderedMessage>
      )}
    </section>
  );
}
