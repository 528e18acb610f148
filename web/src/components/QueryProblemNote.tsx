/** Where a query fails to parse, as the server says it: a 1-based column and a message. */
export interface QueryProblem {
  column: number;
  message: string;
}

/**
 * Under a query field (the explorer's search box, the alert form's query): the query again with the
 * character at the problem's column marked and a caret under it, then the server's message. The echo
 * is for sighted readers; the message, announced as an alert, names the column itself.
 */
export function QueryProblemNote({ id, query, error }: { id: string; query: string; error: QueryProblem }) {
  const chars = Array.from(query);
  const i = Math.max(0, error.column - 1);
  return (
    <div className="query-error" id={id} role="alert">
      {error.column > 0 && (
        <pre className="query-echo" aria-hidden="true">
          {chars.slice(0, i).join('')}
          <mark>{chars[i] ?? ' '}</mark>
          {chars.slice(i + 1).join('')}
          {'\n'}
          {' '.repeat(i)}^
        </pre>
      )}
      <span className="field-error">{error.message}</span>
    </div>
  );
}
