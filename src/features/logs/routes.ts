import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError, validationError } from '../../errors.js';
import { bearerToken, bearerSecurity } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { IdParams } from '../../http/schemas.js';
import type { ProjectsService } from '../projects/service.js';
import { HEAVY_BODY_BYTES, heavyWork, inflations, largeBodyReads, type Admitted } from './ingest/admission.js';
import { decodeBody, isIdentityEncoding, JSON_TYPES, MAX_BODY_BYTES, NDJSON_TYPES, parseBody, type BodyItem } from './ingest/body.js';
import { parseFilter } from './filter.js';
import { SEARCH_WAIT_MS, SEARCHES_PER_USER } from './read/page-stream.js';
import { HEAVY_READ_WAIT_MS, HEAVY_READS_PER_USER } from './read/slots.js';
import type { ReadCaller } from './read/reader.js';
import * as otlp from './ingest/otlp.js';
import { csvHeader, encodeRows, EXPORT_RETRY_AFTER_S, EXPORT_STALL_MS, EXPORTS_PER_NODE, EXPORTS_PER_USER, exportColumns, exportFileName, type ExportFormat } from './read/export.js';
import { presentLog } from './present.js';
import type { Metrics } from '../../metrics.js';
import type { LogsService } from './service.js';
import * as S from './schemas.js';

/** Unread live-tail output a client may have before its tail pauses (and later catches up from the database). */
const TAIL_BUFFER_BYTES = 1024 * 1024;

const HEAVY_READS_NOTE = `A user runs at most ${HEAVY_READS_PER_USER} of stats, facets, fields and context at once; more wait up to ${HEAVY_READ_WAIT_MS / 1000} s and then get 429 RATE_LIMITED with Retry-After. The read stops when its client disconnects. A database too busy to answer within the budget is 503 OVERLOADED with Retry-After.`;

/**
 * A signal that aborts when the client goes before its answer is complete (its connection closed):
 * reads check it between their database reads and stop.
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  whenClosed(reply, () => {
    if (!reply.raw.writableFinished) controller.abort(new AppError('VALIDATION_ERROR', 'The client closed the connection before the answer was ready; the read was stopped.'));
  });
  return controller.signal;
}

/**
 * Who a read is for, taken as its handler begins: its client's signal, and the time the request has
 * already waited (its authentication's lookup, the database, other tenants' work), which the read's
 * budget counts as spent waiting for the database. Time in the user's own line for a slot is not.
 */
function callerOf(reply: FastifyReply): ReadCaller {
  return { signal: clientGone(reply), queuedMs: reply.elapsedTime };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The project an ingest request's API key belongs to, and its owner's plan. */
    projectId: string;
    plan: string;
    /** SHA-256 of an ingest request's decoded body, for Idempotency-Key. */
    bodyHash: string;
    /** An ingest request's claim on the in-flight bytes of its project, from before its body is read until it is answered. */
    admitted?: Admitted;
    /** Gives back the large-body read slot an ingest request holds until its body is read. */
    bodyRead?: () => void;
  }
}

/** The API key of an ingest request: `X-API-Key`, or `Authorization: Bearer`. Never a query parameter. */
function apiKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string' && header.trim() !== '') return header.trim();
  return bearerToken(request);
}

/**
 * What a body is claimed to cost before it is read: its Content-Length, or the most a body may
 * hold (5 MiB) when its length is not given. A compressed body's claim grows to its decoded size
 * once it is inflated (decodeInSlot), before it is parsed.
 */
function claimBeforeReading(request: FastifyRequest): number {
  const length = Number(request.headers['content-length']);
  if (!Number.isSafeInteger(length) || length < 0) return MAX_BODY_BYTES;
  return Math.min(length, MAX_BODY_BYTES);
}

/**
 * Undoes Content-Encoding, a few bodies at a time process-wide when they are compressed (each may
 * inflate to 5 MiB, whatever its claim said), then sets the request's claim to the decoded size,
 * which may refuse it (429/503) before it is parsed.
 */
