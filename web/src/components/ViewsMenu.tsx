import { useEffect, useId, useRef, useState } from 'react';
import { ApiError, describeError } from '../lib/api.ts';
import { useApi, useToast } from '../lib/context.ts';
import { viewBody, explorerUrl } from '../lib/explorer.ts';
import { viewPath, viewsPath, type View } from '../lib/explorer-api.ts';
import { formatTime } from '../lib/format.ts';
import type { LogQuery } from '../lib/query.ts';
import type { Role } from '../lib/types.ts';
import { useMe } from './ui.tsx';

/** Closes a menu on Escape and on a click outside it, giving focus back to its button. */
export function useMenu(): { open: boolean; setOpen: (v: boolean) => void; ref: React.RefObject<HTMLDivElement | null>; buttonRef: React.RefObject<HTMLButtonElement | null> } {
  const [open, setOpen] = useState(false);
  const ref = useRef<HTMLDivElement>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        setOpen(false);
        buttonRef.current?.focus();
      }
    };
    const onDown = (e: MouseEvent) => {
      if (ref.current && !ref.current.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('keydown', onKey);
    document.addEventListener('mousedown', onDown);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('mousedown', onDown);
    };
  }, [open]);
  return { open, setOpen, ref, buttonRef };
}

/**
 * The project's saved views: every member sees and opens them all (a view's link is
 * `…/logs?view=<id>`); any member saves the explorer's state as a new one; the view's creator or an
 * admin updates it with the current state or deletes it.
 */
