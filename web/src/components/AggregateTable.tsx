import { useEffect, useId, useState } from 'react';
import { useApi } from '../lib/context.ts';
import { facetRaw } from '../lib/explorer.ts';
import { facetsPath, type Facet, type FacetsAnswer } from '../lib/explorer-api.ts';
import { formatCount } from '../lib/format.ts';
import { fieldTerm } from '../lib/query.ts';
import { ErrorNote, Spinner } from './ui.tsx';

/**
 * The top values of the histogram's split (level when it is not split) over the whole range, as a
 * table: count and share, and with a measure (a numeric `@path`) its p50 and p95 per value.
 */
export function AggregateTable(props: { projectId: string; filters: string; field: string; onFilter: (term: string) => void }) {
  const api = useApi();
  const id = useId();
  const [measure, setMeasure] = useState('');
  const [measureText, setMeasureText] = useState('');
  const [answer, setAnswer] = useState<{ total: number; facet: Facet } | undefined>();
  const [error, setError] = useState<unknown>();
  const field = props.field || 'level';

  useEffect(() => {
    const ctrl = new AbortController();
    setError(undefined);
    api.get<FacetsAnswer>(facetsPath(props.projectId, new URLSearchParams(props.filters), [field], { limit: 10, measure: measure || undefined }), ctrl.signal).then(
      (a) => setAnswer(a.facets[0] ? { total: a.total, facet: a.facets[0] } : undefined),
      (e: unknown) => !ctrl.signal.aborted && setError(e),
    );
    return () => ctrl.abort();
  }, [api, props.projectId, props.filters, field, measure]);

  const rows = answer ? answer.facet.values : [];
  return (
    <section className="aggregate card" aria-labelledby={`${id}-title`}>
      <div className="aggregate-head">
        <h2 id={`${id}-title`}>
          Top {field}
        </h2>
        <form
          className="measure-form"
          onSubmit={(e) => {
            e.preventDefault();
            const m = measureText.trim();
            setMeasure(m === '' ? '' : m.startsWith('@') ? m : `@${m}`);
          }}
        >
          <label className="inline-label" htmlFor={`${id}-measure`}>
            <span>p50/p95 of</span>
          </label>
          <input id={`${id}-measure`} placeholder="@responseTime" value={measureText} spellCheck={false} onChange={(e) => setMeasureText(e.target.value)} />
          <button type="submit" className="secondary small">
            Apply
          </button>
        </form>
      </div>
      {error !== undefined ? (
        <ErrorNote error={error} />
      ) : !answer ? (
        <Spinner label="Counting…" />
      ) : (
        <table className="table aggregate-table">
          <caption className="visually-hidden">{`Logs per ${field}${measure ? `, with p50 and p95 of ${measure}` : ''}`}</caption>
          <thead>
            <tr>
              <th scope="col">{field}</th>
              <th scope="col" className="num">
                Logs
              </th>
              <th scope="col" className="num">
                Share
              </th>
              {measure && (
                <>
                  <th scope="col" className="num">
                    p50
                  </th>
                  <th scope="col" className="num">
                    p95
                  </th>
                </>
              )}
            </tr>
          </thead>
          <tbody>
            {rows.map((v) => (
              <tr key={v.value}>
                <td>
                  <button type="button" className="link-button" title={`Filter: ${fieldTerm(field, facetRaw(v.value))}`} onClick={() => props.onFilter(fieldTerm(field, facetRaw(v.value)))}>
                    {v.value}
                  </button>
                </td>
                <td className="num">{formatCount(v.count)}</td>
                <td className="num">{answer.total ? `${((v.count / answer.total) * 100).toFixed(1)} %` : '–'}</td>
                {measure && (
                  <>
                    <td className="num">{v.p50 ?? '–'}</td>
                    <td className="num">{v.p95 ?? '–'}</td>
                  </>
                )}
              </tr>
            ))}
            {answer.facet.other > 0 && (
              <tr className="muted">
                <td>(other)</td>
                <td className="num">{formatCount(answer.facet.other)}</td>
                <td className="num">{answer.total ? `${((answer.facet.other / answer.total) * 100).toFixed(1)} %` : '–'}</td>
                {measure && <td colSpan={2} />}
              </tr>
            )}
            {answer.facet.none > 0 && (
              <tr className="muted">
                <td>(none)</td>
                <td className="num">{formatCount(answer.facet.none)}</td>
                <td className="num">{answer.total ? `${((answer.facet.none / answer.total) * 100).toFixed(1)} %` : '–'}</td>
                {measure && <td colSpan={2} />}
              </tr>
            )}
          </tbody>
        </table>
      )}
    </section>
  );
}
