import { useEffect, useRef, useState, type FormEvent } from 'react';
import { ApiError } from '../lib/api.ts';
import { useApi, useToast } from '../lib/context.ts';
import { formatTime } from '../lib/format.ts';
import { ROLE_LABEL, atLeast, needsRole } from '../lib/roles.ts';
import { navigate } from '../lib/router.ts';
import type { Invitation, Member, Project, Role } from '../lib/types.ts';
import { ActionsCell, ConfirmActions, ConfirmDialog, Dialog, ErrorNote, Field, HeadWithActions, RoleBadge, Spinner, useAction, useMe, useResource } from '../components/ui.tsx';
import { friendlyFieldError } from './Auth.tsx';

/** Why the caller may not remove `target`, or undefined when they may (docs/teams.md, "Roles"). */
function removeLock(caller: Role | undefined, target: Member): string | undefined {
  if (target.role === 'owner') return 'The owner cannot be removed; ownership can be transferred to an admin.';
  if (target.role === 'admin') return needsRole(caller, 'owner', 'Removing an admin');
  return needsRole(caller, 'admin', 'Removing a member');
}

/**
 * The project's people: members with their roles, invitations, and the owner's transfer. What the
 * caller's role may not do is disabled, with the role it needs in the title.
 */
export function MembersSection({ project, onProjectChange }: { project: Project; onProjectChange: (p: Project) => void }) {
  const api = useApi();
  const toast = useToast();
  const me = useMe();
  const base = `/v1/projects/${encodeURIComponent(project.id)}`;
  const members = useResource<{ data: Member[] }>(`${base}/members`);
  const canInvite = atLeast(project.role, 'admin');
  const invitations = useResource<{ data: Invitation[] }>(canInvite ? `${base}/invitations` : null);
  const [removing, setRemoving] = useState<Member | null>(null);
  const [transferOpen, setTransferOpen] = useState(false);
  const removal = useAction();
  const roleChange = useAction();
  const revoke = useAction();
  const section = useRef<HTMLElement>(null);

  // Linked to from the projects list as settings#members.
  const loaded = members.data !== undefined;
  useEffect(() => {
    if (loaded && location.hash === '#members') section.current?.scrollIntoView({ block: 'start' });
  }, [loaded]);

  const changeRole = (m: Member, role: Role) =>
    roleChange.run(async () => {
      const updated = await api.call<Member>('PUT', `${base}/members/${encodeURIComponent(m.userId)}`, { role });
      members.setData((old) => old && { data: old.data.map((x) => (x.userId === m.userId ? { ...x, ...updated } : x)) });
      toast(`${m.email} is now ${updated.role === 'admin' ? 'an admin' : 'a member'}.`);
    });

  const remove = (m: Member) =>
    removal.run(async () => {
      await api.call('DELETE', `${base}/members/${encodeURIComponent(m.userId)}`);
      members.setData((old) => old && { data: old.data.filter((x) => x.userId !== m.userId) });
      setRemoving(null);
      toast(`${m.email} was removed from ${project.name}.`);
    });

  const revokeInvitation = (inv: Invitation) =>
    revoke.run(async () => {
      await api.call('DELETE', `${base}/invitations/${encodeURIComponent(inv.id)}`);
      invitations.setData((old) => old && { data: old.data.filter((x) => x.id !== inv.id) });
      toast(`The invitation to ${inv.email} was revoked.`);
    });

  const list = members.data?.data;
  const pending = invitations.data?.data;
  const roleLock = needsRole(project.role, 'owner', 'Changing roles');
  const transferLock = needsRole(project.role, 'owner', 'Transferring ownership');
  return (
    <section className="card members" id="members" ref={section} aria-labelledby="members-heading">
      <div className="section-head">
        <h2 id="members-heading">Members</h2>
        <button type="button" className="secondary small" onClick={() => setTransferOpen(true)} disabled={!!transferLock} title={transferLock}>
          Transfer ownership…
        </button>
      </div>
      <p className="muted">
        Everyone here reads the logs, tails them live and manages alert rules. Admins also rename the project, rotate its key, manage destinations and invite
        people; the owner also changes roles, transfers ownership and deletes the project.
      </p>
      {members.error !== undefined && <ErrorNote error={members.error} onRetry={members.reload} />}
      {members.loading && !list && <Spinner label="Loading members…" />}
      {list && (
        <table className="table members-table">
          <caption className="visually-hidden">Members of {project.name}</caption>
          <HeadWithActions columns={['Email', 'Role', 'Joined']} />
          <tbody>
            {list.map((m) => {
              const self = m.userId === me?.id;
              const lock = removeLock(project.role, m);
              return (
                <tr key={m.userId}>
                  <td data-label="Email">
                    {m.email}
                    {self && <span className="muted"> (you)</span>}
                  </td>
                  <td data-label="Role">
                    {m.role === 'owner' ? (
                      <RoleBadge role="owner" />
                    ) : (
                      <select
                        aria-label={`Role of ${m.email}`}
                        value={m.role}
                        disabled={!!roleLock || roleChange.busy}
                        title={roleLock}
                        onChange={(e) => void changeRole(m, e.target.value as Role)}
                      >
                        <option value="admin">Admin</option>
                        <option value="member">Member</option>
                      </select>
                    )}
                  </td>
                  <td data-label="Joined">
                    <time dateTime={m.joinedAt}>{formatTime(m.joinedAt)}</time>
                  </td>
                  <ActionsCell>
                    {!self && (
                      <button type="button" className="danger-outline small" onClick={() => setRemoving(m)} disabled={!!lock} title={lock} aria-label={`Remove ${m.email}`}>
                        Remove
                      </button>
                    )}
                  </ActionsCell>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {roleChange.error !== undefined && <ErrorNote error={roleChange.error} />}

      <h3 className="subheading">Invite someone</h3>
      <InviteForm project={project} onInvited={(inv) => invitations.setData((old) => ({ data: [...(old?.data ?? []).filter((x) => x.id !== inv.id), inv] }))} />

      {canInvite && (
        <>
          {invitations.error !== undefined && <ErrorNote error={invitations.error} onRetry={invitations.reload} />}
          {pending && pending.length > 0 && (
            <table className="table invitations-table">
              <caption>Pending invitations</caption>
              <HeadWithActions columns={['Email', 'Role', 'Expires']} />
              <tbody>
                {pending.map((inv) => {
                  const lock = inv.role === 'admin' ? needsRole(project.role, 'owner', 'Revoking an admin invitation') : undefined;
                  return (
                    <tr key={inv.id}>
                      <td data-label="Email">{inv.email}</td>
                      <td data-label="Role">{ROLE_LABEL[inv.role]}</td>
                      <td data-label="Expires">
                        <time dateTime={inv.expiresAt}>{formatTime(inv.expiresAt)}</time>
                      </td>
                      <ActionsCell>
                        <button
                          type="button"
                          className="danger-outline small"
                          disabled={!!lock || revoke.busy}
                          title={lock}
                          onClick={() => void revokeInvitation(inv)}
                          aria-label={`Revoke the invitation to ${inv.email}`}
                        >
                          Revoke
                        </button>
                      </ActionsCell>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          )}
          {revoke.error !== undefined && <ErrorNote error={revoke.error} />}
        </>
      )}

      <ConfirmDialog
        target={removing}
        title="Remove this member?"
        onClose={() => setRemoving(null)}
        onConfirm={(m) => void remove(m)}
        label="Remove member"
        busyLabel="Removing…"
        busy={removal.busy}
        error={removal.error}
      >
        {(m) => (
          <p>
            <strong>{m.email}</strong> loses access to <strong>{project.name}</strong> at once: its logs, live tails and alert rules. They can be invited again later.
          </p>
        )}
      </ConfirmDialog>

      <Dialog open={transferOpen} title="Transfer ownership" onClose={() => setTransferOpen(false)}>
        <TransferForm
          project={project}
          admins={(list ?? []).filter((m) => m.role === 'admin')}
          onCancel={() => setTransferOpen(false)}
          onDone={(updated) => {
            setTransferOpen(false);
            onProjectChange(updated);
            members.reload();
          }}
        />
      </Dialog>
    </section>
  );
}

function InviteForm({ project, onInvited }: { project: Project; onInvited: (inv: Invitation) => void }) {
  const api = useApi();
  const toast = useToast();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<'member' | 'admin'>('member');
  const { busy, error, run } = useAction();
  const lock = needsRole(project.role, 'admin', 'Inviting');
  const adminLock = needsRole(project.role, 'owner', 'Inviting an admin');

  function submit(e: FormEvent) {
    e.preventDefault();
    void run(async () => {
      const inv = await api.call<Invitation>('POST', `/v1/projects/${encodeURIComponent(project.id)}/invitations`, { email: email.trim(), role });
      onInvited(inv);
      setEmail('');
      toast(`Invitation sent to ${inv.email}.`);
    });
  }
  const fe = error instanceof ApiError ? error.fieldErrors() : {};
  return (
    <form className="inline-form invite-form" onSubmit={submit} noValidate aria-label="Invite someone">
      <Field label="Email" error={fe.email && friendlyFieldError('email', fe.email)}>
        {(id, d) => (
          <input
            id={id}
            type="email"
            autoComplete="off"
            required
            maxLength={320}
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            aria-describedby={d}
            aria-invalid={fe.email ? true : undefined}
            disabled={!!lock}
            placeholder="teammate@example.com"
          />
        )}
      </Field>
      <Field label="Role" error={fe.role} hint={!lock && adminLock ? 'Only the owner invites admins.' : undefined}>
        {(id, d) => (
          <select id={id} value={role} onChange={(e) => setRole(e.target.value as 'member' | 'admin')} aria-describedby={d} disabled={!!lock}>
            <option value="member">Member</option>
            <option value="admin" disabled={!!adminLock}>
              Admin
            </option>
          </select>
        )}
      </Field>
      <button type="submit" className="primary" disabled={!!lock || busy || email.trim() === ''} title={lock}>
        {busy ? 'Sending…' : 'Send invitation'}
      </button>
      {error !== undefined && !fe.email && !fe.role && <ErrorNote error={error} />}
    </form>
  );
}

function TransferForm({ project, admins, onCancel, onDone }: { project: Project; admins: Member[]; onCancel: () => void; onDone: (p: Project) => void }) {
  const api = useApi();
  const toast = useToast();
  const [userId, setUserId] = useState(admins[0]?.userId ?? '');
  const { busy, error, run } = useAction();
  function submit(e: FormEvent) {
    e.preventDefault();
    const to = admins.find((a) => a.userId === userId);
    if (!to) return;
    void run(async () => {
      const updated = await api.call<Project>('POST', `/v1/projects/${encodeURIComponent(project.id)}/transfer`, { userId });
      toast(`${to.email} now owns ${project.name}. You are an admin.`);
      onDone(updated);
    });
  }
  if (admins.length === 0) {
    return (
      <>
        <p>Ownership goes to an admin of the project. Make a member an admin first (Role, in the members list), or invite someone as an admin.</p>
        <div className="form-actions">
          <button type="button" className="secondary" onClick={onCancel}>
            Close
          </button>
        </div>
      </>
    );
  }
  return (
    <form onSubmit={submit}>
      <p>
        The new owner can delete <strong>{project.name}</strong>, change roles and transfer it again; the project then counts against their plan. You stay on as an
        admin.
      </p>
      <Field label="New owner">
        {(id) => (
          <select id={id} value={userId} onChange={(e) => setUserId(e.target.value)}>
            {admins.map((a) => (
              <option key={a.userId} value={a.userId}>
                {a.email}
              </option>
            ))}
          </select>
        )}
      </Field>
      <ConfirmActions label="Transfer ownership" busyLabel="Transferring…" busy={busy} disabled={!userId} error={error} onCancel={onCancel} />
    </form>
  );
}

/** Leaving a project the caller does not own. */
export function LeaveProject({ project }: { project: Project }) {
  const api = useApi();
  const toast = useToast();
  const me = useMe();
  const [open, setOpen] = useState(false);
  const { busy, error, run } = useAction();
  const leave = () =>
    run(async () => {
      await api.call('DELETE', `/v1/projects/${encodeURIComponent(project.id)}/members/${encodeURIComponent(me?.id ?? '')}`);
      toast(`You left ${project.name}.`);
      navigate('/projects', { replace: true });
    });
  return (
    <section className="card danger-zone" aria-labelledby="leave-heading">
      <h2 id="leave-heading">Leave this project</h2>
      <p>You lose access to its logs and alert rules at once; an admin or the owner can invite you again.</p>
      <button type="button" className="danger-outline" onClick={() => setOpen(true)}>
        Leave project…
      </button>
      <Dialog open={open} title={`Leave ${project.name}?`} onClose={() => setOpen(false)}>
        <p>
          You will no longer see <strong>{project.name}</strong>.
        </p>
        <ConfirmActions label="Leave project" busyLabel="Leaving…" busy={busy} error={error} onCancel={() => setOpen(false)} onConfirm={() => void leave()} />
      </Dialog>
    </section>
  );
}

/** The caller's own switch for this project's alert notifications (email and push). */
export function NotificationsSection({ projectId }: { projectId: string }) {
  const api = useApi();
  const toast = useToast();
  const path = `/v1/projects/${encodeURIComponent(projectId)}/notifications`;
  const state = useResource<{ muted: boolean }>(path);
  const { busy, error, run } = useAction();
  // The switch moves at once; a refusal puts it back.
  const set = (muted: boolean) =>
    run(async () => {
      state.setData(() => ({ muted }));
      try {
        const next = await api.call<{ muted: boolean }>('PUT', path, { muted });
        state.setData(() => next);
        toast(next.muted ? 'You will get no alert notifications from this project.' : 'Alert notifications from this project are on again.');
      } catch (err) {
        state.setData(() => ({ muted: !muted }));
        throw err;
      }
    });
  const muted = state.data?.muted;
  return (
    <section className="card" aria-labelledby="notifications-heading">
      <h2 id="notifications-heading">Your notifications</h2>
      <p className="muted">Alert rules with email or push notify every member of the project. Mute them here for yourself only; other members still get them.</p>
      {state.error !== undefined && <ErrorNote error={state.error} onRetry={state.reload} />}
      {muted === undefined && state.error === undefined && <Spinner label="Loading…" />}
      {muted !== undefined && (
        <label className="toggle-row">
          <span className="switch">
            <input type="checkbox" role="switch" checked={muted} disabled={busy} onChange={(e) => void set(e.target.checked)} />
            <span aria-hidden="true" />
          </span>
          Mute notifications from this project
        </label>
      )}
      {error !== undefined && <ErrorNote error={error} />}
    </section>
  );
}
