import { useEffect, useState } from 'react';
import { ApiError, describeError } from '../lib/api.ts';
import { useApi, useToast } from '../lib/context.ts';
import { formatCount, formatTime } from '../lib/format.ts';
import { currentSubscription, pushSupported, subscribe } from '../lib/push.ts';
import type { AlertRule, Me, Page, Plan, Project, PushSubscriptionInfo } from '../lib/types.ts';
import { ErrorNote, Link, PageHeader, Spinner, useResource } from '../components/ui.tsx';

/** A plan-limit refusal: the API's message names the plan that allows more; link to the plans. */
export function PlanLimitNote({ error }: { error: ApiError }) {
  return (
    <div className="error-note plan-limit" role="alert">
      <strong>Plan limit reached.</strong> <span>{error.message}</span> <Link to="/account">Compare plans</Link>
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
  const [plans, setPlans] = useState<Plan[] | undefined>();
  const [plansError, setPlansError] = useState<unknown>();
  useEffect(() => {
    api.anonymous<{ data: Plan[] }>('/v1/plans').then((p) => setPlans(p.data), setPlansError);
  }, [api]);

  if (me.error !== undefined && !me.data) return <main className="page"><ErrorNote error={me.error} onRetry={me.reload} /></main>;
  if (!me.data) return <main className="page"><Spinner label="Loading your account…" /></main>;
  const plan = plans?.find((p) => p.name === me.data!.subscription.plan);
  const projectList = projects.data?.data ?? [];
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
