import { useEffect, useId, useMemo, useState } from 'react';
import { ApiError } from '../lib/api.ts';
import { useApi } from '../lib/context.ts';
import { arrangeFields, facetRaw, numericRangeTerm, readFieldPrefs, toggleHide, togglePin, writeFieldPrefs, type FieldPrefs } from '../lib/explorer.ts';
import { facetsPath, fieldsPath, type Facet, type FacetsAnswer, type FieldsAnswer } from '../lib/explorer-api.ts';
import { formatCount } from '../lib/format.ts';
import { fieldTerm, summariseFields } from '../lib/query.ts';
import type { Log } from '../lib/types.ts';
import { ErrorNote, Spinner } from './ui.tsx';

const SHOWN = 40;

function store(): Storage | undefined {
  try {
    return localStorage;
  } catch {
    return undefined;
  }
}

/**
 * The fields of the logs the search selects over the whole range (from the server: `/logs/fields`),
 * most common first, pinned ones on top and hidden ones out of the way (both remembered per project
 * in this browser), with a search box. Opening a field asks `/logs/facets` for its top values and
 * counts over the range (and, for numbers, min/max/p50/p95 and a range filter).
 */
export function FieldSidebar(props: { projectId: string; filters: string; logs: Log[]; columns: string[]; onFilter: (term: string) => void; onAddColumn: (field: string) => void }) {
  const api = useApi();
  const id = useId();
  const [fields, setFields] = useState<FieldsAnswer | undefined>();
  const [fieldsError, setFieldsError] = useState<unknown>();
  const [prefs, setPrefs] = useState<FieldPrefs>(() => readFieldPrefs(store(), props.projectId));
  const [search, setSearch] = useState('');
  const [all, setAll] = useState(false);
  const [open, setOpen] = useState<string[]>(() => readFieldPrefs(store(), props.projectId).pinned.slice(0, 10));
  const [facets, setFacets] = useState<Map<string, Facet>>(new Map());
  const [facetsError, setFacetsError] = useState<unknown>();
  const [facetsLoading, setFacetsLoading] = useState(false);
  const [narrow] = useState(() => typeof window !== 'undefined' && window.matchMedia('(max-width: 800px)').matches);

  const updatePrefs = (next: FieldPrefs) => {
    setPrefs(next);
    writeFieldPrefs(store(), props.projectId, next);
  };

  useEffect(() => {
    const ctrl = new AbortController();
    setFieldsError(undefined);
    api.get<FieldsAnswer>(fieldsPath(props.projectId, new URLSearchParams(props.filters)), ctrl.signal).then(
      (f) => setFields(f),
      (e: unknown) => !ctrl.signal.aborted && setFieldsError(e),
    );
    return () => ctrl.abort();
  }, [api, props.projectId, props.filters]);

  // The server has no field list (an older server): count the loaded logs instead.
  const fallback = fieldsError instanceof ApiError && (fieldsError.status === 404 || fieldsError.status === 405);
  const local = useMemo(() => (fallback ? summariseFields(props.logs) : []), [fallback, props.logs]);
  const list = useMemo(() => {
    const base = fallback ? [{ field: 'level', count: props.logs.length }, ...local.map((f) => ({ field: f.field, count: f.count }))] : (fields?.fields ?? []);
    return arrangeFields(base, prefs, search);
  }, [fallback, local, fields, prefs, search, props.logs.length]);
  const total = fallback ? Math.min(1000, props.logs.length) : fields?.total;

  const openKey = open.join('\u0000');
  useEffect(() => {
    if (fallback || open.length === 0) return;
    const ctrl = new AbortController();
    setFacetsLoading(true);
    setFacetsError(undefined);
    api.get<FacetsAnswer>(facetsPath(props.projectId, new URLSearchParams(props.filters), open.slice(0, 20), { limit: 10 }), ctrl.signal).then(
      (a) => {
        setFacets(new Map(a.facets.map((f) => [f.field, f])));
        setFacetsLoading(false);
      },
      (e: unknown) => {
        if (ctrl.signal.aborted) return;
        setFacetsError(e);
        setFacetsLoading(false);
      },
    );
    return () => ctrl.abort();
  }, [api, props.projectId, props.filters, openKey, fallback]); // eslint-disable-line react-hooks/exhaustive-deps

  const toggleOpen = (field: string) => setOpen((o) => (o.includes(field) ? o.filter((f) => f !== field) : [...o, field].slice(-20)));
  const shown = all || search ? list : list.slice(0, SHOWN);

  return (
    <aside className="field-sidebar" aria-label="Fields">
      <details open={!narrow}>
        <summary>
          Fields{' '}
          <span className="muted">
            {total === undefined ? '' : fallback ? `in the ${formatCount(total)} logs loaded` : `in ${formatCount(total)} ${total === 1 ? 'log' : 'logs'} of the range`}
          </span>
        </summary>
        <label className="visually-hidden" htmlFor={`${id}-search`}>
          Search fields
        </label>
        <input id={`${id}-search`} type="search" className="field-search" placeholder="Search fields" value={search} onChange={(e) => setSearch(e.target.value)} />
        {fieldsError !== undefined && !fallback && <ErrorNote error={fieldsError} />}
        {!fields && !fieldsError && <Spinner label="Listing fields…" />}
        {fields && list.length === 0 && <p className="muted small">{search ? 'No field matches.' : 'No fields.'}</p>}
        <ul className="field-list">
          {shown.map((f) => {
            const isOpen = fallback ? open.includes(f.field) : open.includes(f.field);
            const facet = facets.get(f.field);
            const localTop = fallback ? local.find((l) => l.field === f.field) : undefined;
            return (
              <li key={f.field} className={`field-item${f.pinned ? ' pinned' : ''}`}>
                <div className="field-head">
                  <button type="button" className="field-toggle" aria-expanded={isOpen} onClick={() => toggleOpen(f.field)} title={f.field}>
                    <span className="field-summary-name">{f.field}</span> <span className="muted">{formatCount(f.count)}</span>
                  </button>
                  <span className="field-tools">
                    <button type="button" className="chip" aria-pressed={f.pinned} aria-label={`${f.pinned ? 'Unpin' : 'Pin'} ${f.field}`} title={f.pinned ? 'Unpin' : 'Pin to the top'} onClick={() => updatePrefs(togglePin(prefs, f.field))}>
                      {f.pinned ? '★' : '☆'}
                    </button>
                    <button type="button" className="chip" aria-label={`Hide ${f.field}`} title="Hide this field" onClick={() => updatePrefs(toggleHide(prefs, f.field))}>
                      ⊘
                    </button>
                    {f.field !== 'level' && (
                      <button type="button" className="chip" aria-label={`Add ${f.field} as a column`} title="Add as a column" aria-pressed={props.columns.includes(f.field)} onClick={() => props.onAddColumn(f.field)}>
                        ⊞
                      </button>
                    )}
                  </span>
                </div>
                {isOpen && (
                  <div className="field-values" role="group" aria-label={`Values of ${f.field}`}>
                    {fallback && localTop ? (
                      <ValueList field={f.field} values={localTop.top.map((v) => ({ value: v.text, raw: v.value, count: v.count }))} onFilter={props.onFilter} />
                    ) : facet ? (
                      <FacetView facet={facet} onFilter={props.onFilter} />
                    ) : facetsError !== undefined ? (
                      <ErrorNote error={facetsError} />
                    ) : facetsLoading ? (
                      <Spinner label="Counting…" />
                    ) : null}
                  </div>
                )}
              </li>
            );
          })}
        </ul>
        {!all && !search && list.length > SHOWN && (
          <button type="button" className="link-button" onClick={() => setAll(true)}>
            Show all {formatCount(list.length)} fields
          </button>
        )}
        {prefs.hidden.length > 0 && (
          <details className="hidden-fields">
            <summary>Hidden fields ({prefs.hidden.length})</summary>
            <ul>
              {prefs.hidden.map((h) => (
                <li key={h}>
                  <span className="field-summary-name">{h}</span>{' '}
                  <button type="button" className="link-button" aria-label={`Show ${h} again`} onClick={() => updatePrefs(toggleHide(prefs, h))}>
                    Show
                  </button>
                </li>
              ))}
            </ul>
          </details>
        )}
      </details>
    </aside>
  );
}

