import { useEffect, useState, type FormEvent } from 'react';
import { ApiError, describeError } from '../lib/api.ts';
import { useApi, useToast } from '../lib/context.ts';
import { formatCount, formatTime, relativeTime } from '../lib/format.ts';
import { navigate } from '../lib/router.ts';
import { describeAgent } from '../lib/agent.ts';
import { currentSubscription, pushSupported, subscribe } from '../lib/push.ts';
import { friendlyFieldError } from './Auth.tsx';
import type { AlertRule, Me, Page, Plan, Project, PushSubscriptionInfo, SessionInfo } from '../lib/types.ts';
import { ActionsCell, ConfirmActions, Dialog, ErrorNote, Field, HeadWithActions, Link, PageHeader, Spinner, useAction, useMe, useResource } from '../components/ui.tsx';

/**
 * A plan-limit refusal: the API's message names the plan that allows more; link to the plans, and
 * say who can raise it on a self-hosted server: its operator, with the CLI's `users set-plan`.
 * Projects count against the signed-in user's own plan (their email is filled in), alert rules
 * against the project owner's. A cap that is the same on every plan (saved views per project: no
 * `plan` in the details) is only stated.
 */
export function PlanLimitNote({ error }: { error: ApiError }) {
  const me = useMe();
  const details = error.details && !Array.isArray(error.details) ? error.details : undefined;
  const planBound = typeof details?.plan === 'string';
  const ownPlan = details?.resource === 'projects';
  const email = ownPlan && me ? me.email : ownPlan ? '<email>' : "<owner's email>";
  return (
    <div className="error-note plan-limit" role="alert">
      <p className="plan-limit-text">
        <strong>{planBound ? 'Plan limit reached.' : 'Limit reached.'}</strong> <span>{error.message}</span>
        {planBound && (
          <>
            {' '}
            <Link to="/account">Compare plans</Link>
          </>
        )}
      </p>
      {planBound && (
        <p className="plan-limit-operator">
          On a self-hosted Loglane server, its operator can raise {ownPlan ? 'your' : "the project owner's"} plan with{' '}
          <code>
            loglane users set-plan {email} {'<plan>'}
          </code>
          .
        </p>
      )}
    </div>
  );
}

function limitText(n: number | null): string {
  return n === null ? 'unlimited' : formatCount(n);
}

function Meter({ used, limit, label }: { used: number; limit: number | null; label: string }) {
  const pct = limit === null ? 0 : Math.min(100, Math.round((used / Math.max(1, limit)) * 100));
  return (
    <div className="meter">
      <div className="meter-label">
        <span>{label}</span>
        <span>
          {formatCount(used)} of {limitText(limit)}
        </span>
      </div>
      {limit !== null && (
        <div className={`meter-bar${pct >= 100 ? ' full' : ''}`} role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={limit} aria-valuenow={used}>
          <div className="meter-fill" style={{ width: `${pct}%` }} />
        </div>
      )}
    </div>
  );
}

