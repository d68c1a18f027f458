// The custom-field catalog: every field contacts may carry (key, label, type, a select's options, whether required),
// in display order; a new field added here (key and type cannot change later), one changed in place, and one deleted
// behind a confirmation (values already stored stay on the contacts, ignored).
import { useState } from 'preact/hooks';
import type { paths } from '../../../../clients/typescript/index';
import { api, unwrap } from '../../api';
import { hasRole, identity } from '../../session';
import { ConfirmButton } from '../../ui/confirm';
import { ErrorNotice, Field, Form, Notice, Submit, useAction } from '../../ui/form';
import { Loading, useLoad } from '../../ui/load';
import { TableWrap } from '../settings/nav';
import { everyOf } from '../../ui/enums';
import { FieldEditor, optionsIn } from './field-editor';
import { AudiencePage } from './nav';

type FieldType = paths['/contact-custom-fields']['post']['requestBody']['content']['application/json']['type'];
const TYPES = everyOf<FieldType>()(['text', 'longtext', 'number', 'date', 'datetime', 'boolean', 'select', 'email', 'url', 'phone']);

function NewField(props: { onAdded: () => void }) {
  const [key, setKey] = useState('');
  const [label, setLabel] = useState('');
  const [type, setType] = useState<FieldType>('text');
  const [options, setOptions] = useState('');
  const [required, setRequired] = useState(false);
  const [added, setAdded] = useState<string | undefined>(undefined);
  const add = useAction(async () => {
    const list = optionsIn(options);
    await unwrap(
      api.POST('/contact-custom-fields', { body: { key: key.trim(), label: label.trim(), type, required, ...(type === 'select' ? { options: list } : {}) } }),
    );
    setAdded(key.trim());
    setKey('');
    setLabel('');
    setOptions('');
    props.onAdded();
  });
  return (
    <section class="card" aria-labelledby="new-field-heading">
      <h2 id="new-field-heading">New field</h2>
      <ErrorNotice error={add.error} />
      <div aria-live="polite">{added && <Notice kind="done" title={`Added ${added}`} />}</div>
      <Form onSubmit={add.run} label="New custom field">
        <Field
          label="Key"
          name="key"
          value={key}
          onInput={setKey}
          hint="Lowercase letters, digits and _; cannot change later."
          error={add.fieldError('key')}
          required
        />
        <Field label="Label" name="label" value={label} onInput={setLabel} error={add.fieldError('label')} required />
        <label class="field">
          <span class="label">Type</span>
          <select value={type} onChange={(e) => setType((e.currentTarget as HTMLSelectElement).value as FieldType)}>
            {TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        {type === 'select' && (
          <Field label="Options" name="options" value={options} onInput={setOptions} hint="Separated by commas." error={add.fieldError('options')} />
        )}
        <label class="check">
          <input type="checkbox" checked={required} onChange={(e) => setRequired((e.currentTarget as HTMLInputElement).checked)} />
          Every new contact must have a value
        </label>
        <Submit busy={add.busy}>Add field</Submit>
      </Form>
    </section>
  );
}

export default function Fields() {
  const load = useLoad(() => unwrap(api.GET('/contact-custom-fields')), []);
  const remove = useAction(async (id: string) => {
    await unwrap(api.DELETE('/contact-custom-fields/{fieldID}', { params: { path: { fieldID: id } } }));
    await load.reload();
  });
  const canWrite = hasRole(identity.value, 'developer');
  const [editing, setEditing] = useState<string | undefined>(undefined);
  const columns = canWrite ? 6 : 4;
  return (
    <AudiencePage title="Custom fields" lead="What contacts may carry beyond their profile: used in segments, templates ({{ custom_fields.key }}) and imports.">
      <section class="card" aria-labelledby="fields-heading">
        <h2 id="fields-heading" class="visually-hidden">
          Custom fields
        </h2>
        <ErrorNotice error={remove.error} />
        <Loading state={load} what="the fields">
          {(r) =>
            r.items.length === 0 ? (
              <p>No custom fields yet.</p>
            ) : (
              <TableWrap label="Custom fields">
                <table data-testid="custom-fields">
                  <caption class="visually-hidden">Custom fields in display order</caption>
                  <thead>
                    <tr>
                      <th scope="col">Key</th>
                      <th scope="col">Label</th>
                      <th scope="col">Type</th>
                      <th scope="col">Required</th>
                      {canWrite && <th scope="col">Change</th>}
                      {canWrite && <th scope="col">Delete</th>}
                    </tr>
                  </thead>
                  <tbody>
                    {r.items.flatMap((f) => [
                      <tr key={f.id} data-testid="custom-field-row">
                        <td class="mono">{f.key}</td>
                        <td>{f.label}</td>
                        <td>
                          {f.type}
                          {f.options && <span class="hint block">{f.options.join(', ')}</span>}
                        </td>
                        <td>{f.required ? 'yes' : 'no'}</td>
                        {canWrite && (
                          <td>
                            <button
                              type="button"
                              class="secondary"
                              aria-label={`Change ${f.key}`}
                              aria-expanded={editing === f.id ? 'true' : 'false'}
                              onClick={() => setEditing(editing === f.id ? undefined : f.id)}
                            >
                              Change
                            </button>
                          </td>
                        )}
                        {canWrite && (
                          <td>
                            <ConfirmButton
                              label="Delete"
                              ariaLabel={`Delete ${f.key}`}
                              title={`Delete the field ${f.key}?`}
                              class="secondary"
                              onConfirm={() => void remove.run(f.id)}
                              busy={remove.busy}
                            >
                              Values already stored stay on the contacts but are ignored; segments that use it match no one.
                            </ConfirmButton>
                          </td>
                        )}
                      </tr>,
                      editing === f.id && (
                        <tr key={`${f.id}-editor`}>
                          <td colSpan={columns}>
                            <FieldEditor
                              field={f}
                              onCancel={() => setEditing(undefined)}
                              onSaved={() => {
                                setEditing(undefined);
                                void load.reload();
                              }}
                            />
                          </td>
                        </tr>
                      ),
                    ])}
                  </tbody>
                </table>
              </TableWrap>
            )
          }
        </Loading>
      </section>
      {canWrite && <NewField onAdded={() => void load.reload()} />}
    </AudiencePage>
  );
}
