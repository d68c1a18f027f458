// Team and roles: the members with their roles (changed or removed by admins and owners), an invite by e-mail and role
// whose accept link is shown once, and the pending invites (revocable). The API decides who may manage whom (an
// admin cannot touch an owner, the last owner stays): the page shows its refusal as it words it.
import { useEffect, useState } from 'preact/hooks';
import { api, unwrap } from '../../api';
import { hasRole, identity } from '../../session';
import { ConfirmButton } from '../../ui/confirm';
import { SecretOnce } from '../../ui/copy';
import { ErrorNotice, Field, Form, Notice, Submit, useAction } from '../../ui/form';
import { useLoad } from '../../ui/load';
import { SettingsPage, TableWrap, when } from './nav';

const ROLES = ['viewer', 'developer', 'admin', 'owner'] as const;
type Role = (typeof ROLES)[number];
const ROLE_HINT: Record<Role, string> = {
  viewer: 'reads everything, changes nothing',
  developer: 'also keys, templates, domains, sends',
  admin: 'also the team (not owners)',
  owner: 'everything, owners and audit exports included',
};
type Member = { id: string; email: string; first_name: string | null; role: Role; created_at: string; two_factor_enabled: boolean };
type Invite = { id: string; email: string; role: Role; created_at: string; expires_at: string };
type Sent = Invite & { accept_url: string; email_sent: boolean };