export async function decodeInSlot(request: FastifyRequest, raw: Buffer): Promise<Buffer> {
  request.bodyRead?.();
  const encoding = request.headers['content-encoding'] as string | undefined;
  let body: Buffer;
  if (isIdentityEncoding(encoding)) body = raw;
  else {
    const release = await inflations.acquire();
    try {
      // The claim grows with the body while it is inflated: past the project's or the server's
      // share (429/503) inflation stops there, not at 5 MiB.
      body = await decodeBody(raw, encoding, (bytes) => {
        if (bytes > (request.admitted?.bytes ?? bytes)) request.admitted?.resize(bytes);
      });
    } finally {
      release();
    }
  }
  request.admitted?.resize(body.length);
  return body;
}

/**
 * An onRequest hook for ingestion: the API key decides the project (and its owner's plan), then
 * the body's bytes are claimed against the project's share of the ingest budget, all before the
 * body is read, so a tenant over its share is refused (429) without the server inflating or
 * parsing anything for it. The claim is given back when the answer is sent. A large body (and a
 * refused one, which is read and dropped so that its client gets the answer) is read in one of a
 * few process-wide read slots: see ReadSlots.
 */
export function requireApiKey(projects: ProjectsService, logs: LogsService, whenMissing: string, keyOf: (request: FastifyRequest) => string | undefined = apiKeyOf) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const check = await projects.verifyApiKey(keyOf(request));
    if (!check.ok) throw new AppError('INVALID_API_KEY', check.reason === 'missing' ? whenMissing : 'The API key is not valid.');
    request.projectId = check.projectId;
    request.plan = check.plan;
    const claim = claimBeforeReading(request);
    const large = claim >= HEAVY_BODY_BYTES && !request.raw.complete;
    // Refused here, the unread body is drained (paced, process-wide) by the error handler, as
    // for every other refusal.
    const admitted = logs.queue.admit(check.projectId, claim);
    request.admitted = admitted;
    whenClosed(reply, admitted.release);
    if (large) {
      const release = await largeBodyReads.acquire();
      request.bodyRead = release;
      whenClosed(reply, release);
    }
  };
}

/** Runs `fn` once the response is closed ('close' follows the answer, or a connection that went away first), even if that already happened. */
export function whenClosed(reply: FastifyReply, fn: () => void): void {
  reply.raw.once('close', fn);
  if (reply.raw.closed) fn();
}

/** The Idempotency-Key header: up to 255 visible ASCII characters. */
function idempotencyKey(request: FastifyRequest): string | undefined {
  const value = request.headers['idempotency-key'];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(value)) throw validationError('headers:/idempotency-key', 'must be 1 to 255 visible ASCII characters');
  return value;
}

/** An ingest endpoint, as /metrics labels it. */
export type IngestEndpoint = 'logs' | 'otlp' | 'elasticsearch' | 'loki' | 'hec';

/** Counts an ingest endpoint's answers and times its successes, for /metrics. */
export function countAnswers(app: FastifyInstance, metrics: Metrics, endpoint: IngestEndpoint): void {
  app.addHook('onResponse', async (_request, reply) => {
    metrics.ingestRequests.inc({ endpoint, status: String(reply.statusCode) });
    if (reply.statusCode < 300) metrics.ingestDuration.observe(reply.elapsedTime / 1000);
  });
}

/** Counts what an ingest stored and refused; a batch refused whole is a VALIDATION_ERROR listing its logs. */
export async function counted<T extends { result: { accepted: number; rejected: unknown[] }; replayed?: boolean }>(metrics: Metrics, endpoint: IngestEndpoint, items: number, work: Promise<T>): Promise<T> {
  try {
    const done = await work;
    // A replayed Idempotency-Key answer stored nothing new.
    if (done.replayed) return done;
    metrics.logsAccepted.inc({ endpoint }, done.result.accepted);
    if (done.result.rejected.length) metrics.logsRejected.inc({ endpoint }, done.result.rejected.length);
    return done;
  } catch (err) {
    if (err instanceof AppError && err.code === 'VALIDATION_ERROR' && Array.isArray(err.details)) metrics.logsRejected.inc({ endpoint }, items);
    throw err;
  }
}

