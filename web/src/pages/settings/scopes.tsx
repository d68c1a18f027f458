// The scope picker of an API key: the API's catalogue (shared/accounts/keys/scopes.ts) grouped by area, one fieldset
// with a legend; nothing checked means every scope, as the API reads an empty list.
import { SCOPES } from '../../../../shared/accounts/keys/scopes';

const AREAS = [...new Set(SCOPES.map((s) => s.split(':')[0]!))];

export function ScopePicker(props: { value: string[]; onChange: (scopes: string[]) => void; legend?: string }) {
  const toggle = (scope: string, on: boolean) => props.onChange(on ? [...props.value, scope].sort() : props.value.filter((s) => s !== scope));
  return (
    <fieldset class="scopes">
      <legend>{props.legend ?? 'Scopes'}</legend>
      <p class="hint">Leave every box empty for a key that may use every scope. A key limited to some areas is refused (403) elsewhere.</p>
      <div class="scope-grid">
        {AREAS.map((area) => (
          <div key={area} class="scope-area">
            <span class="scope-area-name">{area}</span>
            {SCOPES.filter((s) => s.startsWith(`${area}:`)).map((scope) => (
              <label key={scope} class="check">
                <input
                  type="checkbox"
                  name="scope"
                  value={scope}
                  checked={props.value.includes(scope)}
                  onChange={(e) => toggle(scope, e.currentTarget.checked)}
                />
                <code>{scope}</code>
              </label>
            ))}
          </div>
        ))}
      </div>
    </fieldset>
  );
}

/** A key's scopes as badges; "every scope" for the empty list. */
export function ScopeList(props: { scopes: string[] }) {
  if (props.scopes.length === 0) return <span class="badge warning">every scope</span>;
  return (
    <ul class="tags">
      {props.scopes.map((s) => (
        <li key={s}>
          <code>{s}</code>
        </li>
      ))}
    </ul>
  );
}
