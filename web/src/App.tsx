import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { Api, type SessionState } from './lib/api.ts';
import { ApiContext, ToastContext } from './lib/context.ts';
import { match, navigate, useLocation } from './lib/router.ts';
import { Link, Spinner } from './components/ui.tsx';
import { AuthPage, ForgotPasswordPage, ResetPasswordPage } from './pages/Auth.tsx';
import { AcceptInvitationPage, InvitationSignIn } from './pages/Invitation.tsx';
import { ProjectsPage } from './pages/Projects.tsx';
import { ProjectSettingsPage } from './pages/ProjectSettings.tsx';
import { ExplorerPage } from './pages/Explorer.tsx';
import { AlertDetailPage, AlertsPage } from './pages/Alerts.tsx';
import { AccountPage } from './pages/Account.tsx';
import { setThemeChoice, subscribeTheme, THEME_CHOICES, themeChoice, type ThemeChoice } from './lib/theme.ts';
import './styles/theme.css';

function useSession(api: Api): SessionState {
  return useSyncExternalStore(
    (l) => api.subscribe(l),
    () => api.state,
  );
}

interface Toast {
  id: number;
  message: string;
  kind: 'info' | 'error';
}

export function App({ api }: { api: Api }) {
  const session = useSession(api);
  const { path, search } = useLocation();
  const [toasts, setToasts] = useState<Toast[]>([]);
  const nextToast = useRef(0);
  const toast = useCallback((message: string, kind: 'info' | 'error' = 'info') => {
    const id = ++nextToast.current;
    setToasts((t) => [...t.slice(-2), { id, message, kind }]);
    setTimeout(() => setToasts((t) => t.filter((x) => x.id !== id)), 4000);
  }, []);

  useEffect(() => {
    void api.restore();
  }, [api]);

  // Signed in on a sign-in page, or at the root: go to the projects.
  const signedIn = session.status === 'signed-in';
  useEffect(() => {
    if (signedIn && (path === '/' || path === '/login' || path === '/signup')) navigate('/projects', { replace: true });
  }, [signedIn, path]);

  useEffect(() => {
    document.title = titleFor(path, signedIn);
  }, [path, signedIn]);

  let content;
  // The password-reset pages need no session, signed in or not.
  if (path === '/forgot-password') content = <ForgotPasswordPage />;
  else if (path === '/reset-password') content = <ResetPasswordPage />;
  else if (session.status === 'unknown') content = <main className="page"><Spinner label="Opening your session…" /></main>;
  // Signed out on an invitation link: sign in or up on the same address, which then accepts it.
  else if (session.status === 'signed-out' && path === '/invitations') content = <InvitationSignIn />;
  else if (session.status === 'signed-out') content = <AuthPage key={path === '/signup' ? 'signup' : 'login'} mode={path === '/signup' ? 'signup' : 'login'} notice={session.reason} />;
  else content = route(path, search);

  return (
    <ApiContext.Provider value={api}>
      <ToastContext.Provider value={toast}>
        <a href="#main" className="skip-link">
          Skip to content
        </a>
        {session.status === 'signed-in' && <TopBar email={session.user.email} path={path} api={api} />}
        <div id="main">{content}</div>
        <div className="toasts" role="status" aria-live="polite">
          {toasts.map((t) => (
            <div key={t.id} className={`toast toast-${t.kind}`}>
              {t.message}
            </div>
          ))}
        </div>
      </ToastContext.Provider>
    </ApiContext.Provider>
  );
}

function titleFor(path: string, signedIn: boolean): string {
  if (path === '/forgot-password') return 'Forgot password · Loglane';
  if (path === '/reset-password') return 'New password · Loglane';
  if (path === '/invitations') return 'Invitation · Loglane';
  if (!signedIn) return path === '/signup' ? 'Sign up · Loglane' : 'Sign in · Loglane';
  if (path.endsWith('/logs')) return 'Logs · Loglane';
  if (path.includes('/alerts') || path.startsWith('/alerts')) return 'Alerts · Loglane';
  if (path.endsWith('/settings')) return 'Project settings · Loglane';
  if (path === '/account') return 'Account · Loglane';
  return 'Projects · Loglane';
}

function TopBar({ email, path, api }: { email: string; path: string; api: Api }) {
  const [busy, setBusy] = useState(false);
  return (
    <header className="topbar">
      <Link to="/projects" className="brand">
        <img src="/favicon.svg" alt="" width="24" height="24" /> Loglane
      </Link>
      <nav aria-label="Main">
        <Link to="/projects" aria-current={path.startsWith('/projects') || path.startsWith('/alerts') ? 'page' : undefined}>
          Projects
        </Link>
        <Link to="/account" aria-current={path === '/account' ? 'page' : undefined}>
          Account
        </Link>
        <a href="/docs">API docs</a>
      </nav>
      <div className="user">
        <ThemePicker />
        <span className="user-email" title={email}>
          {email}
        </span>
        <button
          type="button"
          className="secondary small"
          disabled={busy}
          onClick={async () => {
            setBusy(true);
            await api.logout();
            navigate('/login', { replace: true });
          }}
        >
          Sign out
        </button>
      </div>
    </header>
  );
}

/** System, light or dark: kept in this browser (web/src/lib/theme.ts). */
function ThemePicker() {
  const choice = useSyncExternalStore(subscribeTheme, themeChoice);
  return (
    <label className="theme-picker">
      Theme
      <select value={choice} onChange={(e) => setThemeChoice(e.target.value as ThemeChoice)}>
        {THEME_CHOICES.map((c) => (
          <option key={c.id} value={c.id}>
            {c.label}
          </option>
        ))}
      </select>
    </label>
  );
}

function route(path: string, search: URLSearchParams) {
  let m: Record<string, string> | null;
  if (path === '/projects' || path === '/') return <ProjectsPage />;
  if ((m = match('/projects/:id/logs', path))) return <ExplorerPage key={m.id} projectId={m.id!} search={search} />;
  if ((m = match('/projects/:id/alerts', path))) return <AlertsPage key={m.id} projectId={m.id!} search={search} />;
  if ((m = match('/projects/:id/alerts/:alertId', path))) return <AlertDetailPage key={m.alertId} alertId={m.alertId!} />;
  if ((m = match('/alerts/:alertId', path))) return <AlertDetailPage key={m.alertId} alertId={m.alertId!} />;
  if ((m = match('/projects/:id/settings', path))) return <ProjectSettingsPage key={m.id} projectId={m.id!} justCreated={search.get('created') === '1'} />;
  if ((m = match('/projects/:id', path))) return <Redirect to={`/projects/${m.id}/logs`} />;
  if (path === '/account') return <AccountPage />;
  if (path === '/invitations') return <AcceptInvitationPage />;
  return (
    <main className="page">
      <h1>Page not found</h1>
      <p>
        There is nothing at <code>{path}</code>. <Link to="/projects">Go to your projects</Link>.
      </p>
    </main>
  );
}

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}