/** POST /v1/logs: its own body parsers (JSON, NDJSON, gzip/deflate) and API-key auth before the body is read. */
export function ingestRoutes(deps: { logs: LogsService; projects: ProjectsService; metrics: Metrics }) {
  const { logs, projects, metrics } = deps;
  return async function (app: FastifyInstance) {
    countAnswers(app, metrics, 'logs');
    app.removeContentTypeParser('application/json');
    const parser = (ndjson: boolean) => async (request: FastifyRequest, raw: Buffer): Promise<BodyItem[]> => {
      // The claim becomes what the body really holds (it may refuse now, before the parse).
      const body = await decodeInSlot(request, raw);
      if (request.headers['idempotency-key'] !== undefined) request.bodyHash = createHash('sha256').update(body).digest('hex');
      // A large body is parsed in a turn of its own, so many at once cannot stall the server.
      return body.length < HEAVY_BODY_BYTES ? parseBody(body, ndjson) : heavyWork.run(() => parseBody(body, ndjson));
    };
    app.addContentTypeParser(JSON_TYPES, { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, parser(false));
    app.addContentTypeParser(NDJSON_TYPES, { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, parser(true));

    app.withTypeProvider<TypeBoxTypeProvider>().post('/logs', {
      // The parsers above check the body; the schema is there to document it.
      validatorCompiler: () => () => true,
      // Log text is kept, NUL and lone surrogates stored as U+FFFD (ingest/normalise.ts), not refused.
      config: { rawText: true },
      schema: {
        operationId: 'ingestLogs', tags: ['Logs'], summary: 'Send logs',
        description: 'Authenticated by the project API key in `X-API-Key` or `Authorization: Bearer`. Answers 202 once the accepted logs are durably stored; logs that fail their checks are listed in `rejected` and cost the others nothing. Every log bad → 400. Over the plan\'s ingest rate → 429 RATE_LIMITED; overload → 503 OVERLOADED; both with Retry-After. With `Idempotency-Key` (up to 255 characters) a retry of the same body within 24 hours gets the first answer (header `Idempotent-Replayed: true`) and stores nothing again; the same key with another body → 422; while the first is still in flight → 409.',
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ maxLength: 255 })) }),
        security: [{ apiKey: [] }, { bearerAuth: [] }],
        body: S.IngestBody,
        response: { 202: S.IngestResponse, ...errorResponses(400, 401, 409, 413, 415, 422, 429, 503) },
      },
      onRequest: requireApiKey(projects, logs, 'Send the project API key in the X-API-Key header (or as Authorization: Bearer <key>).'),
    }, async (request, reply) => {
      const key = idempotencyKey(request);
      const items = request.body as unknown as BodyItem[];
      const { result, replayed } = await counted(metrics, 'logs', items.length, logs.ingest(request.projectId, request.plan, items, key === undefined ? undefined : { key, bodyHash: request.bodyHash }, request.admitted));
      if (replayed) reply.header('idempotent-replayed', 'true');
      return reply.status(202).send(result);
    });
  };
}

