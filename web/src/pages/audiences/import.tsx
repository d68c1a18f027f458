// One import: its progress (watched until it ends), its counts, the first invalid rows with their line and reason,
// and the file of all of them.
import { useRoute } from 'preact-iso/router';
import { api, unwrap } from '../../api';
import { Facts } from '../../ui/facts';
import { Loading, useLoad, useWatch } from '../../ui/load';
import { TableWrap, when } from '../settings/nav';
import { ImportBar } from './imports';
import { AudiencePage } from './nav';

export default function Import() {
  const { params } = useRoute();
  const id = params['id']!;
  const load = useLoad(() => unwrap(api.GET('/contacts/imports/{id}', { params: { path: { id } } })), [id]);
  const ended = load.data ? ['completed', 'failed'].includes(load.data.status) : false;
  useWatch(load.data !== undefined && !ended, load, () => void load.reload());
  return (
    <AudiencePage title="Import">
      <Loading state={load} what="the import">
        {(i) => (
          <>
            <section class="card" aria-labelledby="progress-heading">
              <h2 id="progress-heading">Progress</h2>
              <ImportBar row={i} label="Import progress" />
              {i.error && <p class="field-error">{i.error}</p>}
              <Facts
                testId="import-counts"
                items={[
                  ['Status', i.status],
                  ['New contacts', i.inserted.toLocaleString()],
                  ['Updated', i.updated.toLocaleString()],
                  ['Left as they were', i.skipped.toLocaleString()],
                  ['Invalid rows', i.invalid.toLocaleString()],
                  ['File', `${i.format.toUpperCase()}, ${i.bytes.toLocaleString()} bytes`],
                  ['Started', when(i.started_at ?? i.created_at)],
                  ['Finished', when(i.finished_at)],
                ]}
              />
            </section>
            {i.invalid > 0 && (
              <section class="card" aria-labelledby="errors-heading">
                <h2 id="errors-heading">Invalid rows</h2>
                <TableWrap label="Invalid rows">
                  <table data-testid="import-errors">
                    <caption class="visually-hidden">The first invalid rows, by line</caption>
                    <thead>
                      <tr>
                        <th scope="col" class="num">
                          Line
                        </th>
                        <th scope="col">Why</th>
                      </tr>
                    </thead>
                    <tbody>
                      {i.errors.map((e) => (
                        <tr key={e.line}>
                          <td class="num">{e.line}</td>
                          <td>{e.reason}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableWrap>
                <p>
                  <a href={`/api/v1/contacts/imports/${i.id}/errors.csv`} download>
                    Download every invalid row (CSV)
                  </a>
                </p>
              </section>
            )}
          </>
        )}
      </Loading>
    </AudiencePage>
  );
}
