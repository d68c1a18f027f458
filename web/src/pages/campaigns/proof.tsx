// A proof of the campaign: its message rendered for a contact of the workspace (found by address) or for nobody, with
// "[Proof]" before its subject, sent to up to a few addresses through the same gates as the campaign; each proof's
// send linked to its message page.
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api';
import { contactByAddress } from '../../contacts';
import { addressesIn, ErrorNotice, Field, Form, Submit, useAction } from '../../ui/form';

interface Proof {
  to: string;
  send_id: string;
  status: string;
}

/** The id of the contact typed (blank: nobody); an address no contact has is refused before anything is rendered. */
export async function contactIdOf(typed: string): Promise<string | undefined> {
  if (!typed.trim()) return undefined;
  const found = await contactByAddress(typed);
  if (!found) throw new Error(`No contact has the address ${typed.trim().toLowerCase()}.`);
  return found.id;
}

/** An A/B campaign's subject to render: A or B. */
export function VariantSelect(props: { value: 'a' | 'b'; onChange: (v: 'a' | 'b') => void }) {
  return (
    <label class="field">
      <span class="label">Subject</span>
      <select value={props.value} onChange={(e) => props.onChange((e.currentTarget as HTMLSelectElement).value as 'a' | 'b')}>
        <option value="a">A</option>
        <option value="b">B</option>
      </select>
    </label>
  );
}

export function ProofSend(props: { id: string; hasVariantB: boolean }) {
  const [to, setTo] = useState('');
  const [contact, setContact] = useState('');
  const [variant, setVariant] = useState<'a' | 'b'>('a');
  const [sent, setSent] = useState<Proof[] | undefined>(undefined);
  const send = useAction(async () => {
    const contactId = await contactIdOf(contact);
    const recipients = addressesIn(to);
    const answer = await unwrap(
      api.POST('/campaigns/{id}/proof', {
        params: { path: { id: props.id } },
        body: { to: recipients, ...(contactId ? { contact_id: contactId } : {}), ...(props.hasVariantB ? { variant } : {}) },
      }),
    );
    setSent(answer.proofs);
  });
  return (
    <section class="card" aria-labelledby="proof-heading">
      <h2 id="proof-heading">Proof</h2>
      <ErrorNotice error={send.error} />
      <Form onSubmit={send.run} label="Send a proof">
        <Field label="Send a proof to" name="proof-to" value={to} onInput={setTo} hint="One or a few addresses, separated by commas." required />
        <Field
          label="Render it for the contact"
          name="proof-contact"
          type="email"
          value={contact}
          onInput={setContact}
          hint="Blank: as nobody (empty fields)."
        />
        {props.hasVariantB && <VariantSelect value={variant} onChange={setVariant} />}
        <Submit busy={send.busy}>Send proof</Submit>
      </Form>
      <div aria-live="polite">
        {sent && (
          <ul data-testid="proofs">
            {sent.map((p) => (
              <li key={p.send_id}>
                <a href={`/app/activity/${p.send_id}`}>{p.to}</a>: {p.status}
              </li>
            ))}
          </ul>
        )}
      </div>
    </section>
  );
}
