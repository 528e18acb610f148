import { useId, useState } from 'react';
import { describeError } from '../lib/api.ts';
import { useApi } from '../lib/context.ts';
import { exportColumns } from '../lib/explorer.ts';
import { attachmentName, exportPath } from '../lib/explorer-api.ts';
import { useMenu } from './ViewsMenu.tsx';

/**
 * Downloads every log the search selects (no row cap) as NDJSON or CSV (with the list's columns).
 * The file is fetched with the session's token in the Authorization header, never in a URL, then
 * handed to the browser as a blob link.
 */
export function ExportMenu(props: { projectId: string; filters: string; columns: string[] }) {
  const api = useApi();
  const id = useId();
  const { open, setOpen, ref, buttonRef } = useMenu();
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function download(format: 'ndjson' | 'csv') {
    setBusy(format);
    setError(null);
    try {
      const res = await api.raw('GET', exportPath(props.projectId, new URLSearchParams(props.filters), format, format === 'csv' ? exportColumns(props.columns) : undefined));
      if (!res.ok) {
        let message = `The server answered ${res.status}.`;
        try {
          message = ((await res.json()) as { error?: { message?: string } }).error?.message ?? message;
        } catch {
          /* not JSON */
        }
        throw new Error(message);
      }
      const blob = await res.blob();
      const href = URL.createObjectURL(blob);
      const a = document.createElement('a');
      a.href = href;
      a.download = attachmentName(res.headers.get('content-disposition'), `logs.${format}`);
      a.hidden = true;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(href), 10_000);
      setOpen(false);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(null);
    }
  }

  return (
    <div className={`menu export-menu${open ? ' open' : ''}`} ref={ref}>
      <button type="button" ref={buttonRef} className="secondary" aria-expanded={open} aria-controls={`${id}-panel`} onClick={() => setOpen(!open)}>
        Export
      </button>
      {open && (
        <div className="menu-panel" id={`${id}-panel`} role="group" aria-label="Export the search">
          <p className="small muted">Every log the search selects in the range, newest first.</p>
          <button type="button" className="menu-item" disabled={busy !== null} onClick={() => void download('ndjson')}>
            {busy === 'ndjson' ? 'Exporting…' : 'Export NDJSON'}
          </button>
          <button type="button" className="menu-item" disabled={busy !== null} onClick={() => void download('csv')}>
            {busy === 'csv' ? 'Exporting…' : 'Export CSV'}
          </button>
          <p className="small muted">CSV columns: {exportColumns(props.columns).join(', ')}</p>
          {error && (
            <p className="field-error" role="alert">
              {error}
            </p>
          )}
        </div>
      )}
    </div>
  );
}
