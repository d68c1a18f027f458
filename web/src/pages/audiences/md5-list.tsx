// One MD5 list: its facts, and hashes added from a file (as an advertiser hands it out, one MD5 per line) or pasted,
// sent as they are to the API, which streams them; what it made of them is shown as it counted them.
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso/router';
import { ApiError, api, unwrap } from '../../api';
import { hasRole, identity } from '../../session';
import { Facts } from '../../ui/facts';
import { ErrorNotice, Form, Notice, Submit, useAction } from '../../ui/form';
import { Loading, useLoad } from '../../ui/load';
import { NotFoundMessage } from '../not-found';
import { when } from '../settings/nav';
import { AudiencePage, counted } from './nav';

interface UploadResult {
  added: number;
  duplicates: number;
  invalid: number;
  invalid_lines: number[];
}

/** What the API made of an upload, in its own counts. */
function uploadWords(r: UploadResult): string {
  const repeated = `${r.duplicates.toLocaleString()} already in the list or repeated`;
  const counts = `${r.added.toLocaleString()} added, ${repeated}, ${counted(r.invalid, 'invalid line', 'invalid lines')}`;
  if (r.invalid_lines.length === 0) return `${counts}.`;
  const which = r.invalid > r.invalid_lines.length ? `the first ${r.invalid_lines.length}: ` : '';
  return `${counts} (${which}line${r.invalid_lines.length === 1 ? '' : 's'} ${r.invalid_lines.join(', ')}).`;
}

function UploadHashes(props: { id: string; onAdded: () => void }) {
  const [file, setFile] = useState<File | undefined>(undefined);
  const [text, setText] = useState('');
  const [result, setResult] = useState<UploadResult | undefined>(undefined);
  const [form, setForm] = useState(0);
  const upload = useAction(async () => {
    setResult(undefined);
    const pasted = text.trim() !== '';
    if (!file && !pasted) throw new Error('Choose a file or paste hashes first.');
    // One body a time, so the invalid line numbers the API names are lines of what was given.
    if (file && pasted) throw new Error('Upload the file or the pasted hashes, not both at once.');
    const answer = await unwrap(
      api.POST('/md5-lists/{id}/entries', {
        params: { path: { id: props.id } },
        // A file is the body as it is: the API streams it, so nothing here reads it into memory.
        body: (file ?? text) as unknown as string,
        bodySerializer: (body: unknown) => body as BodyInit,
        headers: { 'content-type': 'text/plain' },
      }),
    );
    setResult(answer);
    setFile(undefined);
    setText('');
    // A new key gives a fresh file input: its chosen file cannot be cleared otherwise.
    setForm((n) => n + 1);
    props.onAdded();
  });
  return (
    <section class="card" aria-labelledby="upload-heading">
      <h2 id="upload-heading">Add hashes</h2>
      <p class="muted">
        One MD5 per line: 32 hex digits of the lower-cased address. Blank lines are skipped; any other line that is not a hash is counted as invalid.
      </p>
      <ErrorNotice error={upload.error} />
      <div aria-live="polite">
        {result && (
          <Notice kind="done" title="Uploaded">
            {uploadWords(result)}
          </Notice>
        )}
      </div>
      <Form onSubmit={upload.run} label="Add hashes" key={form}>
        <div class="field">
          <label for="md5-file">File of hashes (.txt or .csv)</label>
          <input id="md5-file" type="file" accept=".txt,.csv,text/plain,text/csv" onChange={(e) => setFile((e.currentTarget as HTMLInputElement).files?.[0])} />
        </div>
        <div class="field">
          <label for="md5-text">Or paste hashes</label>
          <textarea
            id="md5-text"
            class="mono"
            rows={6}
            spellcheck={false}
            value={text}
            onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
          />
        </div>
        <Submit busy={upload.busy}>Upload hashes</Submit>
      </Form>
    </section>
  );
}

export default function Md5List() {
  const { params } = useRoute();
  const id = params['id']!;
  const [version, setVersion] = useState(0);
  const load = useLoad(() => unwrap(api.GET('/md5-lists/{id}', { params: { path: { id } } })), [id, version]);
  const notFound = load.error instanceof ApiError && load.error.status === 404;
  // Another workspace's list reads as no list at all.
  if (notFound) return <NotFoundMessage />;
  return (
    <AudiencePage title={load.data?.name ?? 'MD5 list'}>
      <Loading state={load} what="the MD5 list">
        {(l) => (
          <>
            <section class="card" aria-labelledby="facts-heading">
              <h2 id="facts-heading">About this list</h2>
              <Facts
                testId="md5-list-facts"
                items={[
                  ['Entries', <span data-testid="entry-count">{counted(l.entry_count, 'hash', 'hashes')}</span>],
                  ['Created', when(l.created_at)],
                  ['Last changed', when(l.updated_at)],
                ]}
              />
              <p class="hint">
                Attach it to a campaign on the campaign's page. <a href="/app/audiences/md5-lists">All MD5 lists</a>
              </p>
            </section>
            {hasRole(identity.value, 'developer') && <UploadHashes id={id} onAdded={() => setVersion((v) => v + 1)} />}
          </>
        )}
      </Loading>
    </AudiencePage>
  );
}
