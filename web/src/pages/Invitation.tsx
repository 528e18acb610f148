import { useEffect, useRef, useState } from 'react';
import { ApiError } from '../lib/api.ts';
import { useApi, useToast } from '../lib/context.ts';
import { ROLE_LABEL } from '../lib/roles.ts';
import { navigate } from '../lib/router.ts';
import type { Project } from '../lib/types.ts';
import { ErrorNote, Link, Spinner, useMe } from '../components/ui.tsx';
import { AuthPage, tokenFromHash } from './Auth.tsx';

/**
 * `/invitations#token=…` signed out: sign in (or create the account) on the same address, which
 * then accepts the invitation. The token stays in the fragment, never in storage.
 */
export function InvitationSignIn({ notice }: { notice?: string }) {
  const [mode, setMode] = useState<'login' | 'signup'>('login');
  return (
    <AuthPage
      key={mode}
      mode={mode}
      notice={notice ?? (mode === 'login' ? 'You are invited to a project. Sign in to accept the invitation, or create an account with the invited email.' : 'Create an account with the email the invitation was sent to; the invitation is accepted next.')}
      onSwitch={() => setMode((m) => (m === 'login' ? 'signup' : 'login'))}
    />
  );
}

/** `/invitations#token=…` signed in: accepts the invitation and opens the project. */
export function AcceptInvitationPage() {
  const api = useApi();
  const toast = useToast();
  const me = useMe();
  const [token] = useState(tokenFromHash);
  const [error, setError] = useState<unknown>();
  const sent = useRef(false);

  useEffect(() => {
    if (!token || sent.current) return;
    sent.current = true;
    api.call<{ project: Project }>('POST', '/v1/invitations/accept', { token }).then(
      ({ project }) => {
        toast(`You joined ${project.name} as ${ROLE_LABEL[project.role] ?? project.role}.`);
        navigate(`/projects/${encodeURIComponent(project.id)}/logs`, { replace: true });
      },
      setError,
    );
  }, [api, toast, token]);

  if (token && error === undefined) {
    return (
      <main className="page">
        <Spinner label="Accepting the invitation…" />
      </main>
    );
  }
  const notFound = error instanceof ApiError && error.status === 404;
  return (
    <main className="page">
      <h1>Invitation</h1>
      {!token ? (
        <p className="error-note" role="alert">
          This address has no invitation token. Open the link from the invitation mail as it is.
        </p>
      ) : notFound ? (
        <div className="error-note" role="alert">
          <span>
            This invitation cannot be accepted by <strong>{me?.email}</strong>: it has expired (invitations last 7 days), was already used or revoked, or was sent to
            another email address.
          </span>
        </div>
      ) : (
        <ErrorNote error={error} />
      )}
      <div className="form-actions start">
        {notFound && (
          <button type="button" className="secondary" onClick={() => void api.logout()}>
            Sign in with another account
          </button>
        )}
        <Link to="/projects" className="button primary">
          Go to your projects
        </Link>
      </div>
    </main>
  );
}