export function ViewsMenu(props: { projectId: string; role: Role | undefined; query: LogQuery; currentViewId: string | null; onOpen: (view: View) => void; onSaved: (view: View) => void; onDeleted: (id: string) => void }) {
  const api = useApi();
  const toast = useToast();
  const me = useMe();
  const id = useId();
  const { open, setOpen, ref, buttonRef } = useMenu();
  const [views, setViews] = useState<View[] | undefined>();
  const [error, setError] = useState<unknown>();
  const [name, setName] = useState('');
  const [saveError, setSaveError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [nonce, setNonce] = useState(0);

  useEffect(() => {
    const ctrl = new AbortController();
    api.get<{ data: View[] }>(viewsPath(props.projectId), ctrl.signal).then(
      (a) => {
        setViews(a.data);
        setError(undefined);
      },
      (e: unknown) => !ctrl.signal.aborted && setError(e),
    );
    return () => ctrl.abort();
  }, [api, props.projectId, nonce, open]);

  const current = views?.find((v) => v.id === props.currentViewId);
  const mayChange = (v: View) => v.createdBy.id === me?.id || props.role === 'owner' || props.role === 'admin';

  async function save(e: React.FormEvent) {
    e.preventDefault();
    setBusy(true);
    setSaveError(null);
    try {
      const view = await api.call<View>('POST', viewsPath(props.projectId), viewBody(name, props.query));
      setName('');
      setNonce((n) => n + 1);
      toast(`Saved the view “${view.name}”.`);
      props.onSaved(view);
      setOpen(false);
    } catch (err) {
      setSaveError(err instanceof ApiError && Array.isArray(err.details) && err.details[0] ? `${err.message} ${err.details.map((d) => d.message).join(' ')}` : describeError(err));
    } finally {
      setBusy(false);
    }
  }

  async function update(v: View) {
    setBusy(true);
    try {
      const saved = await api.call<View>('PUT', viewPath(props.projectId, v.id), viewBody(v.name, props.query));
      setNonce((n) => n + 1);
      toast(`Updated the view “${saved.name}”.`);
      props.onSaved(saved);
    } catch (err) {
      toast(describeError(err), 'error');
    } finally {
      setBusy(false);
    }
  }

  async function remove(v: View) {
    if (!window.confirm(`Delete the view “${v.name}” for every member of the project?`)) return;
    setBusy(true);
    try {
      await api.call<void>('DELETE', viewPath(props.projectId, v.id));
      setNonce((n) => n + 1);
      toast(`Deleted the view “${v.name}”.`);
      props.onDeleted(v.id);
    } catch (err) {
      toast(describeError(err), 'error');
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className={`menu views-menu${open ? ' open' : ''}`} ref={ref}>
      <button type="button" ref={buttonRef} className="secondary" aria-expanded={open} aria-controls={`${id}-panel`} onClick={() => setOpen(!open)}>
        {current ? <>View: {current.name}</> : 'Views'}
      </button>
      {open && (
        <div className="menu-panel views-panel" id={`${id}-panel`} role="group" aria-label="Saved views">
          {error !== undefined && <p className="field-error">{describeError(error)}</p>}
          {views && views.length === 0 && <p className="muted small">No saved views yet. Save this search to share it with the project.</p>}
          {views && views.length > 0 && (
            <ul className="views-list">
              {views.map((v) => (
                <li key={v.id} className={v.id === props.currentViewId ? 'current' : undefined}>
                  <a
                    href={`/projects/${encodeURIComponent(props.projectId)}/logs?view=${encodeURIComponent(v.id)}`}
                    className="view-link"
                    aria-current={v.id === props.currentViewId ? 'true' : undefined}
                    onClick={(e) => {
                      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
                      e.preventDefault();
                      setOpen(false);
                      props.onOpen(v);
                    }}
                  >
                    {v.name}
                  </a>
                  <span className="muted small"> by {v.createdBy.email} · {formatTime(v.updatedAt)}</span>
                  {v.id === props.currentViewId && (
                    <span className="view-actions">
                      <button type="button" className="secondary small" disabled={busy || !mayChange(v)} title={mayChange(v) ? 'Save the current search into this view' : 'Only its creator or an admin can change it'} onClick={() => void update(v)}>
                        Update “{v.name}”
                      </button>
                      <button type="button" className="danger-outline small" disabled={busy || !mayChange(v)} title={mayChange(v) ? undefined : 'Only its creator or an admin can delete it'} onClick={() => void remove(v)}>
                        Delete
                      </button>
                    </span>
                  )}
                </li>
              ))}
            </ul>
          )}
          <form className="save-view" onSubmit={save}>
            <label htmlFor={`${id}-name`}>Save the current search as</label>
            <div className="save-view-row">
              <input id={`${id}-name`} value={name} maxLength={100} required placeholder="View name" onChange={(e) => setName(e.target.value)} aria-invalid={saveError ? true : undefined} aria-describedby={saveError ? `${id}-error` : undefined} />
              <button type="submit" className="primary small" disabled={busy || !name.trim()}>
                Save view
              </button>
            </div>
            {saveError && (
              <span className="field-error" id={`${id}-error`} role="alert">
                {saveError}
              </span>
            )}
          </form>
        </div>
      )}
    </div>
  );
}

/** "Share": copies the explorer's link; with "Pin the time range", a "Last …" range goes as its absolute bounds. */
export function ShareMenu(props: { projectId: string; query: LogQuery; viewId: string | null; now: number }) {
  const id = useId();
  const { open, setOpen, ref, buttonRef } = useMenu();
  const [pin, setPin] = useState(false);
  const [copied, setCopied] = useState(false);
  const path = explorerUrl(props.projectId, props.query, { pinRange: pin, now: props.now, extra: props.viewId ? { view: props.viewId } : {} });
  const url = `${location.origin}${path}`;
  return (
    <div className={`menu share-menu${open ? ' open' : ''}`} ref={ref}>
      <button type="button" ref={buttonRef} className="secondary" aria-expanded={open} aria-controls={`${id}-panel`} onClick={() => setOpen(!open)}>
        Share
      </button>
      {open && (
        <div className="menu-panel" id={`${id}-panel`} role="group" aria-label="Share this search">
          <label className="check">
            <input type="checkbox" checked={pin} onChange={(e) => setPin(e.target.checked)} disabled={props.query.range.kind !== 'preset'} />
            Pin the time range (send the absolute times, not “last …”)
          </label>
          <label htmlFor={`${id}-url`} className="small">
            Link
          </label>
          <input id={`${id}-url`} readOnly value={url} onFocus={(e) => e.currentTarget.select()} />
          <button
            type="button"
            className="primary small"
            onClick={async () => {
              try {
                await navigator.clipboard.writeText(url);
              } catch {
                /* the link is in the box to copy by hand */
              }
              setCopied(true);
              setTimeout(() => setCopied(false), 1500);
            }}
          >
            {copied ? 'Copied' : 'Copy link'}
          </button>
        </div>
      )}
    </div>
  );
}