export function AccountPage() {
  const me = useResource<Me>('/v1/auth/me');
  const projects = useResource<Page<Project>>('/v1/projects');
  const rules = useResource<{ data: AlertRule[] }>('/v1/alerts');
  const api = useApi();
  const [sessionsNonce, setSessionsNonce] = useState(0);
  const [plans, setPlans] = useState<Plan[] | undefined>();
  const [plansError, setPlansError] = useState<unknown>();
  useEffect(() => {
    api.anonymous<{ data: Plan[] }>('/v1/plans').then((p) => setPlans(p.data), setPlansError);
  }, [api]);

  if (me.error !== undefined && !me.data) return <main className="page"><ErrorNote error={me.error} onRetry={me.reload} /></main>;
  if (!me.data) return <main className="page"><Spinner label="Loading your account…" /></main>;
  const plan = plans?.find((p) => p.name === me.data!.subscription.plan);
  // Plan limits count the projects the user owns; shared ones count against their owners.
  const projectList = (projects.data?.data ?? []).filter((p) => p.role === undefined || p.role === 'owner');
  const rulesByProject = new Map<string, number>();
  for (const r of rules.data?.data ?? []) rulesByProject.set(r.projectId, (rulesByProject.get(r.projectId) ?? 0) + 1);

  return (
    <main className="page">
      <PageHeader title="Account" />
      <section className="card" aria-labelledby="profile-heading">
        <h2 id="profile-heading">Profile</h2>
        <dl className="details">
          <dt>Email</dt>
          <dd data-testid="account-email">{me.data.email}</dd>
          <dt>Member since</dt>
          <dd>{formatTime(me.data.createdAt)}</dd>
          <dt>Plan</dt>
          <dd>
            <span className="plan-badge" data-testid="plan">{me.data.subscription.plan}</span> ({me.data.subscription.status}) · period ends {formatTime(me.data.subscription.periodEnd)}
          </dd>
        </dl>
      </section>
      <section className="card" aria-labelledby="usage-heading">
        <h2 id="usage-heading">Usage</h2>
        {plansError !== undefined && <ErrorNote error={plansError} />}
        {!plan && !plansError && <Spinner label="Loading plan limits…" />}
        {plan && (
          <>
            <Meter label="Projects" used={projectList.length} limit={plan.maxProjects} />
            {projectList.map((p) => (
              <Meter key={p.id} label={`Alert rules in ${p.name}`} used={rulesByProject.get(p.id) ?? 0} limit={plan.maxAlertsPerProject} />
            ))}
          </>
        )}
        {plans && (
          <table className="table plans-table">
            <caption>Plans</caption>
            <thead>
              <tr>
                <th scope="col">Plan</th>
                <th scope="col">Projects</th>
                <th scope="col">Alert rules per project</th>
              </tr>
            </thead>
            <tbody>
              {plans.map((p) => (
                <tr key={p.name} className={p.name === plan?.name ? 'current' : undefined}>
                  <td data-label="Plan">
                    <span className="plan-name">{p.name}</span>
                    {p.name === plan?.name ? ' (yours)' : ''}
                  </td>
                  <td data-label="Projects">{limitText(p.maxProjects)}</td>
                  <td data-label="Alert rules">{limitText(p.maxAlertsPerProject)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <p className="muted small">Plans are changed by the operator of this Loglane server (<code>npx loglane users set-plan &lt;email&gt; &lt;plan&gt;</code>).</p>
      </section>
      <PushSection />
      <PasswordSection onChanged={() => setSessionsNonce((n) => n + 1)} />
      <SessionsSection key={sessionsNonce} />
      <DeleteAccountSection email={me.data.email} owned={projectList.map((p) => p.name)} />
    </main>
  );
}

function PushSection() {
  const api = useApi();
  const toast = useToast();
  const subs = useResource<{ data: PushSubscriptionInfo[] }>('/v1/push/subscriptions');
  const [here, setHere] = useState<string | null | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    currentSubscription().then((s) => setHere(s?.endpoint ?? null), () => setHere(null));
  }, []);

  async function enable() {
    setBusy(true);
    setError(null);
    try {
      const { publicKey } = await api.anonymous<{ publicKey: string }>('/v1/push/vapid-public-key');
      const json = await subscribe(publicKey);
      await api.call('POST', '/v1/push/subscriptions', { endpoint: json.endpoint, keys: json.keys });
      setHere(json.endpoint ?? null);
      subs.reload();
      toast('Push notifications are on in this browser.');
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  }

  async function remove(s: PushSubscriptionInfo) {
    try {
      await api.call('DELETE', `/v1/push/subscriptions/${s.id}`);
      if (s.endpoint === here) {
        const current = await currentSubscription();
        await current?.unsubscribe();
        setHere(null);
      }
      subs.reload();
      toast('Push subscription removed.');
    } catch (err) {
      setError(describeError(err));
    }
  }

  const list = subs.data?.data ?? [];
  const enabledHere = !!here && list.some((s) => s.endpoint === here);
  return (
    <section className="card" aria-labelledby="push-heading">
      <h2 id="push-heading">Push notifications</h2>
      <p className="muted">Alert rules with the push channel notify every browser you enable here.</p>
      {!pushSupported() ? (
        <p className="notice">This browser does not support Web Push.</p>
      ) : enabledHere ? (
        <p className="notice" role="status">Push notifications are on in this browser.</p>
      ) : (
        <button type="button" className="primary" onClick={() => void enable()} disabled={busy}>
          {busy ? 'Enabling…' : 'Enable push in this browser'}
        </button>
      )}
      {error && (
        <div className="error-note" role="alert">
          {error}
        </div>
      )}
      {subs.error !== undefined && <ErrorNote error={subs.error} onRetry={subs.reload} />}
      {list.length > 0 && (
        <ul className="subscriptions" aria-label="Browsers receiving push">
          {list.map((s) => (
            <li key={s.id}>
              <span>
                {new URL(s.endpoint).host}
                {s.endpoint === here ? ' (this browser)' : ''} · since {formatTime(s.createdAt)}
              </span>
              <button type="button" className="danger-outline small" onClick={() => void remove(s)}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** Changes the password; the server ends every other login, so the sessions list reloads after. */
function PasswordSection({ onChanged }: { onChanged: () => void }) {
  const api = useApi();
  const toast = useToast();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const { busy, error, run } = useAction();
  function submit(e: FormEvent) {
    e.preventDefault();
    void run(async () => {
      await api.call('POST', '/v1/auth/password', { currentPassword: current, newPassword: next });
      setCurrent('');
      setNext('');
      toast('Password changed. Your other sessions were signed out.');
      onChanged();
    });
  }
  const fe = error instanceof ApiError ? error.fieldErrors() : {};
  const wrongCurrent = error instanceof ApiError && error.code === 'INVALID_CREDENTIALS' ? 'This is not your current password.' : undefined;
  return (
    <section className="card" aria-labelledby="password-heading">
      <h2 id="password-heading">Password</h2>
      <form className="password-form" onSubmit={submit} noValidate aria-label="Change password">
        <div className="form-grid">
          <Field label="Current password" error={wrongCurrent ?? fe.currentPassword}>
            {(id, d) => (
              <input id={id} type="password" autoComplete="current-password" required value={current} onChange={(e) => setCurrent(e.target.value)} aria-describedby={d} aria-invalid={!!(wrongCurrent ?? fe.currentPassword)} />
            )}
          </Field>
          <Field label="New password" error={fe.newPassword && friendlyFieldError('password', fe.newPassword)} hint={fe.newPassword ? 'Your other sessions are signed out.' : 'At least 8 characters. Your other sessions are signed out.'}>
            {(id, d) => (
              <input id={id} type="password" autoComplete="new-password" required minLength={8} value={next} onChange={(e) => setNext(e.target.value)} aria-describedby={d} aria-invalid={!!fe.newPassword} />
            )}
          </Field>
        </div>
        {error !== undefined && !wrongCurrent && !fe.currentPassword && !fe.newPassword && <ErrorNote error={error} />}
        <div className="form-actions start">
          <button type="submit" className="primary" disabled={busy || current === '' || next === ''}>
            {busy ? 'Changing…' : 'Change password'}
          </button>
        </div>
      </form>
    </section>
  );
}

function SessionsSection() {
  const api = useApi();
  const toast = useToast();
  const sessions = useResource<{ data: SessionInfo[] }>('/v1/auth/sessions');
  const { busy, error, run } = useAction();
  const signOut = (s: SessionInfo) =>
    run(async () => {
      if (s.current) {
        await api.logout();
        navigate('/login', { replace: true });
        return;
      }
      await api.call('DELETE', `/v1/auth/sessions/${encodeURIComponent(s.id)}`);
      sessions.setData((old) => old && { data: old.data.filter((x) => x.id !== s.id) });
      toast(`Signed out ${describeAgent(s.userAgent)}.`);
    });
  const list = sessions.data?.data;
  return (
    <section className="card" aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Sessions</h2>
      <p className="muted">Every browser or client signed in to your account. Sign out the ones you do not recognise, then change your password.</p>
      {sessions.error !== undefined && <ErrorNote error={sessions.error} onRetry={sessions.reload} />}
      {sessions.loading && !list && <Spinner label="Loading sessions…" />}
      {list && (
        <table className="table sessions-table">
          <caption className="visually-hidden">Your sessions</caption>
          <HeadWithActions columns={['Client', 'IP address', 'Signed in', 'Last active']} />
          <tbody>
            {list.map((s) => {
              const name = describeAgent(s.userAgent);
              return (
                <tr key={s.id} className={s.current ? 'current' : undefined} data-session={s.id}>
                  <td data-label="Client">
                    <span title={s.userAgent ?? undefined}>{name}</span>
                    {s.current && <span className="this-session"> (this browser)</span>}
                  </td>
                  <td data-label="IP address">{s.ip ?? '—'}</td>
                  <td data-label="Signed in">
                    <time dateTime={s.createdAt}>{formatTime(s.createdAt)}</time>
                  </td>
                  <td data-label="Last active">
                    <time dateTime={s.lastUsedAt} title={formatTime(s.lastUsedAt)}>
                      {relativeTime(s.lastUsedAt)}
                    </time>
                  </td>
                  <ActionsCell>
                    <button
                      type="button"
                      className="danger-outline small"
                      disabled={busy}
                      onClick={() => void signOut(s)}
                      aria-label={`Sign this one out: ${name}${s.current ? ' (this browser)' : ''}, signed in ${formatTime(s.createdAt)}`}
                    >
                      Sign this one out
                    </button>
                  </ActionsCell>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {error !== undefined && <ErrorNote error={error} />}
    </section>
  );
}

/** Deleting the account: type its email to confirm, and the password (the server asks for it). */
function DeleteAccountSection({ email, owned }: { email: string; owned: string[] }) {
  const api = useApi();
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, run } = useAction();
  function submit(e: FormEvent) {
    e.preventDefault();
    if (typed.trim().toLowerCase() !== email.toLowerCase()) return;
    void run(async () => {
      await api.call('DELETE', '/v1/account', { password });
      api.forget('Your account was deleted, with its projects and logs.');
      navigate('/login', { replace: true });
    });
  }
  const close = () => {
    setOpen(false);
    setTyped('');
    setPassword('');
  };
  const wrong = error instanceof ApiError && error.code === 'INVALID_CREDENTIALS';
  return (
    <section className="card danger-zone" aria-labelledby="delete-account-heading">
      <h2 id="delete-account-heading">Delete your account</h2>
      <p>
        Deletes your account, the projects you own with all their logs, alert rules and history (for their members too), and your memberships in other projects. It
        cannot be undone. Transfer a project to an admin first to keep it.
      </p>
      <button type="button" className="danger" onClick={() => setOpen(true)}>
        Delete account…
      </button>
      <Dialog open={open} title="Delete your account?" onClose={close}>
        <form onSubmit={submit}>
          {owned.length > 0 ? (
            <p>
              These projects you own are deleted with it: <strong>{owned.join(', ')}</strong>.
            </p>
          ) : (
            <p>You own no project; you leave the projects shared with you.</p>
          )}
          <p>
            Type <strong>{email}</strong> to confirm.
          </p>
          <Field label="Your email">
            {(id) => <input id={id} autoFocus autoComplete="off" spellCheck={false} value={typed} onChange={(e) => setTyped(e.target.value)} />}
          </Field>
          <Field label="Password" error={wrong ? 'This is not your password.' : undefined}>
            {(id, d) => <input id={id} type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} aria-describedby={d} aria-invalid={wrong} />}
          </Field>
          <ConfirmActions
            label="Delete account"
            busyLabel="Deleting…"
            busy={busy}
            disabled={typed.trim().toLowerCase() !== email.toLowerCase() || password === ''}
            error={wrong ? undefined : error}
            onCancel={close}
          />
        </form>
      </Dialog>
    </section>
  );
}
