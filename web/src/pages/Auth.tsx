import { useRef, useState, type FormEvent, type ReactNode } from 'react';
import { ApiError, describeError } from '../lib/api.ts';
import { useApi } from '../lib/context.ts';
import { navigate } from '../lib/router.ts';
import { Field, Link } from '../components/ui.tsx';

type AuthField = 'email' | 'password';

/**
 * What is wrong with the form before it is sent, in plain words, by field: an empty field, an
 * address without a name, an @ and a domain, a new password under 8 characters. The server checks
 * again (friendlyFieldError words its answers the same way).
 */
export function authProblems(mode: 'login' | 'signup', email: string, password: string): Partial<Record<AuthField, string>> {
  const out: Partial<Record<AuthField, string>> = {};
  const e = email.trim();
  if (e === '') out.email = 'Enter your email address.';
  else if (mode === 'signup' && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(e)) out.email = 'Enter a full email address, such as name@example.com.';
  if (password === '') out.password = mode === 'signup' ? 'Choose a password of at least 8 characters.' : 'Enter your password.';
  else if (mode === 'signup' && password.length < 8) out.password = `Use at least 8 characters (this one has ${password.length}).`;
  return out;
}

/** The server's refusal of a field (the schema's wording) in the words authProblems uses. */
export function friendlyFieldError(field: string, message: string): string {
  if (field === 'email') {
    if (/already exists|taken/i.test(message)) return 'An account with this email already exists. Sign in instead, or use another address.';
    if (/more than/i.test(message)) return 'This email address is too long.';
    return 'Enter a full email address, such as name@example.com.';
  }
  if (field === 'password') {
    if (/fewer than/i.test(message)) return 'Use at least 8 characters.';
    if (/more than/i.test(message)) return 'Use at most 256 characters.';
  }
  return message.charAt(0).toUpperCase() + message.slice(1);
}

/**
 * Sign in or sign up. `onSwitch` keeps the page's address when switching between the two (the
 * invitation page: once signed in, the same address accepts the invitation).
 *
 * Each problem is said once: a field's problem under that field (the form checks before sending,
 * and the server's refusals of a field are shown there too), anything else in one note above the
 * button. The browser's own validation bubbles are off (noValidate), and the first field with a
 * problem takes the focus.
 */
export function AuthPage({ mode, notice, onSwitch }: { mode: 'login' | 'signup'; notice?: string; onSwitch?: () => void }) {
  const api = useApi();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [fields, setFields] = useState<Partial<Record<AuthField, string>>>({});
  const emailRef = useRef<HTMLInputElement>(null);
  const passwordRef = useRef<HTMLInputElement>(null);
  const signup = mode === 'signup';

  function showProblems(problems: Partial<Record<AuthField, string>>) {
    setFields(problems);
    if (problems.email) emailRef.current?.focus();
    else if (problems.password) passwordRef.current?.focus();
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    setError(null);
    const problems = authProblems(mode, email, password);
    if (problems.email || problems.password) {
      showProblems(problems);
      return;
    }
    setFields({});
    setBusy(true);
    try {
      if (signup) await api.signup(email.trim(), password);
      else await api.login(email.trim(), password);
    } catch (err) {
      const found: Partial<Record<AuthField, string>> = {};
      if (err instanceof ApiError) {
        const byField = err.fieldErrors();
        for (const f of ['email', 'password'] as const) if (byField[f]) found[f] = friendlyFieldError(f, byField[f]);
        if (err.code === 'EMAIL_TAKEN') found.email = friendlyFieldError('email', err.message);
      }
      if (found.email || found.password) showProblems(found);
      else setError(describeError(err));
    } finally {
      setBusy(false);
    }
  }

  // Editing a field clears what was said about it.
  const edit = (field: AuthField, set: (v: string) => void) => (v: string) => {
    set(v);
    if (fields[field]) setFields(({ [field]: _gone, ...rest }) => rest);
  };

  return (
    <AuthCard title={signup ? 'Create your account' : 'Sign in'}>
      {notice && !error && <p className="notice" role="status">{notice}</p>}
      <form onSubmit={submit} noValidate>
        <Field label="Email" error={fields.email}>
          {(id, describedBy) => (
            <input
              ref={emailRef}
              id={id}
              type="email"
              autoComplete="email"
              required
              value={email}
              onChange={(e) => edit('email', setEmail)(e.target.value)}
              aria-describedby={describedBy}
              aria-invalid={fields.email ? true : undefined}
            />
          )}
        </Field>
        {/* The hint goes while the field shows a problem: the problem says it. */}
        <Field label="Password" error={fields.password} hint={signup && !fields.password ? 'At least 8 characters.' : undefined}>
          {(id, describedBy) => (
            <input
              ref={passwordRef}
              id={id}
              type="password"
              autoComplete={signup ? 'new-password' : 'current-password'}
              required
              minLength={signup ? 8 : undefined}
              value={password}
              onChange={(e) => edit('password', setPassword)(e.target.value)}
              aria-describedby={describedBy}
              aria-invalid={fields.password ? true : undefined}
            />
          )}
        </Field>
        {!signup && (
          <p className="forgot">
            <Link to="/forgot-password">Forgot your password?</Link>
          </p>
        )}
        {error && (
          <div className="error-note" role="alert">
            {error}
          </div>
        )}
        <button type="submit" className="primary wide" disabled={busy}>
          {busy ? (signup ? 'Creating account…' : 'Signing in…') : signup ? 'Create account' : 'Sign in'}
        </button>
      </form>
      <p className="auth-switch">
        {signup ? (
          <>
            Already have an account? <SwitchLink to="/login" onSwitch={onSwitch}>Sign in</SwitchLink>
          </>
        ) : (
          <>
            New to Loglane? <SwitchLink to="/signup" onSwitch={onSwitch}>Create an account</SwitchLink>
          </>
        )}
      </p>
    </AuthCard>
  );
}

