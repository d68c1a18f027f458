// Getting started: the path from a new account to a delivered message, as a checklist whose every step reads its
// state from the API (a domain, its records verified, a key, a send, a delivery), so a returning user sees where
// they stopped. The domain steps are the domain page's parts; the others are in onboarding-steps.tsx.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, unwrap, unwrapList } from '../api';
import { listDomains, useVerificationWatch, type Domain } from '../domains';
import { hasRole, identity } from '../session';
import { DomainStatus, RecordActions, RecordsTable } from '../ui/dns-records';
import { ErrorNotice, Notice } from '../ui/form';
import { useTitle } from '../ui/layout';
import { useLoad } from '../ui/load';
import { AddDomainForm } from './domains';
import { ActivityStep, KeyStep, SendStep, type ApiKey } from './onboarding-steps';

function Step(props: { n: number; title: string; done: boolean; children: ComponentChildren }) {
  const id = `step-${props.n}`;
  return (
    <li class={`step${props.done ? ' done' : ''}`} aria-labelledby={id} data-testid={id}>
      <div class="step-head">
        <span class="step-mark" aria-hidden="true">
          {props.done ? '✓' : props.n}
        </span>
        <h2 id={id}>{props.title}</h2>
        <span class={`badge ${props.done ? 'ok' : ''}`} data-testid={`${id}-state`}>
          {props.done ? 'Done' : 'Not done'}
        </span>
      </div>
      <div class="step-body">{props.children}</div>
    </li>
  );
}

/** The domain onboarding follows: one that can send, else the newest added. */
const pick = (domains: Domain[]) => domains.find((d) => d.status === 'verified') ?? domains[0];

export default function Onboarding() {
  useTitle('Get started');
  const who = identity.value;
  const [domain, setDomain] = useState<Domain | undefined>(undefined);
  const [keys, setKeys] = useState<ApiKey[] | undefined>(undefined);
  const [sendId, setSendId] = useState<string | undefined>(undefined);
  const [delivered, setDelivered] = useState(false);
  const load = useLoad(
    () =>
      Promise.all([
        listDomains(20),
        unwrap(api.GET('/api-keys')),
        unwrapList(api.GET('/sends', { params: { query: { limit: 1 } } })),
        unwrapList(api.GET('/sends', { params: { query: { limit: 1, status: 'delivered' } } })),
      ]),
    [],
    ([domains, keyList, sends, deliveries]) => {
      setDomain(pick(domains.items));
      setKeys(keyList.items);
      setSendId(sends.items[0]?.id);
      setDelivered(deliveries.total > 0);
    },
  );
  const live = useVerificationWatch(domain, setDomain);

  // A delivery is seen through the send step's own polling; re-read the count when a new send is made.
  useEffect(() => {
    if (!sendId || delivered) return;
    let alive = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const check = async (left: number) => {
      const page = await unwrapList(api.GET('/sends', { params: { query: { limit: 1, status: 'delivered' } } })).catch(() => undefined);
      if (!alive) return;
      if (page && page.total > 0) return setDelivered(true);
      if (left > 0) timer = setTimeout(() => void check(left - 1), 3000);
    };
    void check(20);
    return () => {
      alive = false;
      clearTimeout(timer);
    };
  }, [sendId, delivered]);

  if (load.data === undefined) {
    return (
      <>
        <h1>Get started</h1>
        {load.error ? <ErrorNotice error={load.error} /> : <p class="muted">Loading your progress…</p>}
      </>
    );
  }
  const verified = domain?.status === 'verified';
  const done = [domain !== undefined, verified, (keys?.length ?? 0) > 0, sendId !== undefined, delivered];
  const count = done.filter(Boolean).length;
  return (
    <>
      <div class="page-head">
        <h1>Get started</h1>
        <p class="muted" data-testid="progress">
          {count} of {done.length} steps done
        </p>
      </div>
      <progress class="progress" max={done.length} value={count} aria-label="Onboarding progress" />
      {!hasRole(who, 'developer') && (
        <Notice kind="info" title="You can follow along">
          Your role ({who?.user?.role}) reads the workspace; a developer, admin or owner takes these steps.
        </Notice>
      )}
      <ol class="checklist">
        <Step n={1} title="Add a sending domain" done={done[0]!}>
          {domain ? (
            <p>
              <a href={`/app/domains/${domain.id}`}>{domain.unicode_name}</a> <DomainStatus status={domain.status} />
            </p>
          ) : (
            <AddDomainForm onAdded={setDomain} />
          )}
        </Step>
        <Step n={2} title="Publish the DNS records" done={done[1]!}>
          {domain ? (
            <>
              <p>Add these records at your DNS host; Mailpath checks for them while this page is open.</p>
              <RecordsTable domain={domain} />
              <ErrorNotice error={live.error} />
              <RecordActions domain={domain} watch={live.watch} onCheck={live.checkNow} canCheck />
            </>
          ) : (
            <p class="muted">Add a domain first: its records show here.</p>
          )}
        </Step>
        <Step n={3} title="Create an API key" done={done[2]!}>
          <KeyStep keys={keys ?? []} onCreated={(k) => setKeys((list) => [k, ...(list ?? [])])} />
        </Step>
        <Step n={4} title="Send a test message" done={done[3]!}>
          <SendStep from={verified ? `hello@${domain!.name}` : undefined} to={who?.user?.email ?? ''} onSent={setSendId} />
        </Step>
        <Step n={5} title="Watch it arrive" done={done[4]!}>
          <ActivityStep sendId={sendId} />
        </Step>
      </ol>
    </>
  );
}
