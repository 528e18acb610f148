import { useVirtualizer } from '@tanstack/react-virtual';
import { memo, useEffect, useLayoutEffect, useRef, useState, type RefObject } from 'react';
import { formatLogTime } from '../lib/format.ts';
import { fieldName, fieldTerm, flattenMetadata, inlineFields } from '../lib/query.ts';
import type { Log } from '../lib/types.ts';
import { CopyButton } from './ui.tsx';

export const ROW_HEIGHT = 30;

/**
 * A virtualised list of logs, newest first: only the rows in view are in the DOM, so tens of
 * thousands of lines scroll smoothly. Rows expand in place to show the whole message and metadata.
 * When live logs are prepended while the reader is scrolled down, the view is shifted by their
 * height so the lines being read stay put.
 */
export function LogList(props: { logs: Log[]; onFilter?: (term: string) => void; onEndReached?: () => void; footer?: string; scrollRef?: RefObject<HTMLDivElement | null> }) {
  const { logs } = props;
  const ownRef = useRef<HTMLDivElement>(null);
  const parentRef = props.scrollRef ?? ownRef;
  const [expanded, setExpanded] = useState<Set<string>>(() => new Set());
  const virtualizer = useVirtualizer({
    count: logs.length,
    getScrollElement: () => parentRef.current,
    estimateSize: () => ROW_HEIGHT,
    getItemKey: (i) => logs[i]!.id,
    overscan: 12,
  });

  // Keep the reader's place when rows arrive at the top.
  const firstId = useRef<string | undefined>(undefined);
  useLayoutEffect(() => {
    const el = parentRef.current;
    const previousFirst = firstId.current;
    firstId.current = logs[0]?.id;
    if (!el || !previousFirst || logs[0]?.id === previousFirst) return;
    const added = logs.findIndex((l) => l.id === previousFirst);
    if (added > 0 && el.scrollTop > 0) {
      // New rows are collapsed, so their height is known exactly.
      el.scrollTop += added * ROW_HEIGHT;
    }
  }, [logs, parentRef]);

  const items = virtualizer.getVirtualItems();
  const last = items[items.length - 1];
  const { onEndReached } = props;
  useEffect(() => {
    if (last && last.index >= logs.length - 20) onEndReached?.();
  }, [last?.index, logs.length, onEndReached]); // eslint-disable-line react-hooks/exhaustive-deps

  return (
    <div ref={parentRef} className="log-scroll" role="region" aria-label="Log lines" tabIndex={0}>
      <div className="log-table" role="list" style={{ height: virtualizer.getTotalSize() + (props.footer ? ROW_HEIGHT : 0) }}>
        {items.map((item) => {
          const log = logs[item.index]!;
          return (
            <div key={item.key} data-index={item.index} ref={virtualizer.measureElement} className="log-row-wrap" role="listitem" style={{ transform: `translateY(${item.start}px)` }}>
              <LogRow
                log={log}
                onFilter={props.onFilter}
                open={expanded.has(log.id)}
                onToggle={() =>
                  setExpanded((s) => {
                    const next = new Set(s);
                    if (next.has(log.id)) next.delete(log.id);
                    else next.add(log.id);
                    return next;
                  })
                }
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

const LogRow = memo(function LogRow({ log, open, onToggle, onFilter }: { log: Log; open: boolean; onToggle: () => void; onFilter?: (term: string) => void }) {
  const hasMeta = Object.keys(log.metadata).length > 0;
  const chips = inlineFields(log.metadata);
  const fields: Array<[string, unknown]> = [['level', log.level], ['source', log.source], ...flattenMetadata(log.metadata).map(([path, value]): [string, unknown] => [fieldName(path), value])];
  return (
    <div className={`log-row lvl-row-${log.level}${open ? ' open' : ''}`}>
      <button type="button" className="log-line" aria-expanded={open} onClick={onToggle} data-log-id={log.id}>
        <span className="log-time">{formatLogTime(log.timestamp)}</span>
        <span className={`level-badge lvl-${log.level}`}>{log.level}</span>
        <span className="log-source">{log.source ?? ''}</span>
        <span className="log-message">{log.message}</span>
        {chips.map((c) => (
          <span key={c.path.join('.')} className="log-chip">
            {c.path.join('.')}={String(c.value)}
          </span>
        ))}
      </button>
      {open && (
        <div className="log-detail">
          <pre className="log-full-message">{log.message}</pre>
          <dl className="log-fields">
            <dt>Time</dt>
            <dd>{log.timestamp}</dd>
            <dt>Received</dt>
            <dd>{log.receivedAt}</dd>
            <dt>Source</dt>
            <dd>{log.source ?? '—'}</dd>
            <dt>Id</dt>
            <dd>
              <code>{log.id}</code>
            </dd>
          </dl>
          {onFilter && (
            <table className="field-table" aria-label="Fields">
              <tbody>
                {fields.map(([field, value]) => (
                  <tr key={field}>
                    <td>
                      <button type="button" className="link-button field-name" title={`Show logs that have ${field}`} onClick={() => onFilter(`${field}:*`)}>
                        {field}
                      </button>
                    </td>
                    <td>
                      <button type="button" className="link-button field-value" title={`Filter: ${fieldTerm(field, value)}`} onClick={() => onFilter(fieldTerm(field, value))}>
                        {value === null ? 'null' : typeof value === 'object' ? JSON.stringify(value) : String(value)}
                      </button>
                    </td>
                    <td className="field-actions">
                      <button type="button" className="chip" aria-label={`Filter to ${fieldTerm(field, value)}`} onClick={() => onFilter(fieldTerm(field, value))}>
                        +
                      </button>
                      <button type="button" className="chip" aria-label={`Exclude ${fieldTerm(field, value)}`} onClick={() => onFilter(fieldTerm(field, value, true))}>
                        −
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {hasMeta ? <pre className="json" aria-label="Metadata">{JSON.stringify(log.metadata, null, 2)}</pre> : <p className="muted small">No metadata.</p>}
          <CopyButton text={JSON.stringify(log, null, 2)} label="Copy as JSON" />
        </div>
      )}
    </div>
  );
});
