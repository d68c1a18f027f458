// A campaign's MD5 suppression list: while it is a draft or scheduled (what PATCH /campaigns/{id}/md5-list allows) one
// of the workspace's lists is attached or cleared here; once it has started, which list it had and how many recipients
// it skipped for being on it.
import { useState } from 'preact/hooks';
import { api, unwrap, unwrapList } from '../../api';
import { ErrorNotice, Form, Notice, Submit, useAction } from '../../ui/form';
import { useLoad } from '../../ui/load';
import { counted } from '../audiences/nav';

/** The statuses the API lets the list change in; after them it answers 409, shown as it wrote it. */
const EDITABLE = ['draft', 'scheduled'];

interface Campaign {
  id: string;
  status: string;
  md5_list_id: string | null;
  progress: { skipped: { md5_listed: number } };
}

export function Md5ListPanel(props: { campaign: Campaign; canWrite: boolean; onChange: () => void }) {
  const c = props.campaign;
  const editable = props.canWrite && EDITABLE.includes(c.status);
  // 200, the API's largest page: a workspace with more lists than that finds the rest by name on their own page.
  const lists = useLoad(() => unwrapList(api.GET('/md5-lists', { params: { query: { limit: 200 } } })), []);
  const [choice, setChoice] = useState(c.md5_list_id ?? '');
  const [saved, setSaved] = useState<string | undefined>(undefined);
  const save = useAction(async () => {
    setSaved(undefined);
    await unwrap(api.PATCH('/campaigns/{id}/md5-list', { params: { path: { id: c.id } }, body: { list_id: choice || null } }));
    setSaved(choice ? 'MD5 list attached' : 'MD5 list cleared');
    props.onChange();
  });
  const attached = c.md5_list_id ? lists.data?.items.find((l) => l.id === c.md5_list_id) : undefined;
  const started = !EDITABLE.includes(c.status);
  if (started && !c.md5_list_id && c.progress.skipped.md5_listed === 0) return null;
  return (
    <section class="card" aria-labelledby="md5-heading">
      <h2 id="md5-heading">MD5 suppression list</h2>
      <p data-testid="md5-attached">
        {c.md5_list_id ? (
          <>
            Skips everyone on <a href={`/app/audiences/md5-lists/${c.md5_list_id}`}>{attached?.name ?? 'its MD5 list'}</a>.
          </>
        ) : (
          'No MD5 list: nobody is skipped for being on one.'
        )}
      </p>
      {started && <p data-testid="md5-skipped">{counted(c.progress.skipped.md5_listed, 'recipient', 'recipients')} skipped for being on it.</p>}
      <ErrorNotice error={save.error ?? lists.error} />
      <div aria-live="polite">{saved && <Notice kind="done" title={saved} />}</div>
      {editable && (
        <Form onSubmit={save.run} label="MD5 suppression list">
          <div class="search-row">
            <div class="field">
              <label for="md5-list">Skip the addresses on</label>
              <select id="md5-list" value={choice} onChange={(e) => setChoice((e.currentTarget as HTMLSelectElement).value)}>
                <option value="">No MD5 list</option>
                {lists.data?.items.map((l) => (
                  <option key={l.id} value={l.id}>
                    {l.name} ({counted(l.entry_count, 'hash', 'hashes')})
                  </option>
                ))}
              </select>
            </div>
            <Submit busy={save.busy} class="secondary">
              Save MD5 list
            </Submit>
          </div>
        </Form>
      )}
    </section>
  );
}
