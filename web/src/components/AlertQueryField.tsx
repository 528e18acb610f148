import { useEffect, useId, useState } from 'react';
import { ApiError } from '../lib/api.ts';
import { useApi } from '../lib/context.ts';
import { querySyntaxError } from '../lib/query.ts';
import { QueryProblemNote, type QueryProblem } from './QueryProblemNote.tsx';

/** How long typing pauses before the query is checked. */
const CHECK_AFTER_MS = 350;

/**
 * The query of an alert rule's body error (`/condition/query`), as the search's own error reads:
 * its column and message.
 */
export function ruleQueryError(error: unknown): QueryProblem | undefined {
  if (!(error instanceof ApiError) || error.status !== 400 || !Array.isArray(error.details)) return undefined;
  return querySyntaxError(error.details.map((d) => (d && (d as { path?: string }).path === '/condition/query' ? { ...d, path: 'querystring:/query' } : d)));
}

/**
 * The alert form's query field, in the search language (docs/search.md), checked as you type:
 * once typing pauses, the project's search is asked with the query over an instant (next to nothing
 * is read) and a 400 is shown under the field with a caret at its column, as the explorer does. The
 * server's answer to the form itself (`serverError`) is shown the same way until the query changes.
 */
export function AlertQueryField(props: { projectId: string; value: string; onChange: (v: string) => void; serverError?: QueryProblem }) {
  const { projectId, value } = props;
  const api = useApi();
  const id = useId();
  const [checked, setChecked] = useState<{ text: string; error?: QueryProblem }>({ text: '' });

  useEffect(() => {
    if (value.trim() === '') {
      setChecked({ text: value });
      return;
    }
    let stale = false;
    const timer = setTimeout(() => {
      const at = new Date().toISOString();
      const p = new URLSearchParams({ query: value, from: at, to: at, limit: '1' });
      api.call(`GET`, `/v1/projects/${encodeURIComponent(projectId)}/logs?${p}`).then(
        () => !stale && setChecked({ text: value }),
        (err: unknown) => {
          if (stale) return;
          // Only the query's own errors count; anything else (offline, a 5xx) says nothing of it.
          setChecked({ text: value, error: err instanceof ApiError && err.status === 400 ? querySyntaxError(err.details) : undefined });
        },
      );
    }, CHECK_AFTER_MS);
    return () => {
      stale = true;
      clearTimeout(timer);
    };
  }, [api, projectId, value]);

  const error = props.serverError ?? (checked.text === value ? checked.error : undefined);
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  return (
    <div className={`field${error ? ' has-error' : ''}`}>
      <label htmlFor={id}>Query (optional)</label>
      <input
        id={id}
        className="query-input"
        value={value}
        maxLength={2000}
        spellCheck={false}
        autoComplete="off"
        placeholder='e.g. @res.statusCode:>=500 -@req.url:"/healthz"'
        onChange={(e) => props.onChange(e.target.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${hintId} ${errorId}` : hintId}
      />
      <div className="hint" id={hintId}>
        The search language of the log explorer; the rule counts logs of its level that match it too.
      </div>
      {error && <QueryProblemNote id={errorId} query={value} error={error} />}
    </div>
  );
}
