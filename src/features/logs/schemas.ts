import { Type } from 'typebox';
import { Timestamp } from '../../http/schemas.js';
import { LEVELS } from './levels.js';

const LevelName = Type.String({ enum: [...LEVELS] });

export const LogInput = Type.Object(
  {
    message: Type.String({ description: 'Required, at most 64 KiB. `msg` is accepted instead.' }),
    timestamp: Type.Optional(Type.Union([Type.String({ description: 'ISO 8601' }), Type.Integer({ description: 'epoch milliseconds' })], { description: 'Default: the time of receipt. `time` is accepted instead.' })),
    level: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: 'trace, debug, info (default), warn, error, fatal; any case; aliases such as warning, err, critical, notice; pino numbers 10–60' })),
    source: Type.Optional(Type.String({ maxLength: 200 })),
    metadata: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'At most 64 KiB serialised. Other top-level fields are added to it.' })),
  },
  { additionalProperties: true },
);

export const IngestBody = Type.Union([LogInput, Type.Array(LogInput), Type.Object({ logs: Type.Array(LogInput) })], {
  description: 'One log, an array of logs, or {"logs": [...]}; or NDJSON (one log per line) with Content-Type: application/x-ndjson. Content-Encoding: gzip or deflate. At most 5 MiB decompressed and 10,000 logs.',
});

export const IngestResponse = Type.Object(
  {
    accepted: Type.Integer({ description: 'Logs stored (durably committed before this answer)' }),
    rejected: Type.Array(Type.Object({ index: Type.Integer(), message: Type.String() }), { description: 'The logs that were refused, by position in the batch' }),
  },
  { additionalProperties: false },
);

export const Log = Type.Object(
  {
    id: Type.String({ description: 'log_ and the log\'s sequence number in its project (commit order)' }),
    timestamp: Timestamp,
    receivedAt: Timestamp,
    level: LevelName,
    message: Type.String(),
    source: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Object({}, { additionalProperties: true }),
  },
  { additionalProperties: false },
);

const filterFields = {
  from: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601 or epoch ms; inclusive' })),
  to: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601 or epoch ms; inclusive' })),
  level: Type.Optional(Type.String({ maxLength: 100, description: 'One level or a comma-separated list' })),
  source: Type.Optional(Type.String({ maxLength: 200, pattern: '^[^\\u0000]*$' })),
  q: Type.Optional(Type.String({ maxLength: 500, pattern: '^[^\\u0000]*$', description: 'Text the message contains, ignoring case as the query language does (Unicode case folding); the same as the query message:"…" (a phrase on the message). *, ?, % and _ are plain characters.' })),
  query: Type.Optional(
    Type.String({
      maxLength: 2000,
      description:
        'A search query (docs/search.md), ANDed with the other filters: words and phrases in the message and metadata values (`timeout`, `"connection reset"`, `req-1007`), fields (`level:>=warn`, `source:api-*`), metadata paths (`@res.statusCode:>=500`, `@http.response.status_code:[500 TO 599]`, `@user.id:*`), value lists (`@method:(GET OR HEAD)`), regexes (`/time(out|d out)/`, `@path:/^\\/v1\\//`), and `AND`, `OR`, `NOT`, `-`, parentheses (NOT binds tightest, then AND, then OR). A query that does not parse is a 400 whose message gives the column.',
      examples: ['@res.statusCode:>=500 -@req.url:"/healthz"', 'level:error @path:"/v1/orders"', 'req-1007 OR @traceId:4bf92f3577b34da6a3ce929d0e0e4736'],
    }),
  ),
};

export const SearchQuery = Type.Object({
  ...filterFields,
  pattern: Type.Optional(Type.String({ maxLength: 1000, description: 'RE2 regular expression matched anywhere in the message' })),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
});

export const SearchResponse = Type.Object({ data: Type.Array(Log), nextCursor: Type.Union([Type.String(), Type.Null()]) }, { additionalProperties: false });

export const StatsQuery = Type.Object({
  ...filterFields,
  pattern: Type.Optional(Type.String({ maxLength: 1000, description: 'RE2 regular expression matched anywhere in the message; counted in the app within QUERY_TIME_BUDGET, so keep the range narrow' })),
  interval: Type.Optional(Type.String({ maxLength: 10, description: 'Bucket size such as 1m, 5m, 1h, 1d; chosen from the range when omitted' })),
  groupBy: Type.Optional(
    Type.String({
      maxLength: 300,
      description: 'Split each bucket by `level`, `source` or a metadata path (`path` or `@path`): `groups` holds the 10 most frequent values of the whole range, the rest under "(other)", logs without the field under "(none)". Counted in the app within QUERY_TIME_BUDGET.',
    }),
  ),
});

