import { useCallback, useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { describeError } from '../lib/api.ts';
import { useApi } from '../lib/context.ts';
import { navigate } from '../lib/router.ts';
import { ROLE_LABEL } from '../lib/roles.ts';
import type { Role } from '../lib/types.ts';

export interface AsyncState<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
  setData: (update: (old: T | undefined) => T | undefined) => void;
}

/** Loads `path` with the session's token; reloads when the path changes or on demand. */
export function useResource<T>(path: string | null): AsyncState<T> {
  const api = useApi();
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: undefined, loading: path !== null });
  const [nonce, setNonce] = useState(0);
  useEffect(() => {
    if (path === null) return;
    const ctrl = new AbortController();
    setState((s) => ({ ...s, loading: true, error: undefined }));
    api.get<T>(path, ctrl.signal).then(
      (data) => setState({ data, error: undefined, loading: false }),
      (error: unknown) => {
        if (!ctrl.signal.aborted) setState((s) => ({ data: s.data, error, loading: false }));
      },
    );
    return () => ctrl.abort();
  }, [api, path, nonce]);
  const reload = useCallback(() => setNonce((n) => n + 1), []);
  const setData = useCallback((update: (old: T | undefined) => T | undefined) => setState((s) => ({ ...s, data: update(s.data) })), []);
  return { ...state, reload, setData };
}

/**
 * A form's or button's action: `busy` while it runs, and the error it failed with (kept until the
 * next run). `run` never throws, so handlers can call it without a catch.
 */
export function useAction(): { busy: boolean; error: unknown; run: (fn: () => Promise<void>) => Promise<void>; setError: (e: unknown) => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = useCallback(async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await fn();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, setError };
}

export function Link(props: { to: string; children: ReactNode; className?: string; 'aria-current'?: 'page' | undefined }) {
  return (
    <a
      href={props.to}
      className={props.className}
      aria-current={props['aria-current']}
      onClick={(e) => {
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(props.to);
      }}
    >
      {props.children}
    </a>
  );
}

export function Spinner({ label = 'Loading…' }: { label?: string }) {
  return (
    <div className="loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

export function ErrorNote({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  return (
    <div className="error-note" role="alert">
      <span>{describeError(error)}</span>
      {onRetry && (
        <button type="button" className="link-button" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <h3>{title}</h3>
      {children}
    </div>
  );
}

export function Field(props: { label: string; error?: string; hint?: ReactNode; children: (id: string, describedBy: string | undefined) => ReactNode }) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [props.hint ? hintId : '', props.error ? errorId : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field${props.error ? ' has-error' : ''}`}>
      <label htmlFor={id}>{props.label}</label>
      {props.children(id, describedBy)}
      {props.hint && (
        <div className="hint" id={hintId}>
          {props.hint}
        </div>
      )}
      {props.error && (
        <div className="field-error" id={errorId}>
          {props.error}
        </div>
      )}
    </div>
  );
}

/** A modal built on <dialog>: focus is trapped and Escape closes it. */
export function Dialog(props: { open: boolean; title: string; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  const titleId = useId();
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={props.onClose} onCancel={props.onClose}>
      <h2 id={titleId}>{props.title}</h2>
      {props.open && props.children}
    </dialog>
  );
}

export function CopyButton({ text, label = 'Copy', onCopied }: { text: string; label?: string; onCopied?: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="secondary small"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
        } catch {
          // Without clipboard permission, fall back to a selection the person can copy.
          const area = document.createElement('textarea');
          area.value = text;
          document.body.append(area);
          area.select();
          document.execCommand('copy');
          area.remove();
        }
        setCopied(true);
        onCopied?.();
        setTimeout(() => setCopied(false), 1500);
      }}
    >
      {copied ? 'Copied' : label}
    </button>
  );
}

export function PageHeader({ title, children }: { title: ReactNode; children?: ReactNode }) {
  return (
    <div className="page-header">
      <h1>{title}</h1>
      {children && <div className="page-actions">{children}</div>}
    </div>
  );
}

/** A role as a small badge; `prefix` is read out before it (e.g. "Your role:"). */
export function RoleBadge({ role, prefix }: { role: Role; prefix?: string }) {
  return (
    <span className={`role-badge role-${role}`} data-testid="role">
      {prefix && <span className="visually-hidden">{prefix} </span>}
      {ROLE_LABEL[role]}
    </span>
  );
}

/** The signed-in user (the pages that use it are only shown to one). */
export function useMe(): { id: string; email: string } | undefined {
  const api = useApi();
  return api.state.status === 'signed-in' ? api.state.user : undefined;
}

/**
 * The foot of a dialog that confirms a destructive action: the action's error (if any), then Cancel
 * and the danger button, which reads `busyLabel` while the action runs. With `onConfirm` the button
 * runs it; without, the button submits the dialog's form.
 */
export function ConfirmActions(props: { label: string; busyLabel?: string; busy?: boolean; disabled?: boolean; error?: unknown; onCancel: () => void; onConfirm?: () => void }) {
  const { label, busyLabel, busy, disabled, error, onCancel, onConfirm } = props;
  return (
    <>
      {error !== undefined && <ErrorNote error={error} />}
      <div className="form-actions">
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
        <button type={onConfirm ? 'button' : 'submit'} className="danger" disabled={busy || disabled} onClick={onConfirm}>
          {busy && busyLabel ? busyLabel : label}
        </button>
      </div>
    </>
  );
}

/**
 * A dialog that asks to confirm an action on `target` (a member to remove, a rule to delete): open
 * while there is one, `children` says what happens to it, and the danger button runs `onConfirm`.
 */
export function ConfirmDialog<T>(props: {
  target: T | null;
  title: string;
  onClose: () => void;
  onConfirm: (target: T) => void;
  label: string;
  busyLabel?: string;
  busy?: boolean;
  error?: unknown;
  children: (target: T) => ReactNode;
}) {
  const { target, title, onClose, onConfirm, children, ...actions } = props;
  return (
    <Dialog open={target !== null} title={title} onClose={onClose}>
      {target !== null && (
        <>
          {children(target)}
          <ConfirmActions {...actions} onCancel={onClose} onConfirm={() => onConfirm(target)} />
        </>
      )}
    </Dialog>
  );
}

/** A table's column headers, then one for the rows' actions: blank on screen, "Actions" to a screen reader. */
export function HeadWithActions({ columns }: { columns: string[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c) => (
          <th key={c} scope="col">
            {c}
          </th>
        ))}
        <th scope="col">
          <span className="visually-hidden">Actions</span>
        </th>
      </tr>
    </thead>
  );
}

/** The last cell of a row: its action buttons, kept to the width they need. */
export function ActionsCell({ children }: { children: ReactNode }) {
  return (
    <td className="actions-cell">
      <div className="row-actions">{children}</div>
    </td>
  );
}