function RoleSelect(props: { id: string; value: Role; onChange: (role: Role) => void; label: string }) {
  return (
    <>
      <label for={props.id} class="visually-hidden">
        {props.label}
      </label>
      <select id={props.id} value={props.value} onChange={(e) => props.onChange(e.currentTarget.value as Role)}>
        {ROLES.map((r) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>
    </>
  );
}

/** The accept link as the dashboard serves it: the API's link points at the public site's /accept-invite. */
function appLink(acceptUrl: string): string {
  const url = new URL(acceptUrl, location.origin);
  return `${location.origin}/app/accept-invite${url.search}`;
}

function InviteForm(props: { onSent: (sent: Sent) => void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('developer');
  const invite = useAction(async () => {
    props.onSent(await unwrap(api.POST('/team/invites', { body: { email, role } })));
    setEmail('');
  });
  return (
    <section class="card" aria-labelledby="invite-heading">
      <h2 id="invite-heading">Invite someone</h2>
      <ErrorNotice error={invite.error} />
      <Form onSubmit={invite.run} label="Invite someone">
        <Field label="Email" name="invite-email" type="email" value={email} onInput={setEmail} autoComplete="off" error={invite.fieldError('email')} required />
        <fieldset class="modes">
          <legend>Role</legend>
          {ROLES.map((r) => (
            <label key={r} class="check">
              <input type="radio" name="invite-role" value={r} checked={role === r} onChange={() => setRole(r)} /> {r}:{' '}
              <span class="muted">{ROLE_HINT[r]}</span>
            </label>
          ))}
        </fieldset>
        <Submit busy={invite.busy}>Send invite</Submit>
      </Form>
    </section>
  );
}

function MemberRow(props: { member: Member; manage: boolean; me: boolean; onChanged: () => void; onError: (err: unknown) => void }) {
  const m = props.member;
  const [role, setRole] = useState<Role>(m.role);
  const act = useAction(async (what: 'role' | 'remove') => {
    if (what === 'role') await unwrap(api.PATCH('/team/members/{id}', { params: { path: { id: m.id } }, body: { role } }));
    else await unwrap(api.DELETE('/team/members/{id}', { params: { path: { id: m.id } } }));
    props.onChanged();
  });
  useEffect(() => props.onError(act.error), [act.error]);
  return (
    <tr>
      <th scope="row">
        {m.email}
        {props.me && <span class="muted"> (you)</span>}
        {m.first_name && <div class="muted">{m.first_name}</div>}
      </th>
      <td>
        {props.manage ? (
          <div class="inline">
            <RoleSelect id={`role-${m.id}`} value={role} onChange={setRole} label={`Role of ${m.email}`} />
            <button
              type="button"
              class="secondary"
              disabled={act.busy || role === m.role}
              onClick={() => act.run('role')}
              aria-label={`Save the role of ${m.email}`}
            >
              Save
            </button>
          </div>
        ) : (
          <span class="badge">{m.role}</span>
        )}
      </td>
      <td>{m.two_factor_enabled ? <span class="badge ok">on</span> : <span class="badge">off</span>}</td>
      <td>{when(m.created_at)}</td>
      {props.manage && (
        <td>
          <ConfirmButton label="Remove" ariaLabel={`Remove ${m.email}`} title={`Remove ${m.email}?`} onConfirm={() => act.run('remove')} busy={act.busy}>
            <p>Their sessions end at once. Keys they made keep working until revoked.</p>
          </ConfirmButton>
        </td>
      )}
    </tr>
  );
}

export default function Team() {
  const who = identity.value;
  const manage = hasRole(who, 'admin');
  const [members, setMembers] = useState<Member[] | undefined>(undefined);
  const [invites, setInvites] = useState<Invite[] | undefined>(undefined);
  const [sent, setSent] = useState<Sent | undefined>(undefined);
  const [rowError, setRowError] = useState<unknown>(undefined);
  const load = useLoad(
    async () => {
      const team = await unwrap(api.GET('/team/members'));
      // Pending invites are the admins' business (the API refuses the list to others).
      return { team: team.items, invites: manage ? (await unwrap(api.GET('/team/invites'))).items : undefined };
    },
    [],
    (answer) => {
      setMembers(answer.team);
      setInvites(answer.invites);
    },
  );
  const revoke = useAction(async (id: string) => {
    await unwrap(api.DELETE('/team/invites/{id}', { params: { path: { id } } }));
    await load.reload();
  });
  return (
    <SettingsPage title="Team" lead="Everyone who signs in to this workspace, and what their role lets them do.">
      <ErrorNotice error={load.error ?? rowError} />
      <TableWrap label="Team members table">
        <table>
          <caption class="visually-hidden">Team members</caption>
          <thead>
            <tr>
              <th scope="col">Member</th>
              <th scope="col">Role</th>
              <th scope="col">Two-factor</th>
              <th scope="col">Joined</th>
              {manage && <th scope="col">Remove</th>}
            </tr>
          </thead>
          <tbody>
            {!members && !load.error && (
              <tr>
                <td colSpan={5} class="muted">
                  Loading…
                </td>
              </tr>
            )}
            {members?.map((m) => (
              <MemberRow
                key={`${m.id}-${m.role}`}
                member={m}
                manage={manage}
                me={m.id === who?.user?.id}
                onChanged={() => load.reload()}
                onError={setRowError}
              />
            ))}
          </tbody>
        </table>
      </TableWrap>
      {!manage && <p class="muted">Only admins and owners invite, change roles or remove members.</p>}
      {sent && (
        <section class="card" aria-labelledby="sent-heading" data-testid="invite-sent">
          <h2 id="sent-heading">Invite for {sent.email}</h2>
          <Notice kind="done" title={sent.email_sent ? 'Invite e-mailed' : 'Invite made: send the link yourself'}>
            The link works once, until {when(sent.expires_at)}, and is not shown again.
          </Notice>
          <SecretOnce value={appLink(sent.accept_url)} label="the invite link" />
        </section>
      )}
      {manage && (
        <>
          <InviteForm
            onSent={(s) => {
              setSent(s);
              void load.reload();
            }}
          />
          <h2>Pending invites</h2>
          <ErrorNotice error={revoke.error} />
          <TableWrap label="Pending invites table">
            <table>
              <caption class="visually-hidden">Pending invites</caption>
              <thead>
                <tr>
                  <th scope="col">Email</th>
                  <th scope="col">Role</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Revoke</th>
                </tr>
              </thead>
              <tbody>
                {invites?.length === 0 && (
                  <tr>
                    <td colSpan={4} class="muted">
                      No pending invites.
                    </td>
                  </tr>
                )}
                {invites?.map((i) => (
                  <tr key={i.id}>
                    <th scope="row">{i.email}</th>
                    <td>{i.role}</td>
                    <td>{when(i.expires_at)}</td>
                    <td>
                      <ConfirmButton
                        label="Revoke"
                        ariaLabel={`Revoke the invite of ${i.email}`}
                        title={`Revoke the invite of ${i.email}?`}
                        onConfirm={() => revoke.run(i.id)}
                      >
                        <p>The link stops working at once.</p>
                      </ConfirmButton>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        </>
      )}
    </SettingsPage>
  );
}
