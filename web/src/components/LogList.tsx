import { useVirtualizer, useWindowVirtualizer, type Virtualizer } from '@tanstack/react-virtual';
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { cellText, columnValue, type SortDir } from '../lib/explorer.ts';
import { formatLogTime, type TimeZoneMode } from '../lib/format.ts';
import { inlineFields } from '../lib/query.ts';
import type { Log } from '../lib/types.ts';
import { LogDetails, type RowActions } from './LogDetails.tsx';

export const ROW_HEIGHT = 30;
const NO_COLUMNS: string[] = [];
const estimateSize = () => ROW_HEIGHT;

export interface LogListProps extends RowActions {
  logs: Log[];
  /** Extra columns between the level and the message. */
  columns?: string[];
  /** Long messages wrap instead of being cut at the row's end. */
  wrap?: boolean;
  zone?: TimeZoneMode;
  sort?: { column: string; dir: SortDir } | null;
  onSort?: (column: string) => void;
  onRemoveColumn?: (column: string) => void;
  onEndReached?: () => void;
  footer?: string;
  /** A log shown open from the start (a permalink's). */
  openId?: string | null;
  /**
   * `window`: the page is the scroll (the explorer); `box`: the list scrolls in its own box (a
   * dialog's list of surrounding logs).
   */
  scroll?: 'window' | 'box';
  label?: string;
  /** A log to mark (the one a context is around). */
  markId?: string;
}

/**
 * A virtualised list of logs, newest first: only the rows in view are in the DOM, so tens of
 * thousands of lines scroll smoothly. Each row is the time, the level, any chosen columns, then the
 * message, which always keeps its room: the inline `key=value` chips after it shrink and drop out
 * first. Rows open in place to the log's details; Escape closes the last one opened. When live logs
 * arrive at the top while the reader is scrolled down, the view is shifted by their height so the
 * lines being read stay put.
 */
export function LogList(props: LogListProps) {
  return props.scroll === 'box' ? <BoxList {...props} /> : <WindowList {...props} />;
}

function WindowList(props: LogListProps) {
  const { logs } = props;
  const listRef = useRef<HTMLDivElement>(null);
  const [margin, setMargin] = useState(0);
  // Where the list starts in the page, measured when anything changes size (the bars above it grow
  // and shrink), never while scrolling: a layout read per frame would cost smoothness.
  useLayoutEffect(() => {
    const measure = () => {
      const el = listRef.current;
      if (el) setMargin(Math.round(el.getBoundingClientRect().top + window.scrollY));
    };
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(document.body);
    const main = listRef.current?.closest('main');
    if (main) for (const child of Array.from(main.children)) ro.observe(child);
    window.addEventListener('resize', measure);
    return () => {
      ro.disconnect();
      window.removeEventListener('resize', measure);
    };
  }, []);
  // Stable callbacks: the virtualizer recomputes every row's position when they change.
  const getItemKey = useCallback((i: number) => logs[i]!.id, [logs]);
  // No rows past the screen's edges while the list flies past (see `fast` in Rows).
  const flying = useRef(false);
  const virtualizer = useWindowVirtualizer({
    count: logs.length,
    estimateSize,
    getItemKey,
    overscan: flying.current ? 0 : 4,
    scrollMargin: margin,
  });

  // Keep the reader's place when rows arrive at the top.
  const firstId = useRef<string | undefined>(undefined);
  useLayoutEffect(() => {
    const previousFirst = firstId.current;
    firstId.current = logs[0]?.id;
    if (!previousFirst || logs[0]?.id === previousFirst) return;
    const added = logs.findIndex((l) => l.id === previousFirst);
    if (added > 0 && window.scrollY > margin) window.scrollBy(0, added * ROW_HEIGHT);
  }, [logs]); // eslint-disable-line react-hooks/exhaustive-deps

  return <Rows {...props} virtualizer={virtualizer} listRef={listRef} offset={margin} flying={flying} />;
}

function BoxList(props: LogListProps) {
  const { logs } = props;
  const boxRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: logs.length,
    getScrollElement: () => boxRef.current,
    estimateSize: () => ROW_HEIGHT,
    getItemKey: (i) => logs[i]!.id,
    overscan: 8,
  });
  return (
    <div ref={boxRef} className="log-box" tabIndex={0} role="region" aria-label={props.label ?? 'Log lines'}>
      <Rows {...props} virtualizer={virtualizer} offset={0} />
    </div>
  );
}

