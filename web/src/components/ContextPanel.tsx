import { useEffect, useId, useMemo, useState } from 'react';
import { useApi } from '../lib/context.ts';
import { contextQuery } from '../lib/explorer.ts';
import { contextPath, type ContextAnswer } from '../lib/explorer-api.ts';
import { formatTime, type TimeZoneMode } from '../lib/format.ts';
import { fieldName, flattenMetadata } from '../lib/query.ts';
import type { Log } from '../lib/types.ts';
import { LogList } from './LogList.tsx';
import { Dialog, ErrorNote, Spinner } from './ui.tsx';

/**
 * The logs around one log, by time (20 before and 20 after), oldest at the top: every log, or only
 * those from the same source, or with the same value of a chosen field.
 */
export function ContextPanel(props: { projectId: string; log: Log | null; zone: TimeZoneMode; onClose: () => void; onFilter: (term: string) => void }) {
  const api = useApi();
  const id = useId();
  const [scope, setScope] = useState('all');
  const [answer, setAnswer] = useState<ContextAnswer | undefined>();
  const [error, setError] = useState<unknown>();
  const log = props.log;
  const fields = useMemo(() => (log ? flattenMetadata(log.metadata).filter(([, v]) => v !== null && typeof v !== 'object').map(([p]) => fieldName(p)) : []), [log]);

  useEffect(() => setScope('all'), [log?.id]);
  useEffect(() => {
    if (!log) return;
    const ctrl = new AbortController();
    setAnswer(undefined);
    setError(undefined);
    api.get<ContextAnswer>(contextPath(props.projectId, log.id, { before: 20, after: 20, query: contextQuery(log, scope) }), ctrl.signal).then(setAnswer, (e: unknown) => !ctrl.signal.aborted && setError(e));
    return () => ctrl.abort();
  }, [api, props.projectId, log, scope]);

  // Oldest at the top, as the lines were written.
  const lines = answer ? [...answer.before].reverse().concat([answer.log], answer.after) : [];
  return (
    <Dialog open={log !== null} title="Surrounding logs" onClose={props.onClose}>
      {log && (
        <div className="context-panel">
          <p className="small muted">
            Around {formatTime(log.timestamp, props.zone)}: up to 20 logs before and 20 after, oldest first; the log itself is marked.
          </p>
          <label className="inline-label" htmlFor={`${id}-scope`}>
            <span>Show</span>
          </label>
          <select id={`${id}-scope`} value={scope} onChange={(e) => setScope(e.target.value)}>
            <option value="all">Every log</option>
            <option value="source" disabled={log.source === null}>
              The same source{log.source ? ` (${log.source})` : ''}
            </option>
            {fields.map((f) => (
              <option key={f} value={f}>
                The same {f}
              </option>
            ))}
          </select>
          {error !== undefined && <ErrorNote error={error} />}
          {!answer && error === undefined && <Spinner label="Loading the surrounding logs…" />}
          {answer && (
            <>
              <p className="small muted" aria-live="polite">
                {answer.before.length} before · {answer.after.length} after
              </p>
              <LogList logs={lines} scroll="box" label="Surrounding logs" markId={answer.log.id} zone={props.zone} projectId={props.projectId} />
            </>
          )}
          <div className="form-actions">
            <button type="button" className="secondary" onClick={props.onClose}>
              Close
            </button>
          </div>
        </div>
      )}
    </Dialog>
  );
}
