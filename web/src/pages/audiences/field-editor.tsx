// A custom field's change form, opened from its row of the catalog: label, a select's options, whether it is required
// and its place in the display order (key and type are immutable, as the API holds them).
import { useState } from 'preact/hooks';
import type { paths } from '../../../../clients/typescript/index';
import { api, unwrap } from '../../api';
import { ErrorNotice, Field, Form, Submit, useAction } from '../../ui/form';

type CustomField = paths['/contact-custom-fields']['get']['responses']['200']['content']['application/json']['data']['items'][number];

/** Options typed as one line, separated by commas: the one rule for reading them, for a new field and a changed one. */
export function optionsIn(text: string): string[] {
  return text
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
}

export function FieldEditor(props: { field: CustomField; onSaved: () => void; onCancel: () => void }) {
  const { field } = props;
  const [label, setLabel] = useState(field.label);
  const [options, setOptions] = useState((field.options ?? []).join(', '));
  const [required, setRequired] = useState(field.required);
  const [position, setPosition] = useState(String(field.position));
  const save = useAction(async () => {
    const body = {
      label: label.trim(),
      required,
      ...(position.trim() === '' ? {} : { position: Number(position) }),
      ...(field.type === 'select' ? { options: optionsIn(options) } : {}),
    };
    await unwrap(api.PUT('/contact-custom-fields/{fieldID}', { params: { path: { fieldID: field.id } }, body }));
    props.onSaved();
  });
  return (
    <div data-testid="field-editor">
      <ErrorNotice error={save.error} />
      <Form onSubmit={save.run} label={`Change ${field.key}`}>
        <p class="muted">
          <span class="mono">{field.key}</span>, {field.type}: the key and type cannot change.
        </p>
        <Field label="Label" name="edit-label" value={label} onInput={setLabel} error={save.fieldError('label')} required />
        {field.type === 'select' && (
          <Field
            label="Options"
            name="edit-options"
            value={options}
            onInput={setOptions}
            hint="Separated by commas. Values contacts already hold stay as they are."
            error={save.fieldError('options')}
          />
        )}
        <Field
          label="Position"
          name="edit-position"
          type="number"
          value={position}
          onInput={setPosition}
          hint="Display order: lower first."
          error={save.fieldError('position')}
        />
        <label class="check">
          <input type="checkbox" checked={required} onChange={(e) => setRequired((e.currentTarget as HTMLInputElement).checked)} />
          Every new contact must have a value
        </label>
        <div class="actions">
          <Submit busy={save.busy}>Save field</Submit>
          <button type="button" class="secondary" onClick={props.onCancel}>
            Cancel
          </button>
        </div>
      </Form>
    </div>
  );
}