function Rows(props: LogListProps & { virtualizer: Virtualizer<Window, Element> | Virtualizer<HTMLDivElement, Element>; listRef?: React.RefObject<HTMLDivElement | null>; offset: number; flying?: React.RefObject<boolean> }) {
  const { logs, virtualizer, offset } = props;
  const columns = props.columns ?? NO_COLUMNS;
  const zone = props.zone ?? 'local';
  const [expanded, setExpanded] = useState<string[]>(() => (props.openId ? [props.openId] : []));
  // Collapsed rows are exactly ROW_HEIGHT tall and not measured (a measure is a layout read); rows
  // that were ever open (or wrapped) are measured, so their height follows them when they close.
  const everOpen = useRef(new Set<string>());
  for (const id of expanded) everOpen.current.add(id);
  useEffect(() => {
    if (props.openId) setExpanded((s) => (s.includes(props.openId!) ? s : [...s, props.openId!]));
  }, [props.openId]);

  // Escape closes the details opened last (unless a dialog or a field has the key).
  useEffect(() => {
    if (!expanded.length) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape' || e.defaultPrevented) return;
      const t = e.target as HTMLElement | null;
      if (t?.closest('dialog, input, textarea, select, [role="listbox"]')) return;
      const last = expanded[expanded.length - 1]!;
      setExpanded((s) => s.slice(0, -1));
      (document.querySelector(`[data-log-id="${CSS.escape(last)}"]`) as HTMLElement | null)?.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [expanded]);

  const items = virtualizer.getVirtualItems();
  // While the list flies past faster than a screen a frame (a fling, a dragged scrollbar), nobody
  // can read the rows, and drawing them whole costs more than a frame: they are drawn light (time,
  // level and message) until the scroll slows or stops. A single jump (Home, End, a permalink) is
  // drawn whole at once.
  const jumps = useRef({ offset: 0, big: false });
  const offsetNow = virtualizer.scrollOffset ?? 0;
  const bigJump = virtualizer.isScrolling && Math.abs(offsetNow - jumps.current.offset) > (virtualizer.scrollRect?.height ?? 600);
  const fast = bigJump && jumps.current.big;
  useLayoutEffect(() => {
    jumps.current = { offset: offsetNow, big: bigJump };
    if (props.flying) props.flying.current = fast;
  });

  // Collapsed rows are keyed by their slot in the window, not by log, so a row scrolled out is
  // reused for the one scrolled in (its text and place change; nothing is built or torn down). A
  // focused row whose slot now shows another log gives up the focus, as it would if it had left.
  const focusedLog = useRef<string | null>(null);
  const tableRef = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const active = document.activeElement;
    if (active instanceof HTMLElement && active.classList.contains('log-line') && tableRef.current?.contains(active) && active.dataset.logId !== focusedLog.current) active.blur();
  });
  const onFocus = useCallback((e: React.FocusEvent) => {
    focusedLog.current = (e.target as HTMLElement).dataset.logId ?? null;
  }, []);
  const last = items[items.length - 1];
  const { onEndReached } = props;
  useEffect(() => {
    if (last && last.index >= logs.length - 20) onEndReached?.();
  }, [last?.index, logs.length, onEndReached]); // eslint-disable-line react-hooks/exhaustive-deps

  // Stable props, so a scroll re-renders only the rows that come into view.
  const actions = useMemo<RowActions>(() => ({ onFilter: props.onFilter, onAddColumn: props.onAddColumn, onContext: props.onContext, projectId: props.projectId }), [props.onFilter, props.onAddColumn, props.onContext, props.projectId]);
  const onToggle = useCallback((id: string) => setExpanded((s) => (s.includes(id) ? s.filter((x) => x !== id) : [...s, id])), []);
  const style = { '--columns': columns.length } as React.CSSProperties;
  return (
    <div ref={props.listRef} className={`log-list${props.wrap ? ' wrap' : ''}`} style={style}>
      {(columns.length > 0 || props.onSort) && props.scroll !== 'box' && (
        <div className="log-head" role="group" aria-label="Columns">
          <span className="log-time head-cell">Time</span>
          <span className="level-head head-cell">Level</span>
          {columns.map((c) => {
            const dir = props.sort?.column === c ? props.sort.dir : undefined;
            return (
              <span key={c} className="log-cell head-cell">
                <button type="button" className="head-sort" title={`Sort the loaded logs by ${c}`} aria-label={`Sort by ${c}${dir ? (dir === 'asc' ? ', sorted ascending' : ', sorted descending') : ''}`} onClick={() => props.onSort?.(c)}>
                  {c}
                  <span aria-hidden="true">{dir === 'asc' ? ' ▲' : dir === 'desc' ? ' ▼' : ''}</span>
                </button>
                {props.onRemoveColumn && (
                  <button type="button" className="head-remove" aria-label={`Remove the column ${c}`} title={`Remove the column ${c}`} onClick={() => props.onRemoveColumn?.(c)}>
                    ×
                  </button>
                )}
              </span>
            );
          })}
          <span className="head-cell head-message">Message</span>
        </div>
      )}
      <div ref={tableRef} className="log-table" role="list" onFocus={onFocus} aria-label={props.label ?? 'Log lines'} style={{ height: virtualizer.getTotalSize() + (props.footer ? ROW_HEIGHT : 0) }}>
        {items.map((item) => {
          const log = logs[item.index]!;
          const open = expanded.includes(log.id);
          const measured = open || props.wrap || props.scroll === 'box' || everOpen.current.has(log.id);
          return (
            <div key={measured ? item.key : `slot-${item.index % items.length}`} data-index={item.index} ref={measured ? virtualizer.measureElement : undefined} className="log-row-wrap" role="listitem" style={{ transform: `translateY(${item.start - (props.scroll === 'box' ? 0 : offset)}px)` }}>
              <LogRow
                log={log}
                columns={columns}
                zone={zone}
                open={open}
                marked={props.markId === log.id}
                actions={actions}
                onToggle={onToggle}
                light={fast && !open}
              />
            </div>
          );
        })}
        {props.footer && (
          <div className="log-footer muted" style={{ transform: `translateY(${virtualizer.getTotalSize()}px)` }}>
            {props.footer}
          </div>
        )}
      </div>
    </div>
  );
}

