import { useState, type FormEvent } from 'react';
import { ApiError, describeError } from '../lib/api.ts';
import { useApi } from '../lib/context.ts';
import { Field, Link } from '../components/ui.tsx';

export function AuthPage({ mode, notice }: { mode: 'login' | 'signup'; notice?: string }) {
  const api = useApi();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [fields, setFields] = useState<Record<string, string>>({});
  const signup = mode === 'signup';

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setFields({});
    try {
      if (signup) await api.signup(email, password);
      else await api.login(email, password);
    } catch (err) {
      setError(describeError(err));
      if (err instanceof ApiError) setFields(err.fieldErrors());
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="auth">
      <div className="auth-card">
        <div className="brand brand-large" aria-hidden="true">
          <img src="/favicon.svg" alt="" width="32" height="32" /> Loglane
        </div>
        <h1>{signup ? 'Create your account' : 'Sign in'}</h1>
        {notice && !error && <p className="notice" role="status">{notice}</p>}
        <form onSubmit={submit} noValidate>
          <Field label="Email" error={fields.email}>
            {(id, describedBy) => (
              <input id={id} type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} aria-describedby={describedBy} aria-invalid={!!fields.email} />
            )}
          </Field>
          <Field label="Password" error={fields.password} hint={signup ? 'At least 8 characters.' : undefined}>
            {(id, describedBy) => (
              <input
                id={id}
                type="password"
                autoComplete={signup ? 'new-password' : 'current-password'}
                required
                minLength={signup ? 8 : undefined}
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                aria-describedby={describedBy}
                aria-invalid={!!fields.password}
              />
            )}
          </Field>
          {error && (
            <div className="error-note" role="alert">
              {error}
            </div>
          )}
          <button type="submit" className="primary wide" disabled={busy}>
            {busy ? (signup ? 'Creating account…' : 'Signing in…') : signup ? 'Create account' : 'Sign in'}
          </button>
        </form>
        <p className="switch">
          {signup ? (
            <>
              Already have an account? <Link to="/login">Sign in</Link>
            </>
          ) : (
            <>
              New to Loglane? <Link to="/signup">Create an account</Link>
            </>
          )}
        </p>
      </div>
    </main>
  );
}