function SwitchLink({ to, onSwitch, children }: { to: string; onSwitch?: () => void; children: ReactNode }) {
  if (!onSwitch) return <Link to={to}>{children}</Link>;
  return (
    <button type="button" className="link-button" onClick={onSwitch}>
      {children}
    </button>
  );
}

function AuthCard({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="auth">
      <div className="auth-card">
        <div className="brand brand-large" aria-hidden="true">
          <img src="/favicon.svg" alt="" width="32" height="32" /> Loglane
        </div>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}

/** "Forgot your password?": asks for the email and has the server mail a reset link to it. */
export function ForgotPasswordPage() {
  const api = useApi();
  const [email, setEmail] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [sentTo, setSentTo] = useState<string | null>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await api.anonymousCall('POST', '/v1/auth/password-reset', { email: email.trim() });
      setSentTo(email.trim());
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const fieldError = error instanceof ApiError ? error.fieldErrors().email : undefined;
  return (
    <AuthCard title="Reset your password">
      {sentTo ? (
        <>
          <p className="notice" role="status">
            If an account uses <strong>{sentTo}</strong>, a link to choose a new password is on its way. The link works once, for 30 minutes.
          </p>
          <p className="muted small">No mail after a few minutes? Check the spam folder, or ask again.</p>
          <button type="button" className="secondary wide" onClick={() => setSentTo(null)}>
            Ask again
          </button>
        </>
      ) : (
        <form onSubmit={submit} noValidate>
          <p className="muted">Enter the email you sign in with. We will send it a link to choose a new password.</p>
          <Field label="Email" error={fieldError}>
            {(id, describedBy) => (
              <input id={id} type="email" autoComplete="email" autoFocus required value={email} onChange={(e) => setEmail(e.target.value)} aria-describedby={describedBy} aria-invalid={!!fieldError} />
            )}
          </Field>
          {error !== undefined && !fieldError && (
            <div className="error-note" role="alert">
              {describeError(error)}
            </div>
          )}
          <button type="submit" className="primary wide" disabled={busy || email.trim() === ''}>
            {busy ? 'Sending…' : 'Send reset link'}
          </button>
        </form>
      )}
      <p className="auth-switch">
        Remembered it? <Link to="/login">Sign in</Link>
      </p>
    </AuthCard>
  );
}

/** The fragment's `token` (`/reset-password#token=…`): a fragment never reaches a server or a Referer. */
export function tokenFromHash(): string {
  return new URLSearchParams(location.hash.replace(/^#/, '')).get('token') ?? '';
}

/** `/reset-password#token=…`, the link of the reset mail: sets a new password, then on to sign in. */
export function ResetPasswordPage() {
  const api = useApi();
  const [token] = useState(tokenFromHash);
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [mismatch, setMismatch] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (password !== again) {
      setMismatch(true);
      return;
    }
    setMismatch(false);
    setBusy(true);
    setError(undefined);
    try {
      await api.anonymousCall('POST', '/v1/auth/password-reset/confirm', { token, newPassword: password });
      // Every login of the account has ended, this tab's too: sign in with the new password.
      api.forget('Your password was changed. Sign in with the new password.');
      navigate('/login', { replace: true });
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }

  const fields = error instanceof ApiError ? error.fieldErrors() : {};
  const badToken = !token || fields.token !== undefined;
  return (
    <AuthCard title="Choose a new password">
      {badToken ? (
        <div className="error-note" role="alert">
          <span>
            {token
              ? 'This reset link is no longer valid: a link works once, for 30 minutes.'
              : 'This page needs the link from the reset mail, and the address has no token.'}
          </span>{' '}
          <Link to="/forgot-password">Ask for a new link</Link>
        </div>
      ) : (
        <form onSubmit={submit} noValidate>
          <Field label="New password" error={fields.newPassword && friendlyFieldError('password', fields.newPassword)} hint={fields.newPassword ? undefined : 'At least 8 characters.'}>
            {(id, describedBy) => (
              <input
                id={id}
                type="password"
                autoComplete="new-password"
                autoFocus
                required
                minLength={8}
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                aria-describedby={describedBy}
                aria-invalid={!!fields.newPassword}
              />
            )}
          </Field>
          <Field label="New password again" error={mismatch ? 'The two passwords differ.' : undefined}>
            {(id, describedBy) => (
              <input id={id} type="password" autoComplete="new-password" required value={again} onChange={(e) => setAgain(e.target.value)} aria-describedby={describedBy} aria-invalid={mismatch} />
            )}
          </Field>
          {error !== undefined && !fields.newPassword && (
            <div className="error-note" role="alert">
              {describeError(error)}
            </div>
          )}
          <button type="submit" className="primary wide" disabled={busy || password === '' || again === ''}>
            {busy ? 'Saving…' : 'Set new password'}
          </button>
        </form>
      )}
      <p className="auth-switch">
        <Link to="/login">Back to sign in</Link>
      </p>
    </AuthCard>
  );
}
