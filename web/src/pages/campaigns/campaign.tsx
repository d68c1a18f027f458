// One campaign: a draft's editor and its send (with the forecast), or a started one's progress (read again every three
// seconds while it sends) and its report; its MD5 suppression list either way; a preview and a proof.
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso/router';
import { api, unwrap } from '../../api';
import { hasRole, identity } from '../../session';
import { useTitle } from '../../ui/layout';
import { Loading, useLoad, useWatch } from '../../ui/load';
import { CampaignEditor, draftOf, EMPTY_DRAFT } from './editor';
import { AbTest } from './ab-test';
import { Engagement } from './engagement';
import { Md5ListPanel } from './md5-list';
import { CampaignPreview } from './preview';
import { ProofSend } from './proof';
import { CampaignReport } from './report';
import { SendPanel } from './send';

export default function Campaign() {
  const { params } = useRoute();
  const id = params['id'] === 'new' ? undefined : params['id'];
  const [version, setVersion] = useState(0);
  const load = useLoad(async () => (id ? unwrap(api.GET('/campaigns/{id}', { params: { path: { id } } })) : undefined), [id, version]);
  const c = load.data;
  useTitle(id ? (c?.name ?? 'Campaign') : 'New campaign');
  const moving = c ? ['sending', 'scheduled'].includes(c.status) : false;
  useWatch(moving, load, () => setVersion((v) => v + 1));
  const canWrite = hasRole(identity.value, 'developer');
  return (
    <>
      <p>
        <a href="/app/campaigns">All campaigns</a>
      </p>
      <h1>{id ? (c?.name ?? 'Campaign') : 'New campaign'}</h1>
      {!id && <CampaignEditor id={undefined} initial={EMPTY_DRAFT} onSaved={() => {}} />}
      {id && (
        <Loading state={load} what="the campaign">
          {(c) => (
            <>
              {canWrite && <SendPanel campaign={c} onChange={() => setVersion((v) => v + 1)} />}
              <Md5ListPanel campaign={c} canWrite={canWrite} onChange={() => setVersion((v) => v + 1)} />
              {c.status === 'draft' && canWrite && <CampaignEditor key={c.id} id={c.id} initial={draftOf(c)} onSaved={() => setVersion((v) => v + 1)} />}
              {c.status !== 'draft' && c.ab_split_pct !== null && <AbTest id={c.id} version={version} onFinalized={() => setVersion((v) => v + 1)} />}
              {c.status !== 'draft' && <CampaignReport id={c.id} version={version} />}
              {c.status !== 'draft' && <Engagement id={c.id} version={version} />}
              <CampaignPreview id={c.id} hasVariantB={c.subject_b !== null} />
              {canWrite && <ProofSend id={c.id} hasVariantB={c.subject_b !== null} />}
            </>
          )}
        </Loading>
      )}
    </>
  );
}
