import { useEffect, useId, useState, useSyncExternalStore } from 'react';
import { parseTypedRange, rangeLabel, rangeText } from '../lib/explorer.ts';
import { getTimeZoneMode, setTimeZoneMode, subscribeTimeZoneMode, zoneLabel, type TimeZoneMode } from '../lib/format.ts';
import { PRESETS, type TimeRange } from '../lib/query.ts';

/** The reader's time zone choice (UTC or local), re-rendering when it changes on any page. */
export function useTimeZone(): TimeZoneMode {
  return useSyncExternalStore(subscribeTimeZoneMode, getTimeZoneMode, getTimeZoneMode);
}

export const AUTO_REFRESH = [
  { id: 'off', label: 'Off', ms: 0 },
  { id: '10s', label: 'Every 10 s', ms: 10_000 },
  { id: '30s', label: 'Every 30 s', ms: 30_000 },
  { id: '1m', label: 'Every minute', ms: 60_000 },
] as const;
export type AutoRefresh = (typeof AUTO_REFRESH)[number]['id'];

/**
 * The time range: a box that takes what people type (`2h`, `15m`, `yesterday`, `today`, or
 * `2026-11-28 10:00:00 to 2026-11-28 11:00:00`), the presets, the UTC/local switch, auto-refresh for
 * "Last …" ranges, zoom out (after zooming in on the chart) and refresh.
 */
export function TimeControls(props: {
  range: TimeRange;
  now: number;
  onRange: (range: TimeRange) => void;
  onRefresh: () => void;
  autoRefresh: AutoRefresh;
  onAutoRefresh: (v: AutoRefresh) => void;
  onZoomOut?: () => void;
}) {
  const zone = useTimeZone();
  const id = useId();
  const [text, setText] = useState(rangeText(props.range, zone));
  const [error, setError] = useState<string | null>(null);
  const key = props.range.kind === 'preset' ? props.range.preset : `${props.range.from}-${props.range.to}`;
  useEffect(() => {
    setText(rangeText(props.range, zone));
    setError(null);
  }, [key, zone]); // eslint-disable-line react-hooks/exhaustive-deps

  function apply() {
    const r = parseTypedRange(text, Date.now(), zone);
    if ('error' in r) return setError(r.error);
    setError(null);
    props.onRange(r.range);
  }

  const relative = props.range.kind === 'preset';
  return (
    <div className="time-controls" role="group" aria-label="Time">
      <form
        className="time-typed"
        onSubmit={(e) => {
          e.preventDefault();
          apply();
        }}
      >
        <label className="inline-label" htmlFor={`${id}-range`}>
          <span>Time range ({zoneLabel(zone, props.now)})</span>
        </label>
        <div className="time-input-row">
          <input
            id={`${id}-range`}
            className="range-input"
            value={text}
            title="Type 2h, 15m, today, yesterday, or 2026-11-28 10:00:00 to 2026-11-28 11:00:00"
            placeholder="2h, today, or … to …"
            list={`${id}-presets`}
            spellCheck={false}
            autoComplete="off"
            aria-invalid={error ? true : undefined}
            aria-describedby={`${id}-hint${error ? ` ${id}-error` : ''}`}
            onChange={(e) => setText(e.target.value)}
          />
          <datalist id={`${id}-presets`}>
            {PRESETS.map((p) => (
              <option key={p.id} value={p.id}>
                {p.label}
              </option>
            ))}
            <option value="today">Today</option>
            <option value="yesterday">Yesterday</option>
          </datalist>
          <button type="submit" className="secondary">
            Apply
          </button>
        </div>
        <span className="visually-hidden" id={`${id}-hint`}>
          {rangeLabel(props.range, zone)}. Type 2h, 15m, today, yesterday, or two times joined by “to”, such as 2026-11-28 10:00:00 to 2026-11-28 11:00:00.
        </span>
        {error && (
          <span className="field-error" id={`${id}-error`} role="alert">
            {error}
          </span>
        )}
      </form>
      <label className="inline-label">
        <span>Presets</span>
        <select
          value={relative && PRESETS.some((p) => p.id === (props.range as { preset: string }).preset) ? (props.range as { preset: string }).preset : ''}
          onChange={(e) => e.target.value && props.onRange({ kind: 'preset', preset: e.target.value })}
        >
          <option value="">Choose…</option>
          {PRESETS.map((p) => (
            <option key={p.id} value={p.id}>
              {p.label}
            </option>
          ))}
        </select>
      </label>
      <label className="inline-label">
        <span>Time zone</span>
        <select value={zone} onChange={(e) => setTimeZoneMode(e.target.value as TimeZoneMode)}>
          <option value="local">Local ({zoneLabel('local', props.now)})</option>
          <option value="utc">UTC</option>
        </select>
      </label>
      <label className="inline-label">
        <span>Auto-refresh</span>
        <select value={props.autoRefresh} onChange={(e) => props.onAutoRefresh(e.target.value as AutoRefresh)} disabled={!relative} title={relative ? undefined : 'Auto-refresh follows the “Last …” ranges'}>
          {AUTO_REFRESH.map((a) => (
            <option key={a.id} value={a.id}>
              {a.label}
            </option>
          ))}
        </select>
      </label>
      <div className="time-buttons">
        {props.onZoomOut && (
          <button type="button" className="secondary" onClick={props.onZoomOut}>
            Zoom out
          </button>
        )}
        <button type="button" className="secondary" onClick={props.onRefresh} title="Run the query again up to now">
          Refresh
        </button>
      </div>
    </div>
  );
}