/** Search, stats and live tail: the project owner's access token. */
export function logQueryRoutes(deps: {
  logs: LogsService;
  projects: ProjectsService;
  requireUser: preHandlerAsyncHookHandler;
  tailHeartbeatMs: number;
  now?: () => number;
  /** Which of these logins (access-token `sid`s) are still live: an export ends with its login. */
  liveSessions?: (sessionIds: string[]) => Promise<Set<string>>;
}) {
  const { logs, projects, requireUser, tailHeartbeatMs } = deps;
  const now = deps.now ?? Date.now;
  const exportSlots = logs.exportSlots;
  /**
   * Runs `read` in a slot of the user's heavy-read line, held until the read's work has ended (not
   * merely its client gone: a read whose client left holds its slot until it has stopped).
   */
  const inHeavySlot = async <T>(req: FastifyRequest, reply: FastifyReply, read: (caller: ReadCaller) => Promise<T>): Promise<T> => {
    const caller = callerOf(reply);
    const release = await logs.heavyReads.acquire(req.userId, caller.signal);
    try {
      return await read(caller);
    } finally {
      release();
    }
  };
  /** Exports being written: ended when the server closes, whether or not their clients read. */
  const exporting = new Set<Readable>();
  return async function (app: FastifyInstance) {
    app.addHook('preClose', async () => {
      for (const body of exporting) body.destroy();
    });
    const r = app.withTypeProvider<TypeBoxTypeProvider>();
    r.addHook('preHandler', requireUser);
    const common = { tags: ['Logs'], security: bearerSecurity, params: IdParams };

    r.get('/projects/:id/logs', {
      schema: {
        ...common, operationId: 'searchLogs', summary: 'Search a project\'s logs, newest first',
        description: `Filters combine with AND. \`nextCursor\` continues the walk without repeating or skipping a log while new ones arrive. A \`pattern\` search that runs out of its time budget answers what it found so far and a cursor to continue from. The page is streamed as it is read; a user runs at most ${SEARCHES_PER_USER} searches at once, more wait up to ${SEARCH_WAIT_MS / 1000} s and then get 429 RATE_LIMITED with Retry-After.`,
        querystring: S.SearchQuery,
        response: { 200: S.SearchResponse, ...errorResponses(400, 401, 404, 429, 503) },
      },
    }, async (req, reply) => {
      // One of the user's few search slots, held until the answer is written (or the client goes).
      const caller = callerOf(reply);
      const release = await logs.pageReads.acquire(req.userId, caller.signal);
      whenClosed(reply, release);
      const page = await logs.searchPage(req.userId, req.params.id, parseFilter(req.query), req.query.limit, req.query.cursor, caller);
      // Written a chunk at a time as the client reads it; the stored metadata goes out as it is,
      // without a parse and a re-serialisation.
      return reply.type('application/json; charset=utf-8').send(logs.pageReads.body(page) as never); // a stream: Fastify pipes it as it is
    });

    r.get('/projects/:id/logs/stats', {
      schema: {
        ...common, operationId: 'logStats', summary: 'Log counts per time bucket and level, for charts',
        description: `Default range: the last 24 hours. Buckets start at multiples of the interval since the epoch; empty buckets are included. ${HEAVY_READS_NOTE}`,
        querystring: S.StatsQuery,
        response: { 200: S.StatsResponse, ...errorResponses(400, 401, 404, 429, 503) },
      },
    }, async (req, reply) => inHeavySlot(req, reply, (caller) => logs.stats(req.userId, req.params.id, parseFilter(req.query), req.query.interval, req.query.groupBy, caller)));

    r.get('/projects/:id/logs/facets', {
      schema: {
        ...common, operationId: 'logFacets', summary: 'Counts of fields\' values over the whole range and query',
        description: 'For each field, the `limit` most frequent values (ties by name; the same names and counts stats\' groupBy gives), the logs with another value (`other`) and without the field (`none`), and the statistics of its numbers (JSON numbers only; percentiles from a uniform sample of 10,000 past that many). With `measure`, each named value also gets p50 and p95 of that numeric path among its logs. Default range: the last 24 hours. Counted in the app within QUERY_TIME_BUDGET. ' + HEAVY_READS_NOTE,
        querystring: S.FacetsQuery,
        response: { 200: S.FacetsResponse, ...errorResponses(400, 401, 404, 429, 503) },
      },
    }, async (req, reply) => inHeavySlot(req, reply, (caller) => logs.facets(req.userId, req.params.id, parseFilter(req.query), req.query.fields, req.query.limit, req.query.measure, caller)));

    r.get('/projects/:id/logs/fields', {
      schema: {
        ...common, operationId: 'logFields', summary: 'The fields the selected logs hold, most common first',
        description: 'level, source (when any log has one) and the path of every metadata leaf (`@req.url`, odd keys quoted: `@"user agent"`), with the number of logs holding each; at most 200. Default range: the last 24 hours. Read in the app within QUERY_TIME_BUDGET. ' + HEAVY_READS_NOTE,
        querystring: S.FieldsQuery,
        response: { 200: S.FieldsResponse, ...errorResponses(400, 401, 404, 429, 503) },
      },
    }, async (req, reply) => inHeavySlot(req, reply, (caller) => logs.fields(req.userId, req.params.id, parseFilter(req.query), caller)));

    r.get('/projects/:id/logs/:logId/context', {
      schema: {
        ...common, operationId: 'logContext', summary: 'The logs around one log',
        description: 'The nearest logs by timestamp (then id) on each side of the log: `before` newest first, `after` oldest first. With `query`, only the logs it selects (e.g. `source:api` or `@reqId:abc`); the log itself is always answered. An unknown log id, or one of another project, is 404. The whole read runs within QUERY_TIME_BUDGET. ' + HEAVY_READS_NOTE,
        params: S.ContextParams, querystring: S.ContextQuery,
        response: { 200: S.ContextResponse, ...errorResponses(400, 401, 404, 429, 503) },
      },
    }, async (req, reply) => {
      const filter = parseFilter({ query: req.query.query });
      const found = await inHeavySlot(req, reply, (caller) => logs.context(req.userId, req.params.id, req.params.logId, req.query.before, req.query.after, filter, caller));
      return { before: found.before.map(presentLog), log: presentLog(found.log), after: found.after.map(presentLog) };
    });

    r.get('/projects/:id/logs/export', {
      schema: {
        ...common, operationId: 'exportLogs', summary: 'Every log a search selects, as NDJSON or CSV',
        description: `Streams every matching log, newest first, with no cap on their number, as a download. NDJSON: one Log per line. CSV (RFC 4180): a header row of \`columns\` as asked, then a row per log; a value that is an object or an array is written as JSON, a missing one as an empty field; a cell that begins with =, +, -, @, a tab or a carriage return is written with a leading \`'\` so that a spreadsheet does not run it as a formula (\`raw=true\` writes cells as they are). The stream runs as long as the client reads it and its access lasts: it is cut off (ended without its last chunk) once the user is no longer a member, the project is deleted, the login ends (logout) or the access token expires, and after ${EXPORT_STALL_MS / 1000} s without reading; a client that stops reading holds one chunk of logs in memory. At most ${EXPORTS_PER_USER} exports per user and ${EXPORTS_PER_NODE} per server at once (429 RATE_LIMITED with Retry-After beyond).`,
        querystring: S.ExportQuery,
        response: { 200: Type.String({ description: 'application/x-ndjson or text/csv' }), ...errorResponses(400, 401, 404, 429, 503) },
      },
    }, async (req, reply) => {
      const caller = callerOf(reply);
      const format = req.query.format as ExportFormat;
      const raw = req.query.raw === true;
      const filter = parseFilter(req.query);
      const columns = format === 'csv' ? exportColumns(req.query.columns) : [];
      const { row: project } = await projects.access(req.userId, req.params.id);
      const release = exportSlots.take(req.userId);
      if (release === 'user') throw new AppError('RATE_LIMITED', `You are running ${EXPORTS_PER_USER} exports already; wait for one to finish.`, { retryAfter: EXPORT_RETRY_AFTER_S });
      if (release === 'node') throw new AppError('RATE_LIMITED', `This server is running ${EXPORTS_PER_NODE} exports, its share for exports; retry after the delay in Retry-After.`, { retryAfter: EXPORT_RETRY_AFTER_S });
      whenClosed(reply, release);
      // The export's authority, as requireUser verified it: it ends with the membership, the
      // project, the login (logout, revoked) or the access token, whichever ends first.
      const { userId, sessionId, tokenExpiresAt } = req;
      const projectId = req.params.id;
      const stillAllowed = async (): Promise<void> => {
        if (now() >= tokenExpiresAt) throw new AppError('TOKEN_EXPIRED', 'The access token that started this export has expired.');
        const [, live] = await Promise.all([projects.assertRole(userId, projectId), deps.liveSessions ? deps.liveSessions([sessionId]) : Promise.resolve(new Set([sessionId]))]);
        if (!live.has(sessionId)) throw new AppError('UNAUTHORIZED', 'The login that started this export has ended.');
      };
      const rows = await logs.exportRows(userId, projectId, filter, { caller, stillAllowed });
      let lastRead = Date.now();
      async function* text(): AsyncGenerator<string> {
        if (format === 'csv') yield csvHeader(columns);
        for await (const chunk of rows) {
          lastRead = Date.now();
          yield encodeRows(chunk, format, columns, raw);
        }
      }
      // One chunk held at a time: the stream asks for the next only when the socket took the last.
      const body = Readable.from(text(), { objectMode: false, highWaterMark: 1 });
      const stall = setInterval(() => {
        if (Date.now() - lastRead > EXPORT_STALL_MS) body.destroy();
      }, Math.min(EXPORT_STALL_MS, 10_000));
      stall.unref();
      exporting.add(body);
      whenClosed(reply, () => {
        clearInterval(stall);
        exporting.delete(body);
      });
      // An export cut short (its authority ended, its client went) ends without its last chunk, so
      // that the client sees it is incomplete.
      body.on('error', (err) => req.log.info({ code: (err as { code?: string }).code, err: err instanceof AppError ? undefined : err }, 'export ended early'));
      const name = exportFileName(project.name, filter.from, filter.to ?? now(), format);
      return reply
        .header('content-disposition', `attachment; filename="${name}"`)
        .header('cache-control', 'no-store')
        .type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
        .send(body as never);
    });

    r.get('/projects/:id/logs/tail', {
      schema: {
        ...common, operationId: 'tailLogs', summary: 'Live tail (Server-Sent Events)',
        description: 'Streams new logs that match the filters as `event: log` with `id:` set. Reconnect with `Last-Event-ID` to resume without duplicates or gaps. A comment line is sent as a heartbeat. Read it with fetch streaming: the access token goes in the Authorization header, never in the URL.',
        querystring: S.TailQuery,
        headers: Type.Object({ 'last-event-id': Type.Optional(Type.String({ maxLength: 30 })) }),
        response: { 200: Type.String({ description: 'text/event-stream' }), ...errorResponses(400, 401, 404, 429) },
      },
    }, async (req, reply) => {
      const filter = parseFilter(req.query);
      const lastEventId = req.headers['last-event-id'];
      let afterSeq: number | undefined;
      if (typeof lastEventId === 'string' && lastEventId.trim() !== '') {
        if (!/^\d{1,15}$/.test(lastEventId.trim())) throw validationError('headers:/last-event-id', 'must be the id of an event this stream sent');
        afterSeq = Number(lastEventId.trim());
      }
      const res = reply.raw;
      let heartbeat: NodeJS.Timeout | undefined;
      // The access token's login (sid) and expiry, as requireUser verified them, bound the tail's life.
      const authority = { userId: req.userId, sessionId: req.sessionId, expiresAt: req.tokenExpiresAt, ip: req.ip };
      const tail = await logs.openTail(authority, req.params.id, filter, afterSeq, {
        send(out, resume) {
          const more = res.write(out.frames);
          // Past this much unread, the tail pauses and later catches up from memory or the database.
          if (more || res.writableLength < TAIL_BUFFER_BYTES) return true;
          res.once('drain', resume);
          return false;
        },
        close(reason) {
          if (heartbeat) clearInterval(heartbeat);
          // Ended by the server: say why, so a client knows to reconnect with a fresh token or stop.
          if (reason !== undefined && !res.destroyed && res.headersSent) res.write(`event: end\ndata: ${JSON.stringify({ reason })}\n\n`);
          res.end();
        },
      });
      reply.hijack();
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        'x-request-id': req.id,
      });
      res.write('retry: 2000\n: connected\n\n');
      heartbeat = setInterval(() => res.write(': keep-alive\n\n'), tailHeartbeatMs);
      req.raw.on('close', () => tail.close());
      // A client that left while the tail was opening: its 'close' has already been emitted.
      if (req.raw.destroyed || res.destroyed) tail.close();
    });
  };
}

