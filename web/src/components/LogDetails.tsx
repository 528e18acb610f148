import { useId, useState } from 'react';
import { cellText, isMultiline, logPermalink } from '../lib/explorer.ts';
import { formatTime, type TimeZoneMode } from '../lib/format.ts';
import { fieldName, fieldTerm, flattenMetadata } from '../lib/query.ts';
import type { Log } from '../lib/types.ts';
import { CopyButton } from './ui.tsx';

export interface RowActions {
  onFilter?: (term: string) => void;
  onAddColumn?: (field: string) => void;
  onContext?: (log: Log) => void;
  /** For the permalink. */
  projectId?: string;
}

type Tab = 'pretty' | 'raw' | 'json';
const TABS: Array<{ id: Tab; label: string }> = [
  { id: 'pretty', label: 'Pretty' },
  { id: 'raw', label: 'Raw' },
  { id: 'json', label: 'JSON' },
];

/**
 * One log in full: Pretty (the message, then every field with its actions; multi-line strings such
 * as stack traces preformatted), Raw (the log as one line of JSON, as exported) or JSON (indented),
 * and the log's own actions: copy a link to it, show the logs around it, copy it.
 */
export function LogDetails({ log, zone, actions }: { log: Log; zone: TimeZoneMode; actions: RowActions }) {
  const [tab, setTab] = useState<Tab>('pretty');
  const fields: Array<[string, unknown]> = [['level', log.level], ['source', log.source], ...flattenMetadata(log.metadata).map(([path, value]): [string, unknown] => [fieldName(path), value])];
  const uid = useId();
  const tabId = (t: Tab) => `${uid}-tab-${t}`;
  const panelId = `${uid}-panel`;
  const { onFilter, onAddColumn, onContext, projectId } = actions;
  const link = projectId ? `${location.origin}${logPermalink(projectId, log)}` : undefined;
  return (
    <div className="log-detail">
      <div className="log-detail-head">
        <div className="tabs detail-tabs" role="tablist" aria-label="Show the log as">
          {TABS.map((t) => (
            <button
              key={t.id}
              type="button"
              role="tab"
              id={tabId(t.id)}
              aria-selected={tab === t.id}
              aria-controls={panelId}
              tabIndex={tab === t.id ? 0 : -1}
              onClick={() => setTab(t.id)}
              onKeyDown={(e) => {
                const i = TABS.findIndex((x) => x.id === tab);
                const next = e.key === 'ArrowRight' ? TABS[(i + 1) % TABS.length] : e.key === 'ArrowLeft' ? TABS[(i + TABS.length - 1) % TABS.length] : undefined;
                if (next) {
                  e.preventDefault();
                  setTab(next.id);
                  document.getElementById(tabId(next.id))?.focus();
                }
              }}
            >
              {t.label}
            </button>
          ))}
        </div>
        <div className="detail-actions">
          {onContext && (
            <button type="button" className="secondary small" onClick={() => onContext(log)}>
              Show surrounding logs
            </button>
          )}
          {link && <CopyButton text={link} label="Copy link to this log" />}
          <CopyButton text={JSON.stringify(log, null, 2)} label="Copy as JSON" />
        </div>
      </div>
      <div id={panelId} role="tabpanel" aria-labelledby={tabId(tab)} className="detail-panel">
        {tab === 'pretty' && (
          <>
            <pre className="log-full-message">{log.message}</pre>
            <dl className="log-fields">
              <dt>Time</dt>
              <dd>
                <time dateTime={log.timestamp}>{formatTime(log.timestamp, zone)}</time>
              </dd>
              <dt>Received</dt>
              <dd>{formatTime(log.receivedAt, zone)}</dd>
              <dt>Id</dt>
              <dd>
                <code>{log.id}</code>
              </dd>
            </dl>
            <table className="field-table" aria-label="Fields">
              <tbody>
                {fields.map(([field, value]) => (
                  <tr key={field}>
                    <th scope="row">
                      {onFilter ? (
                        <button type="button" className="link-button field-name" title={`Show logs that have ${field}`} onClick={() => onFilter(`${field}:*`)}>
                          {field}
                        </button>
                      ) : (
                        field
                      )}
                    </th>
                    <td className="field-value-cell">
                      {isMultiline(value) ? (
                        <pre className="multiline-value" tabIndex={0} aria-label={`${field} (${value.split('\n').length} lines)`}>
                          {value}
                        </pre>
                      ) : onFilter ? (
                        <button type="button" className="link-button field-value" title={`Filter: ${fieldTerm(field, value)}`} onClick={() => onFilter(fieldTerm(field, value))}>
                          {cellText(value)}
                        </button>
                      ) : (
                        <span className="field-value">{cellText(value)}</span>
                      )}
                    </td>
                    <td className="field-actions">
                      {onFilter && (
                        <>
                          <button type="button" className="chip" aria-label={`Filter to ${fieldTerm(field, value)}`} title={`Filter to ${fieldTerm(field, value)}`} onClick={() => onFilter(fieldTerm(field, value))}>
                            +
                          </button>
                          <button type="button" className="chip" aria-label={`Exclude ${fieldTerm(field, value)}`} title={`Exclude ${fieldTerm(field, value)}`} onClick={() => onFilter(fieldTerm(field, value, true))}>
                            −
                          </button>
                        </>
                      )}
                      {onAddColumn && field !== 'level' && (
                        <button type="button" className="chip" aria-label={`Add ${field} as a column`} title={`Add ${field} as a column`} onClick={() => onAddColumn(field)}>
                          ⊞
                        </button>
                      )}
                      <CopyValue text={cellText(value)} field={field} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
        {tab === 'raw' && (
          <pre className="json raw-log" tabIndex={0} aria-label="The log as one line of JSON">
            {JSON.stringify(log)}
          </pre>
        )}
        {tab === 'json' && (
          <pre className="json" tabIndex={0} aria-label="The log as JSON">
            {JSON.stringify(log, null, 2)}
          </pre>
        )}
      </div>
    </div>
  );
}

/** Copies one field's value; its name says which. */
function CopyValue({ text, field }: { text: string; field: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="chip"
      aria-label={copied ? `Copied the value of ${field}` : `Copy the value of ${field}`}
      title={`Copy the value of ${field}`}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
        } catch {
          /* no clipboard permission: nothing to do but say so */
        }
        setCopied(true);
        setTimeout(() => setCopied(false), 1500);
      }}
    >
      {copied ? 'Copied' : 'Copy'}
    </button>
  );
}
