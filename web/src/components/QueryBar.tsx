import { useEffect, useId, useMemo, useRef, useState } from 'react';
import { applySuggestion, completionAt, queryWarnings, suggest, type CompletionContext, type Suggestion } from '../lib/explorer.ts';
import { LEVELS, type Level } from '../lib/query.ts';
import { QueryProblemNote, type QueryProblem } from './QueryProblemNote.tsx';
import { Spinner } from './ui.tsx';

/** A query's syntax error, as the server reports it. */
export type SyntaxError = QueryProblem;

/**
 * The search box. Typing does not run anything: Enter or Run does, and only a query that parses
 * (while typing, the query is checked against the server after a pause, and its error shown with
 * the column marked). Under the box: warnings for queries that parse but rarely mean what was
 * typed, each with its fix one click away. Autocomplete offers field names, AND/OR/NOT and a
 * field's top values; History recalls the last 20 queries run.
 */
export function QueryBar(props: {
  query: string;
  levels: Level[];
  onRun: (query: string) => void;
  onLevels: (levels: Level[]) => void;
  /** The server's error for the query that ran. */
  error?: SyntaxError;
  /** Asks the server whether `query` parses; resolves to its error or undefined. */
  check: (query: string, signal: AbortSignal) => Promise<SyntaxError | undefined>;
  fields: string[];
  loadValues: (field: string) => Promise<Array<{ value: string; count: number }>>;
  history: string[];
  inputRef?: React.RefObject<HTMLInputElement | null>;
}) {
  const [draft, setDraft] = useState(props.query);
  const [draftError, setDraftError] = useState<SyntaxError | undefined>();
  const [checking, setChecking] = useState(false);
  const [help, setHelp] = useState(false);
  const [historyOpen, setHistoryOpen] = useState(false);
  const [ctx, setCtx] = useState<CompletionContext | undefined>();
  const [suggestions, setSuggestions] = useState<Suggestion[]>([]);
  const [active, setActive] = useState(-1);
  const ownRef = useRef<HTMLInputElement>(null);
  const inputRef = props.inputRef ?? ownRef;
  const valueCache = useRef(new Map<string, Array<{ value: string; count: number }>>());
  const id = useId();
  const listId = `${id}-suggestions`;
  const warnings = useMemo(() => queryWarnings(draft), [draft]);

  useEffect(() => setDraft(props.query), [props.query]);
  // The query that ran came back refused: its error stands until the text changes.
  const shownError = draft === props.query ? props.error ?? draftError : draftError;

  // Check the draft after a pause (never runs it).
  useEffect(() => {
    setDraftError(undefined);
    if (draft === props.query || !draft.trim()) return;
    const ctrl = new AbortController();
    const t = setTimeout(() => {
      setChecking(true);
      props.check(draft, ctrl.signal).then(
        (e) => {
          if (!ctrl.signal.aborted) {
            setDraftError(e);
            setChecking(false);
          }
        },
        () => !ctrl.signal.aborted && setChecking(false),
      );
    }, 500);
    return () => {
      clearTimeout(t);
      ctrl.abort();
      setChecking(false);
    };
  }, [draft]); // eslint-disable-line react-hooks/exhaustive-deps

  function updateSuggestions(text: string, caret: number, force = false) {
    const c = completionAt(text, caret);
    setCtx(c);
    setActive(-1);
    if (!c || (!force && c.kind === 'field' && c.prefix.length < 1)) return setSuggestions([]);
    if (c.kind === 'value' && c.field && c.field !== 'level') {
      const cached = valueCache.current.get(c.field);
      if (cached) return setSuggestions(suggest(c, { fields: props.fields, values: cached }));
      setSuggestions([]);
      const field = c.field;
      props.loadValues(field).then(
        (values) => {
          valueCache.current.set(field, values);
          const now = completionAt(inputRef.current?.value ?? '', inputRef.current?.selectionStart ?? 0);
          if (now?.kind === 'value' && now.field === field) setSuggestions(suggest(now, { fields: props.fields, values }));
        },
        () => undefined,
      );
      return;
    }
    setSuggestions(suggest(c, { fields: props.fields }));
  }

  function choose(s: Suggestion) {
    if (!ctx) return;
    const next = applySuggestion(draft, ctx, s);
    setDraft(next.text);
    setSuggestions([]);
    requestAnimationFrame(() => {
      const el = inputRef.current;
      if (!el) return;
      el.focus();
      el.setSelectionRange(next.caret, next.caret);
      updateSuggestions(next.text, next.caret);
    });
  }

  function run(text = draft) {
    setSuggestions([]);
    setHistoryOpen(false);
    setDraft(text);
    props.onRun(text);
  }

  function toggleLevel(level: Level) {
    props.onLevels(props.levels.includes(level) ? props.levels.filter((l) => l !== level) : [...props.levels, level]);
  }

  const open = suggestions.length > 0;
  return (
    <form
      className="query-bar card"
      role="search"
      aria-label="Filter logs"
      onSubmit={(e) => {
        e.preventDefault();
        run();
      }}
    >
      <div className="query-row">
        <div className="search-box">
          <label className="inline-label grow" htmlFor={`${id}-input`}>
            <span>Search</span>
          </label>
          <div className="combo">
            <input
              id={`${id}-input`}
              ref={inputRef}
              type="text"
              className="query-input"
              value={draft}
              role="combobox"
              aria-autocomplete="list"
              aria-expanded={open}
              aria-controls={listId}
              aria-activedescendant={open && active >= 0 ? `${listId}-${active}` : undefined}
              placeholder="e.g. timeout @res.statusCode:>=500 -source:worker  (press / to come here)"
              spellCheck={false}
              autoComplete="off"
              aria-invalid={shownError ? true : undefined}
              aria-describedby={[shownError ? `${id}-error` : '', warnings.length ? `${id}-warnings` : ''].filter(Boolean).join(' ') || undefined}
              onChange={(e) => {
                setDraft(e.target.value);
                updateSuggestions(e.target.value, e.target.selectionStart ?? e.target.value.length);
              }}
              onBlur={() => setTimeout(() => setSuggestions([]), 150)}
              onKeyDown={(e) => {
                if (e.key === ' ' && e.ctrlKey) {
                  e.preventDefault();
                  updateSuggestions(draft, e.currentTarget.selectionStart ?? draft.length, true);
                } else if (open && e.key === 'ArrowDown') {
                  e.preventDefault();
                  setActive((a) => (a + 1) % suggestions.length);
                } else if (open && e.key === 'ArrowUp') {
                  e.preventDefault();
                  setActive((a) => (a <= 0 ? suggestions.length - 1 : a - 1));
                } else if (open && (e.key === 'Enter' || e.key === 'Tab') && active >= 0) {
                  e.preventDefault();
                  choose(suggestions[active]!);
                } else if (open && e.key === 'Escape') {
                  e.preventDefault();
                  setSuggestions([]);
                }
              }}
            />
            <ul id={listId} role="listbox" aria-label="Suggestions" className="suggestions" hidden={!open}>
              {suggestions.map((s, i) => (
                <li
                  key={`${s.label}-${i}`}
                  id={`${listId}-${i}`}
                  role="option"
                  aria-selected={i === active}
                  className={i === active ? 'active' : undefined}
                  onMouseDown={(e) => {
                    e.preventDefault();
                    choose(s);
                  }}
                >
                  <span className="suggestion-label">{s.label}</span>
                  {s.detail && <span className="muted small">{s.detail}</span>}
                </li>
              ))}
            </ul>
          </div>
          <button type="submit" className="primary">
            Run
          </button>
          <div className="menu">
            <button type="button" className="secondary" aria-expanded={historyOpen} aria-controls={`${id}-history`} onClick={() => setHistoryOpen((h) => !h)} disabled={props.history.length === 0} title={props.history.length ? 'The last queries you ran' : 'Queries you run are kept here'}>
              History
            </button>
            {historyOpen && (
              <div className="menu-panel" id={`${id}-history`} role="group" aria-label="Recent queries">
                {props.history.map((h) => (
                  <button key={h} type="button" className="menu-item mono" onClick={() => run(h)}>
                    {h}
                  </button>
                ))}
              </div>
            )}
          </div>
          <button type="button" className="secondary" aria-expanded={help} aria-controls="query-help" onClick={() => setHelp((h) => !h)}>
            Syntax
          </button>
        </div>
      </div>
      {checking && <span className="visually-hidden" role="status">Checking the query…</span>}
      {shownError && <QueryProblemNote id={`${id}-error`} query={draft} error={shownError} />}
      {warnings.length > 0 && (
        <ul className="query-warnings" id={`${id}-warnings`} aria-label="Query warnings">
          {warnings.map((w) => (
            <li key={`${w.kind}-${w.replacement}`} className="query-warning">
              <span>⚠ {w.message}</span>
              <button type="button" className="secondary small" onClick={() => run(w.fixed)}>
                Use <code>{w.replacement}</code>
              </button>
            </li>
          ))}
        </ul>
      )}
      {draft !== props.query && !shownError && <p className="muted small draft-note">Press Enter or Run to search for this query.</p>}
      {help && <CheatSheet onClose={() => setHelp(false)} />}
      <fieldset className="level-chips">
        <legend>Levels</legend>
        {LEVELS.map((level) => (
          <button key={level} type="button" className={`chip lvl-chip-${level}`} aria-pressed={props.levels.includes(level)} onClick={() => toggleLevel(level)}>
            {level}
          </button>
        ))}
        {props.levels.length > 0 && (
          <button type="button" className="link-button" onClick={() => props.onLevels([])}>
            All levels
          </button>
        )}
      </fieldset>
    </form>
  );
}