/** What a row shows of a log, worked out once per log (rows come and go as the list scrolls). */
const parts = new WeakMap<Log, { chips: Array<{ path: string[]; value: unknown }>; firstLine: string; moreLines: number; time: string; zone: TimeZoneMode }>();
function rowParts(log: Log, zone: TimeZoneMode) {
  let p = parts.get(log);
  if (!p) {
    const nl = log.message.indexOf('\n');
    p = { chips: inlineFields(log.metadata), firstLine: nl >= 0 ? log.message.slice(0, nl) : log.message, moreLines: nl >= 0 ? log.message.split('\n').length - 1 : 0, time: formatLogTime(log.timestamp, zone), zone };
    parts.set(log, p);
  } else if (p.zone !== zone) {
    p.time = formatLogTime(log.timestamp, zone);
    p.zone = zone;
  }
  return p;
}

const LogRow = memo(function LogRow({ log, columns, zone, open, marked, onToggle, actions, light }: { log: Log; columns: string[]; zone: TimeZoneMode; open: boolean; marked: boolean; onToggle: (id: string) => void; actions: RowActions; light?: boolean }) {
  const { chips: allChips, firstLine, moreLines, time } = rowParts(log, zone);
  const chips = columns.length ? allChips.filter((c) => !columns.includes(`@${c.path.join('.')}`)) : allChips;
  return (
    <div className={`log-row lvl-row-${log.level}${open ? ' open' : ''}${marked ? ' marked' : ''}`}>
      <button type="button" className="log-line" aria-expanded={open} onClick={() => onToggle(log.id)} data-log-id={log.id}>
        <span className="log-time">{time}</span>
        <span className={`level-badge lvl-${log.level}`}>{log.level}</span>
        {columns.map((c) => {
          if (light) return <span key={c} className="log-cell" />;
          const text = c === 'timestamp' ? formatLogTime(log.timestamp, zone) : cellText(columnValue(log, c));
          return (
            <span key={c} className="log-cell" data-column={c} title={text}>
              {text}
            </span>
          );
        })}
        {!light && !columns.includes('source') && log.source && <span className="log-source">{log.source}</span>}
        <span className="log-message">
          {firstLine}
          {moreLines > 0 && <span className="more-lines"> ⏎ +{moreLines} {moreLines === 1 ? 'line' : 'lines'}</span>}
        </span>
        {!light && chips.length > 0 && (
          <span className="log-chips">
            {chips.map((c) => (
              <span key={c.path.join('.')} className="log-chip">
                {c.path.join('.')}={String(c.value)}
              </span>
            ))}
          </span>
        )}
      </button>
      {open && <LogDetails log={log} zone={zone} actions={actions} />}
    </div>
  );
});