function ValueList({ field, values, onFilter }: { field: string; values: Array<{ value: string; raw: unknown; count: number }>; onFilter: (term: string) => void }) {
  return (
    <ul className="facet-values">
      {values.map((v) => (
        <li key={v.value}>
          <button type="button" className="link-button field-value" title={`Filter: ${fieldTerm(field, v.raw)}`} onClick={() => onFilter(fieldTerm(field, v.raw))}>
            {v.value}
          </button>
          <span className="muted facet-count">{formatCount(v.count)}</span>
          <button type="button" className="chip" aria-label={`Exclude ${fieldTerm(field, v.raw)}`} onClick={() => onFilter(fieldTerm(field, v.raw, true))}>
            −
          </button>
        </li>
      ))}
    </ul>
  );
}


function FacetView({ facet, onFilter }: { facet: Facet; onFilter: (term: string) => void }) {
  const id = useId();
  const [min, setMin] = useState('');
  const [max, setMax] = useState('');
  const [error, setError] = useState<string | null>(null);
  const values = facet.values.filter((v) => v.value !== '(other)' && v.value !== '(none)');
  return (
    <>
      <ValueList field={facet.field} values={values.map((v) => ({ value: v.value, raw: facetRaw(v.value), count: v.count }))} onFilter={onFilter} />
      {(facet.other > 0 || facet.none > 0) && (
        <p className="muted small facet-rest">
          {facet.other > 0 && <>other values {formatCount(facet.other)}</>}
          {facet.other > 0 && facet.none > 0 && ' · '}
          {facet.none > 0 && <>without it {formatCount(facet.none)}</>}
        </p>
      )}
      {facet.numeric && (
        <>
          <dl className="numeric-stats">
            <dt>min</dt>
            <dd>{facet.numeric.min}</dd>
            <dt>p50</dt>
            <dd>{facet.numeric.p50}</dd>
            <dt>p95</dt>
            <dd>{facet.numeric.p95}</dd>
            <dt>max</dt>
            <dd>{facet.numeric.max}</dd>
          </dl>
          <form
            className="range-filter"
            aria-label={`Range of ${facet.field}`}
            onSubmit={(e) => {
              e.preventDefault();
              const term = numericRangeTerm(facet.field, min, max);
              if (!term) return setError('Enter numbers, the first not above the second (leave one empty for an open end).');
              setError(null);
              onFilter(term);
            }}
          >
            <label htmlFor={`${id}-min`} className="visually-hidden">
              {`Minimum ${facet.field}`}
            </label>
            <input id={`${id}-min`} inputMode="decimal" placeholder={String(facet.numeric.min)} value={min} onChange={(e) => setMin(e.target.value)} />
            <span aria-hidden="true">to</span>
            <label htmlFor={`${id}-max`} className="visually-hidden">
              {`Maximum ${facet.field}`}
            </label>
            <input id={`${id}-max`} inputMode="decimal" placeholder={String(facet.numeric.max)} value={max} onChange={(e) => setMax(e.target.value)} />
            <button type="submit" className="secondary small">
              Filter
            </button>
            {error && (
              <span className="field-error" role="alert">
                {error}
              </span>
            )}
          </form>
        </>
      )}
    </>
  );
}