const CHEATS: Array<[string, string]> = [
  ['timeout', 'a word in the message or any field value'],
  ['"connection reset"', 'a phrase (substring, any case)'],
  ['time*  req-10?7', 'wildcards in a word'],
  ['/took \\d+ms/', 'RE2 regular expression on the message'],
  ['level:>=warn  source:api-*', 'the log\u2019s own fields'],
  ['@res.statusCode:503', 'a metadata field (nested or dotted keys)'],
  ['@res.statusCode:>=500  @ms:[100 TO 500]', 'comparisons and ranges (no spaces around the operator)'],
  ['@user.id:*  -@user.id:*', 'the field exists / does not'],
  ['@method:(GET OR POST)', 'any of several values'],
  ['a b OR c  -d  NOT (e OR f)', 'AND is implied; NOT/- before OR; parentheses group'],
  ['@path:"/v1/orders"  \\:', 'quote values with / * ? or spaces; \\ escapes one character'],
  ['/  Ctrl+Space  Esc', 'keys: / goes to the search box, Ctrl+Space suggests, Esc closes a log'],
];

function CheatSheet({ onClose }: { onClose: () => void }) {
  // The whole reference (docs/search.md) comes with the console, loaded on first use.
  const [reference, setReference] = useState<string | null>(null);
  const [showReference, setShowReference] = useState(false);
  useEffect(() => {
    if (!showReference || reference !== null) return;
    void import('../../../docs/search.md?raw').then((m: { default: string }) => setReference(m.default), () => setReference('The reference could not be loaded.'));
  }, [showReference, reference]);
  return (
    <section className="cheat-sheet" id="query-help" aria-label="Search syntax">
      <table>
        <tbody>
          {CHEATS.map(([q, what]) => (
            <tr key={q}>
              <td>
                <code>{q}</code>
              </td>
              <td>{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="small">
        <button type="button" className="link-button" aria-expanded={showReference} onClick={() => setShowReference((v) => !v)}>
          {showReference ? 'Hide the full reference' : 'Full reference (docs/search.md)'}
        </button>
        {' · '}
        <button type="button" className="link-button" onClick={onClose}>
          Close
        </button>
      </p>
      {showReference && (reference === null ? <Spinner label="Loading the reference…" /> : <pre className="search-reference" tabIndex={0} aria-label="Search language reference">{reference}</pre>)}
    </section>
  );
}
