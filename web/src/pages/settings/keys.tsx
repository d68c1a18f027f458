// API keys: the tenant's active keys (prefix, mode, scopes, when made and last used, 14 days of requests), and a new
// key made with a name, mode and scopes, its secret shown once with a copy button. Viewers only read: no form.
import { useState } from 'preact/hooks';
import { api, unwrap } from '../../api';
import { hasRole, identity } from '../../session';
import { Sparkline } from '../../ui/chart';
import { SecretOnce } from '../../ui/copy';
import { ErrorNotice, Field, Form, Notice, Submit, useAction } from '../../ui/form';
import { useLoad } from '../../ui/load';
import { SettingsPage, TableWrap, when } from './nav';
import { ScopeList, ScopePicker } from './scopes';

type Key = { id: string; name: string; prefix: string; mode: 'live' | 'test'; scopes: string[]; created_at: string; last_used_at: string | null };
type Created = Key & { key: string };
const USAGE_DAYS = 14;

function CreateKey(props: { onCreated: (key: Created) => void }) {
  const [name, setName] = useState('');
  const [mode, setMode] = useState<'live' | 'test'>('live');
  const [scopes, setScopes] = useState<string[]>([]);
  const create = useAction(async () => {
    const created = await unwrap(api.POST('/api-keys', { body: { name, mode, scopes } }));
    props.onCreated({ ...created, last_used_at: null });
    setName('');
    setScopes([]);
  });
  return (
    <section class="card" aria-labelledby="create-key-heading">
      <h2 id="create-key-heading">Create a key</h2>
      <ErrorNotice error={create.error} />
      <Form onSubmit={create.run} label="Create a key">
        <Field
          label="Name"
          name="name"
          value={name}
          onInput={setName}
          maxLength={100}
          hint="Where it is used, e.g. “Billing service (production)”."
          error={create.fieldError('name')}
          required
        />
        <fieldset class="modes">
          <legend>Mode</legend>
          <label class="check">
            <input type="radio" name="mode" value="live" checked={mode === 'live'} onChange={() => setMode('live')} /> Live: sends deliver
          </label>
          <label class="check">
            <input type="radio" name="mode" value="test" checked={mode === 'test'} onChange={() => setMode('test')} /> Test: sends go to the simulation, never
            delivered
          </label>
        </fieldset>
        <ScopePicker value={scopes} onChange={setScopes} />
        <Submit busy={create.busy}>Create key</Submit>
      </Form>
    </section>
  );
}

export default function Keys() {
  const who = identity.value;
  const [keys, setKeys] = useState<Key[] | undefined>(undefined);
  const [usage, setUsage] = useState<Record<string, number[]>>({});
  const [created, setCreated] = useState<Created | undefined>(undefined);
  const load = useLoad(
    () => Promise.all([unwrap(api.GET('/api-keys')), unwrap(api.GET('/api-keys/usage', { params: { query: { days: USAGE_DAYS } } }))]),
    [],
    ([list, use]) => {
      setKeys(list.items);
      setUsage(Object.fromEntries(use.items.map((u) => [u.key_id, u.series.map((d) => d.count)])));
    },
  );
  return (
    <SettingsPage title="API keys" lead="Keys authenticate your servers to the API and SMTP. Each is shown once when made: store it in your secrets manager.">
      {created && (
        <section class="card" aria-labelledby="new-key-heading" data-testid="new-key">
          <h2 id="new-key-heading">Your new key “{created.name}”</h2>
          <Notice kind="warning" title="Copy it now">
            This is the only time the whole key is shown. Lost, it cannot be recovered: revoke it and make another.
          </Notice>
          <SecretOnce value={created.key} label="the new API key" />
          <div class="actions">
            <a href={`/app/settings/keys/${created.id}`}>Open the key</a>
            <button type="button" class="secondary" onClick={() => setCreated(undefined)}>
              I have stored it
            </button>
          </div>
        </section>
      )}
      <ErrorNotice error={load.error} />
      <TableWrap label="API keys table">
        <table>
          <caption class="visually-hidden">Active API keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Mode</th>
              <th scope="col">Scopes</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Requests, {USAGE_DAYS} days</th>
            </tr>
          </thead>
          <tbody>
            {keys === undefined && !load.error && (
              <tr>
                <td colSpan={7} class="muted">
                  Loading…
                </td>
              </tr>
            )}
            {keys?.length === 0 && (
              <tr>
                <td colSpan={7} class="muted">
                  No keys yet.
                </td>
              </tr>
            )}
            {keys?.map((k) => (
              <tr key={k.id}>
                <th scope="row">
                  <a href={`/app/settings/keys/${k.id}`}>{k.name}</a>
                </th>
                <td>
                  <code data-testid="key-prefix">{k.prefix}…</code>
                </td>
                <td>
                  <span class={`badge ${k.mode === 'live' ? 'ok' : ''}`}>{k.mode}</span>
                </td>
                <td>
                  <ScopeList scopes={k.scopes} />
                </td>
                <td>{when(k.created_at)}</td>
                <td>{k.last_used_at ? when(k.last_used_at) : 'never'}</td>
                <td>
                  {usage[k.id] ? (
                    // The figure beside the line: a key with no requests draws a flat line that says nothing by itself.
                    <span class="spark-cell">
                      <Sparkline values={usage[k.id]!} label={`Requests with ${k.name}`} unit="days" width={120} height={28} />
                      <span aria-hidden="true">{usage[k.id]!.reduce((a, b) => a + b, 0)}</span>
                    </span>
                  ) : (
                    '—'
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      {hasRole(who, 'developer') ? (
        <CreateKey
          onCreated={(key) => {
            setCreated(key);
            void load.reload();
          }}
        />
      ) : (
        <p class="muted">Your role ({who?.user?.role}) can see keys but not make or change them: ask a developer, admin or owner.</p>
      )}
    </SettingsPage>
  );
}
