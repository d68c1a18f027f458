// Imports: a CSV or NDJSON file uploaded as it is (the API streams it to storage and imports it in the background),
// optionally into a list, and every import of the workspace with its progress, watched until it ends.
import { useState } from 'preact/hooks';
import { api, unwrap, unwrapList } from '../../api';
import { hasRole, identity } from '../../session';
import { ErrorNotice, Form, Notice, Submit, useAction } from '../../ui/form';
import { Loading, useLoad, useWatch } from '../../ui/load';
import { TableWrap, when } from '../settings/nav';
import { AudiencePage } from './nav';

const RUNNING = ['uploading', 'queued', 'running'];

interface ImportProgress {
  status: string;
  rows_total: number | null;
  rows_done: number;
}

/** A progress bar that says where it stands in words too; without a known total it is indeterminate. */
export function ImportBar(props: { row: ImportProgress; label: string }) {
  const { row } = props;
  const done = row.status === 'completed';
  const total = row.rows_total ?? undefined;
  const words = done
    ? `${row.rows_done.toLocaleString()} rows done`
    : total === undefined
      ? `${row.rows_done.toLocaleString()} rows so far (${row.status})`
      : `${row.rows_done.toLocaleString()} of ${total.toLocaleString()} rows (${row.status})`;
  return (
    <div>
      <progress
        class="progress"
        aria-label={props.label}
        max={total ?? (done ? row.rows_done || 1 : undefined)}
        value={done ? (total ?? (row.rows_done || 1)) : total === undefined ? undefined : row.rows_done}
      />
      <span class="hint block" data-testid="import-progress">
        {words}
      </span>
    </div>
  );
}

function Upload(props: { onStarted: () => void }) {
  const lists = useLoad(() => unwrapList(api.GET('/lists', { params: { query: { limit: 200 } } })), []);
  const [file, setFile] = useState<File | undefined>(undefined);
  const [listId, setListId] = useState('');
  const [skipExisting, setSkipExisting] = useState(false);
  const [started, setStarted] = useState<string | undefined>(undefined);
  const upload = useAction(async () => {
    if (!file) throw new Error('Choose a file first.');
    const type = /\.(ndjson|jsonl)$/i.test(file.name) ? 'application/x-ndjson' : 'text/csv';
    const answer = await unwrap(
      api.POST('/contacts/imports', {
        params: { query: { on_existing: skipExisting ? 'skip' : 'update', ...(listId ? { list_id: listId } : {}) } },
        // The file is the body as it is: the API streams it, so nothing here reads it into memory.
        body: file as unknown as string,
        bodySerializer: (body: unknown) => body as BodyInit,
        headers: { 'content-type': type },
      }),
    );
    setStarted(answer.id);
    props.onStarted();
  });
  return (
    <section class="card" aria-labelledby="upload-heading">
      <h2 id="upload-heading">Import a file</h2>
      <p class="muted">
        CSV with a header line (email, first_name, …, a custom field's key) or NDJSON, one contact per line. Bad rows are skipped and listed with their line.
      </p>
      <ErrorNotice error={upload.error} />
      <div aria-live="polite">
        {started && (
          <Notice kind="done" title="Import started">
            <a href={`/app/audiences/imports/${started}`}>Follow it</a>, or watch it below.
          </Notice>
        )}
      </div>
      <Form onSubmit={upload.run} label="Import contacts">
        <div class="field">
          <label for="import-file">File to import</label>
          <input
            id="import-file"
            type="file"
            accept=".csv,.ndjson,.jsonl,text/csv"
            onChange={(e) => setFile((e.currentTarget as HTMLInputElement).files?.[0])}
          />
        </div>
        <div class="field">
          <label for="import-list">Add everyone imported to a list</label>
          <select id="import-list" value={listId} onChange={(e) => setListId((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">No list</option>
            {lists.data?.items.map((l) => (
              <option key={l.id} value={l.id}>
                {l.name}
              </option>
            ))}
          </select>
        </div>
        <label class="check">
          <input type="checkbox" checked={skipExisting} onChange={(e) => setSkipExisting((e.currentTarget as HTMLInputElement).checked)} />
          Leave contacts that already exist as they are
        </label>
        <Submit busy={upload.busy}>Import</Submit>
      </Form>
    </section>
  );
}

export default function Imports() {
  const load = useLoad(() => unwrapList(api.GET('/contacts/imports', { params: { query: { limit: 50 } } })), []);
  const running = load.data?.items.some((i) => RUNNING.includes(i.status)) ?? false;
  // Read again while any import runs; stops by itself once all have ended.
  useWatch(running, load, () => void load.reload());
  return (
    <AudiencePage title="Imports" lead="Contacts from a file, imported in the background: a million rows take about a minute.">
      {hasRole(identity.value, 'developer') && <Upload onStarted={() => void load.reload()} />}
      <section class="card" aria-labelledby="imports-heading">
        <h2 id="imports-heading">Recent imports</h2>
        <Loading state={load} what="imports">
          {(page) =>
            page.items.length === 0 ? (
              <p>No imports yet.</p>
            ) : (
              <TableWrap label="Imports">
                <table data-testid="imports">
                  <caption class="visually-hidden">Imports, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Started</th>
                      <th scope="col">Progress</th>
                      <th scope="col" class="num">
                        New
                      </th>
                      <th scope="col" class="num">
                        Updated
                      </th>
                      <th scope="col" class="num">
                        Invalid
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.items.map((i) => (
                      <tr key={i.id} data-testid="import-row">
                        <td class="nowrap">
                          <a href={`/app/audiences/imports/${i.id}`}>{when(i.created_at)}</a>
                        </td>
                        <td>
                          <ImportBar row={i} label={`Import of ${when(i.created_at)}`} />
                          {i.error && <span class="field-error block">{i.error}</span>}
                        </td>
                        <td class="num">{i.inserted.toLocaleString()}</td>
                        <td class="num">{i.updated.toLocaleString()}</td>
                        <td class="num">{i.invalid.toLocaleString()}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            )
          }
        </Loading>
      </section>
    </AudiencePage>
  );
}