export const StatsResponse = Type.Object(
  {
    interval: Type.String(),
    buckets: Type.Array(
      Type.Object(
        {
          start: Timestamp,
          total: Type.Integer(),
          levels: Type.Record(LevelName, Type.Integer()),
          groups: Type.Optional(Type.Record(Type.String(), Type.Integer(), { description: 'With groupBy: counts per value (only values with a count above zero)' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const TailQuery = Type.Object({ ...filterFields, pattern: Type.Optional(Type.String({ maxLength: 1000 })) });

export const FacetsQuery = Type.Object({
  ...filterFields,
  pattern: Type.Optional(Type.String({ maxLength: 1000, description: 'RE2 regular expression matched anywhere in the message' })),
  fields: Type.String({ maxLength: 4000, description: 'A comma list of up to 20 fields to count: level, source, metadata paths (@res.statusCode)' }),
  limit: Type.Integer({ minimum: 1, maximum: 50, default: 10, description: 'Values named per field; the rest are summed in `other`' }),
  measure: Type.Optional(Type.String({ maxLength: 300, description: 'A numeric metadata path: each named value also gets p50 and p95 of it among its logs' })),
});

const NumericSummary = Type.Object(
  {
    count: Type.Integer({ description: 'Logs\' numbers seen (JSON numbers only)' }),
    min: Type.Number(),
    max: Type.Number(),
    p50: Type.Number(),
    p95: Type.Number(),
    sampled: Type.Boolean({ description: 'True when the percentiles come from a uniform sample of 10,000 of the numbers' }),
  },
  { additionalProperties: false },
);

export const FacetsResponse = Type.Object(
  {
    total: Type.Integer({ description: 'Logs selected in the range' }),
    facets: Type.Array(
      Type.Object(
        {
          field: Type.String(),
          values: Type.Array(
            Type.Object(
              { value: Type.String(), count: Type.Integer(), p50: Type.Optional(Type.Union([Type.Number(), Type.Null()])), p95: Type.Optional(Type.Union([Type.Number(), Type.Null()])) },
              { additionalProperties: false },
            ),
          ),
          other: Type.Integer({ description: 'Logs with another value than those named' }),
          none: Type.Integer({ description: 'Logs without the field' }),
          numeric: Type.Union([NumericSummary, Type.Null()]),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const FieldsQuery = Type.Object({ ...filterFields, pattern: Type.Optional(Type.String({ maxLength: 1000 })) });

export const FieldsResponse = Type.Object(
  { total: Type.Integer(), fields: Type.Array(Type.Object({ field: Type.String(), count: Type.Integer({ description: 'Logs that hold it' }) }, { additionalProperties: false })) },
  { additionalProperties: false },
);

export const ContextParams = Type.Object({ id: Type.String({ maxLength: 100 }), logId: Type.String({ maxLength: 100 }) });

export const ContextQuery = Type.Object({
  before: Type.Integer({ minimum: 0, maximum: 200, default: 20 }),
  after: Type.Integer({ minimum: 0, maximum: 200, default: 20 }),
  query: filterFields.query,
});

export const ContextResponse = Type.Object({ before: Type.Array(Log, { description: 'Newest first' }), log: Log, after: Type.Array(Log, { description: 'Oldest first' }) }, { additionalProperties: false });

export const ExportQuery = Type.Object({
  ...filterFields,
  pattern: Type.Optional(Type.String({ maxLength: 1000, description: 'RE2 regular expression matched anywhere in the message' })),
  format: Type.String({ enum: ['ndjson', 'csv'], default: 'ndjson' }),
  columns: Type.Optional(Type.String({ maxLength: 5000, description: 'CSV: a comma list of log fields (id, timestamp, receivedAt, level, source, message, metadata) and metadata paths; default timestamp,level,source,message' })),
  raw: Type.Optional(Type.Boolean({ default: false, description: 'CSV: write cells as they are. By default a cell beginning with =, +, -, @, a tab or a carriage return gets a leading \' so that a spreadsheet does not take it for a formula (the header row is always written as asked).' })),
});
