/**
 * The Elasticsearch bulk API under /es (docs/integrations.md, "Elasticsearch bulk"), so that
 * Filebeat, Logstash, Fluent Bit's `es` output, Vector and the Elasticsearch clients deliver to
 * Loglane with only their URL and key changed. The documents go through the same ingest path as
 * POST /v1/logs (limits, plan rate, the queue's bounds, the durable commit before the answer); the
 * answers, errors included, are Elasticsearch's, with `X-Elastic-Product: Elasticsearch` on each
 * (the official client refuses a server without it). The probes shippers make before they send
 * (cluster info, license, templates, policies, pipelines, indices) answer as a cluster that keeps
 * no templates would.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { errorHandler, type Translated } from '../../http/errors.js';
import type { Metrics } from '../../metrics.js';
import type { ProjectsService } from '../projects/service.js';
import { HEAVY_BODY_BYTES, heavyWork } from './ingest/admission.js';
import { MAX_BODY_BYTES, type BodyItem } from './ingest/body.js';
import { bulkAnswer, clusterInfo, errorType, readDocuments, splitBulk, type BulkItem, type ItemOutcome } from './ingest/elasticsearch.js';
import { shipperKeyOf } from './ingest/keys.js';
import { ItemCharge, type IngestRateLimiter } from './ingest/rate-limit.js';
import { logId } from './present.js';
import { countAnswers, counted, decodeInSlot, requireApiKey } from './routes.js';
import type { LogsService } from './service.js';

/** Elasticsearch's error body: `{"error": {"type", "reason", "root_cause"}, "status"}`. */
function sendEsError(reply: FastifyReply, _request: FastifyRequest, t: Translated) {
  if (t.retryAfter !== undefined) reply.header('retry-after', String(Math.max(1, Math.ceil(t.retryAfter))));
  if (t.status === 401) reply.header('www-authenticate', 'ApiKey, Basic realm="loglane", Bearer');
  const error = { type: errorType(t.code), reason: t.message };
  return reply.status(t.status).type('application/json; charset=utf-8').send({ error: { root_cause: [error], ...error }, status: t.status });
}

const HIDDEN = { schema: { hide: true } };
/** The bulk body is bytes the handler reads; its text is cleaned log by log (ingest/normalise.ts), not refused whole (http/text.ts). */
const BULK = { schema: { hide: true }, config: { rawText: true } };

