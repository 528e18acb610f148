import { useMemo, useState } from 'react';
import { LEVELS, type Level } from '../lib/query.ts';
import { formatCount, formatTick, formatTime, type TimeZoneMode } from '../lib/format.ts';
import type { Stats } from '../lib/types.ts';

const AXIS = 20;
const LEFT = 44;

/** Rounds a maximum up to a tidy axis value (1, 2, 5 × 10ⁿ). */
export function niceCeiling(n: number): number {
  if (n <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 5, 10]) if (m * p >= n) return m * p;
  return 10 * p;
}

/**
 * Log counts per time bucket, stacked by level (or by the split's groups). Clicking a bar zooms the
 * explorer into that bucket; from the keyboard, the chart takes focus, the arrow keys choose a bar
 * (its counts are read out) and Enter zooms in.
 */
export function Histogram({ stats, width, onSelect, zone = 'local' }: { stats: Stats; width: number; onSelect?: (from: number, to: number) => void; zone?: TimeZoneMode }) {
  const [hover, setHover] = useState<number | null>(null);
  // Shorter on a phone, where the list below matters more.
  const HEIGHT = width < 520 ? 80 : 110;
  const buckets = stats.buckets;
  const intervalMs = buckets.length > 1 ? Date.parse(buckets[1]!.start) - Date.parse(buckets[0]!.start) : 60_000;
  const max = niceCeiling(Math.max(0, ...buckets.map((b) => b.total)));
  const plotW = Math.max(50, width - LEFT - 4);
  const barW = buckets.length ? plotW / buckets.length : plotW;
  const total = useMemo(() => buckets.reduce((s, b) => s + b.total, 0), [buckets]);
  const span = buckets.length * intervalMs;
  const tickEvery = Math.max(1, Math.ceil(buckets.length / Math.max(2, Math.floor(plotW / 90))));
  const h = hover !== null ? buckets[hover] : undefined;
  // Split by a field (`groupBy`): the groups of the whole range, most logs first.
  const groups = useMemo(() => {
    const totals = new Map<string, number>();
    let any = false;
    for (const b of buckets) {
      if (!b.groups) continue;
      any = true;
      for (const [g, n] of Object.entries(b.groups)) totals.set(g, (totals.get(g) ?? 0) + n);
    }
    if (!any) return undefined;
    const rest = (g: string) => (g === '(other)' ? 2 : g === '(none)' ? 1 : 0);
    return [...totals.entries()].sort((a, b) => rest(a[0]) - rest(b[0]) || b[1] - a[1] || a[0].localeCompare(b[0])).map(([g]) => g);
  }, [buckets]);
  const groupClass = (g: string) => (g === '(other)' ? 'group-fill-other' : g === '(none)' ? 'group-fill-none' : `group-fill-${groups!.indexOf(g) % 10}`);
  const series: Array<{ key: string; cls: string; count: (b: (typeof buckets)[number]) => number }> = groups
    ? groups.map((g) => ({ key: g, cls: groupClass(g), count: (b) => b.groups?.[g] ?? 0 }))
    : LEVELS.map((level: Level) => ({ key: level, cls: `lvl-fill-${level}`, count: (b) => b.levels[level] ?? 0 }));
  const by = groups ? (stats as { groupBy?: string }).groupBy ?? 'field' : 'level';

  const onKey = (e: React.KeyboardEvent) => {
    if (!buckets.length) return;
    if (e.key === 'ArrowRight' || e.key === 'ArrowLeft' || e.key === 'Home' || e.key === 'End') {
      e.preventDefault();
      setHover((h) => {
        if (e.key === 'Home') return 0;
        if (e.key === 'End') return buckets.length - 1;
        if (h === null) return e.key === 'ArrowRight' ? 0 : buckets.length - 1;
        return Math.max(0, Math.min(buckets.length - 1, h + (e.key === 'ArrowRight' ? 1 : -1)));
      });
    } else if ((e.key === 'Enter' || e.key === ' ') && hover !== null && onSelect) {
      e.preventDefault();
      const start = Date.parse(buckets[hover]!.start);
      onSelect(start, start + intervalMs);
    }
  };

  return (
    <figure
      className="histogram"
      aria-label={`Log volume: ${formatCount(total)} logs in ${buckets.length} buckets of ${stats.interval}${onSelect ? '. Arrow keys choose a bar, Enter zooms into it.' : ''}`}
      tabIndex={onSelect ? 0 : undefined}
      onKeyDown={onSelect ? onKey : undefined}
      onBlur={() => setHover(null)}
    >
      <svg width={width} height={HEIGHT + AXIS} role="img" aria-labelledby="histogram-title">
        <title id="histogram-title">{`${formatCount(total)} logs, per ${stats.interval}, stacked by ${by}`}</title>
        <line x1={LEFT} x2={LEFT + plotW} y1={HEIGHT} y2={HEIGHT} className="axis" />
        <text x={LEFT - 6} y={10} className="axis-label" textAnchor="end">
          {formatCount(max)}
        </text>
        <text x={LEFT - 6} y={HEIGHT} className="axis-label" textAnchor="end">
          0
        </text>
        <line x1={LEFT} x2={LEFT + plotW} y1={HEIGHT / 2} y2={HEIGHT / 2} className="grid" />
        {buckets.map((b, i) => {
          let y = HEIGHT;
          const x = LEFT + i * barW;
          const bucketStart = Date.parse(b.start);
          return (
            <g
              key={b.start}
              className={`bar${hover === i ? ' hover' : ''}`}
              onMouseEnter={() => setHover(i)}
              onMouseLeave={() => setHover((v) => (v === i ? null : v))}
              onClick={() => onSelect?.(bucketStart, bucketStart + intervalMs)}
            >
              <rect x={x} y={0} width={barW} height={HEIGHT} className="bar-hit" />
              {series.map((sr) => {
                const n = sr.count(b);
                if (!n) return null;
                const hgt = (n / max) * HEIGHT;
                y -= hgt;
                return <rect key={sr.key} x={x + 0.5} y={y} width={Math.max(1, barW - 1)} height={hgt} className={sr.cls} />;
              })}
              {i % tickEvery === 0 && x < LEFT + plotW - 34 && (
                <text x={x} y={HEIGHT + 14} className="axis-label">
                  {formatTick(bucketStart, span, zone)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption className="histogram-caption" aria-live="polite">
        {h ? (
          <>
            <strong>{formatTime(h.start, zone)}</strong> · {formatCount(h.total)} logs
            {series.filter((sr) => sr.count(h)).map((sr) => (
              <span key={sr.key} className="legend-item">
                <span className={`swatch ${sr.cls}`} aria-hidden="true" /> {sr.key} {formatCount(sr.count(h))}
              </span>
            ))}
          </>
        ) : (
          <>
            {formatCount(total)} logs · per {stats.interval}
            {series.map((sr) => (
              <span key={sr.key} className="legend-item">
                <span className={`swatch ${groups ? sr.cls : `lvl-bg-${sr.key}`}`} aria-hidden="true" /> {sr.key}
              </span>
            ))}
            {onSelect && <span className="muted"> · click a bar (or focus the chart and press Enter) to zoom in</span>}
          </>
        )}
      </figcaption>
    </figure>
  );
}