/**
 * POST /v1/otlp/v1/logs: the OTLP/HTTP logs receiver, so an OpenTelemetry SDK or Collector with
 * OTEL_EXPORTER_OTLP_ENDPOINT=<base>/v1/otlp and OTEL_EXPORTER_OTLP_HEADERS=x-api-key=<key>
 * delivers here. Records go through the same ingest path as POST /v1/logs (same limits, rate,
 * durability); refused records are reported as an OTLP partial success.
 */
export function otlpRoutes(deps: { logs: LogsService; projects: ProjectsService; metrics: Metrics }) {
  const { logs, projects, metrics } = deps;
  return async function (app: FastifyInstance) {
    countAnswers(app, metrics, 'otlp');
    app.removeContentTypeParser('application/json');
    const parser = (protobufBody: boolean) => async (request: FastifyRequest, raw: Buffer): Promise<BodyItem[]> => {
      const body = await decodeInSlot(request, raw);
      if (body.length > MAX_BODY_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', 'The body is larger than 5 MiB once decompressed.');
      const parse = () => otlp.toLogItems(protobufBody ? otlp.decodeProtobuf(body) : otlp.parseJsonRequest(body));
      return body.length < HEAVY_BODY_BYTES ? parse() : heavyWork.run(parse);
    };
    app.addContentTypeParser(otlp.PROTOBUF_TYPES, { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, parser(true));
    app.addContentTypeParser(JSON_TYPES, { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, parser(false));

    app.post('/otlp/v1/logs', {
      validatorCompiler: () => () => true,
      config: { rawText: true },
      schema: {
        operationId: 'otlpExportLogs', tags: ['Logs'], summary: 'OpenTelemetry logs (OTLP/HTTP)',
        description: 'An OTLP ExportLogsServiceRequest in protobuf (`application/x-protobuf`) or JSON (`application/json`), optionally gzip-compressed, with the project API key in `X-API-Key` (or `Authorization: Bearer`). Mapping: severityNumber (or severityText) → level; body → message; resource attribute `service.name` → source; timeUnixNano (else observedTimeUnixNano) → timestamp; attributes → metadata, with `resource`, `scope`, `traceId`, `spanId` beside them. Answers 200 with an ExportLogsServiceResponse in the request\'s encoding once the accepted records are stored; refused records are counted in `partialSuccess`. 429 and 503 carry Retry-After and are retryable, as the OTLP specification says; 400, 401 and 413 are not. Error bodies use Loglane\'s JSON error shape.',
        security: [{ apiKey: [] }, { bearerAuth: [] }],
        body: Type.Object({ resourceLogs: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))) }, { description: 'ExportLogsServiceRequest (opentelemetry/proto/collector/logs/v1)' }),
        response: {
          200: Type.Object({ partialSuccess: Type.Optional(Type.Object({ rejectedLogRecords: Type.String(), errorMessage: Type.String() })) }, { description: 'ExportLogsServiceResponse; protobuf when the request was protobuf' }),
          ...errorResponses(400, 401, 413, 415, 429, 503),
        },
      },
      onRequest: requireApiKey(projects, logs, 'Send the project API key in the x-api-key header (OTEL_EXPORTER_OTLP_HEADERS=x-api-key=<key>).'),
    }, async (request, reply) => {
      const items = request.body as BodyItem[];
      const protobufRequest = otlp.PROTOBUF_TYPES.includes(String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase());
      let rejected = 0;
      let errorMessage = '';
      if (items.length > 0) {
        try {
          const { result } = await counted(metrics, 'otlp', items.length, logs.ingest(request.projectId, request.plan, items, undefined, request.admitted));
          rejected = result.rejected.length;
          errorMessage = summarise(result.rejected);
        } catch (err) {
          // Every record refused: still a well-formed export, answered as a partial success.
          if (!(err instanceof AppError) || err.code !== 'VALIDATION_ERROR' || !Array.isArray(err.details)) throw err;
          rejected = items.length;
          errorMessage = summarise((err.details as Array<{ path: string; message: string }>).map((d) => ({ index: Number(d.path.slice(1)), message: d.message })));
        }
      }
      const body = otlp.encodeResponse(protobufRequest, rejected, errorMessage);
      if (Buffer.isBuffer(body)) return reply.status(200).type('application/x-protobuf').send(body);
      return reply.status(200).type('application/json').send(body);
    });
  };
}

/** The first few refusals, as one sentence for OTLP's error_message. */
function summarise(rejected: Array<{ index?: number; message: string }>): string {
  const shown = rejected.slice(0, 5).map((r) => (r.index === undefined ? r.message : `record ${r.index}: ${r.message}`));
  return shown.join('; ') + (rejected.length > 5 ? `; and ${rejected.length - 5} more` : '');
}