export function elasticsearchRoutes(deps: { logs: LogsService; projects: ProjectsService; metrics: Metrics; ingestRate: Pick<IngestRateLimiter, 'take' | 'give' | 'check' | 'spend'>; isRetryable: (err: unknown) => boolean }) {
  const { logs, projects, metrics } = deps;
  return async function (app: FastifyInstance) {
    app.addHook('onSend', async (_request, reply, payload) => {
      reply.header('x-elastic-product', 'Elasticsearch');
      return payload;
    });
    app.setErrorHandler(errorHandler(deps.isRetryable, sendEsError));
    app.setNotFoundHandler((request, reply) => sendEsError(reply, request, { status: 404, code: 'NOT_FOUND', message: `no handler found for uri [${request.url.split('?')[0]}] and method [${request.method}]` }));
    // Every content type the clients send (x-ndjson, json, vnd.elasticsearch+x-ndjson, none at all)
    // arrives as bytes; the bulk handler decodes and reads them, the probes ignore theirs.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, async (_request: FastifyRequest, raw: Buffer) => raw);
    app.addHook('onRequest', requireApiKey(projects, logs, 'Send the project API key as the client\'s API key (Authorization: ApiKey <key>), as the password of basic auth, or in X-API-Key.', shipperKeyOf));

    // The probes. GET routes answer HEAD too.
    app.get('/', HIDDEN, async () => clusterInfo());
    app.get('/_license', HIDDEN, async () => ({ license: { status: 'active', uid: 'loglane', type: 'basic', issue_date_in_millis: 0, max_nodes: 1000, issued_to: 'loglane', issuer: 'loglane', start_date_in_millis: -1 } }));
    app.get('/_xpack', HIDDEN, async () => ({ build: { hash: 'loglane', date: clusterInfo().version.build_date }, license: { uid: 'loglane', type: 'basic', mode: 'basic', status: 'active' }, features: {} }));
    for (const kind of ['_index_template', '_ilm/policy', '_ingest/pipeline', '_data_stream', '_template']) {
      app.get(`/${kind}/:name`, HIDDEN, async () => ({}));
      app.put(`/${kind}/:name`, HIDDEN, async () => ({ acknowledged: true }));
    }
    app.get('/:index', HIDDEN, async (request) => ({ [(request.params as { index: string }).index]: { aliases: {}, mappings: {}, settings: {} } }));
    app.put('/:index', HIDDEN, async (request) => ({ acknowledged: true, shards_acknowledged: true, index: (request.params as { index: string }).index }));
    const refreshed = async () => ({ _shards: { total: 1, successful: 1, failed: 0 } });
    app.get('/:index/_refresh', HIDDEN, refreshed);
    app.post('/:index/_refresh', HIDDEN, refreshed);
    app.post('/_refresh', HIDDEN, refreshed);

    await app.register(async (bulk) => {
      countAnswers(bulk, metrics, 'elasticsearch');
      const handler = async (request: FastifyRequest, reply: FastifyReply) => {
        const started = performance.now();
        const body = await decodeInSlot(request, Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0));
        if (body.length > MAX_BODY_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', 'The body is larger than 5 MiB once decompressed.');
        const text = body.toString('utf8');
        const pathIndex = (request.params as { index?: string }).index;
        const heavy = body.length >= HEAVY_BODY_BYTES;
        // A large body is read in turns of its own, so many at once cannot stall the server.
        const items = heavy ? await heavyWork.run(() => splitBulk(text, pathIndex)) : splitBulk(text, pathIndex);
        // Every action is a token of the plan's rate, before any document is read or stored: the
        // actions that are no documents take theirs now, the documents in the ingest path, and the
        // bucket must hold them all.
        const charge = new ItemCharge(deps.ingestRate, request.projectId, request.plan);
        const documents = items.filter((i) => i.document !== undefined).length;
        let outcomes: Map<BulkItem, ItemOutcome>;
        try {
          charge.take(items.length - documents, documents);
          if (heavy) await heavyWork.run(() => readDocuments(items));
          else readDocuments(items);
          outcomes = await store(request, reply, items.filter((i) => i.log !== undefined));
          // Documents read and refused cost their tokens too, unless the whole batch was refused
          // for the rate or the server's load (429 each: nothing was done for them).
          const values = [...outcomes.values()];
          if (!values.some((o) => 'status' in o && o.status === 429)) charge.settle(items.length, values.filter((o) => 'id' in o).length);
        } catch (err) {
          // Over the rate: a body of documents gets a 429 per item, which the clients retry; one of
          // actions alone (nothing a client could store by retrying) a 429 for the request, whose
          // answer is a few bytes whatever the body held.
          if (!(err instanceof AppError) || err.code !== 'RATE_LIMITED' || documents === 0) throw err;
          if (err.retryAfter !== undefined) reply.header('retry-after', String(Math.max(1, Math.ceil(err.retryAfter))));
          outcomes = new Map(items.map((item) => [item, { status: 429, type: 'es_rejected_execution_exception', reason: err.message }]));
        }
        const answer = bulkAnswer(items, outcomes, Math.round(performance.now() - started));
        // The answer is held until the client reads it: counted in the request's in-flight claim.
        request.admitted?.hold(Buffer.byteLength(answer));
        return reply.type('application/json; charset=utf-8').send(answer);
      };
      for (const url of ['/_bulk', '/:index/_bulk']) {
        bulk.post(url, BULK, handler);
        bulk.put(url, BULK, handler);
      }
    });

    /**
     * Stores the documents and says what became of each: its log's id, or its item's failure. A
     * refusal of the whole batch by the plan's rate or the server's load fails every item with 429,
     * which the clients retry (the bulk helper and Filebeat retry items with 429, not those with 400).
     */
    async function store(request: FastifyRequest, reply: FastifyReply, toStore: BulkItem[]): Promise<Map<BulkItem, ItemOutcome>> {
      const outcomes = new Map<BulkItem, ItemOutcome>();
      if (toStore.length === 0) return outcomes;
      const bodyItems: BodyItem[] = toStore.map((item) => ({ value: item.log }));
      try {
        const { result, firstSeq } = await counted(metrics, 'elasticsearch', toStore.length, logs.ingest(request.projectId, request.plan, bodyItems, undefined, request.admitted));
        const refused = new Map(result.rejected.map((r) => [r.index, r.message]));
        let seq = firstSeq ?? 0;
        toStore.forEach((item, i) => {
          const why = refused.get(i);
          outcomes.set(item, why === undefined ? { id: logId(seq++) } : { status: 400, type: 'mapper_parsing_exception', reason: why });
        });
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        if (err.code === 'VALIDATION_ERROR' && Array.isArray(err.details)) {
          // Every document refused (the details name the first hundred).
          const reasons = new Map((err.details as { path: string; message: string }[]).map((d) => [Number(d.path.slice(1)), d.message]));
          toStore.forEach((item, i) => outcomes.set(item, { status: 400, type: 'mapper_parsing_exception', reason: reasons.get(i) ?? 'the document cannot be stored as a log' }));
        } else if (err.code === 'RATE_LIMITED' || err.code === 'OVERLOADED') {
          if (err.retryAfter !== undefined) reply.header('retry-after', String(Math.max(1, Math.ceil(err.retryAfter))));
          for (const item of toStore) outcomes.set(item, { status: 429, type: 'es_rejected_execution_exception', reason: err.message });
        } else throw err;
      }
      return outcomes;
    }
  };
}
