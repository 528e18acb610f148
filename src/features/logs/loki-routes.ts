/**
 * Grafana Loki's push API at /loki/api/v1/push (docs/integrations.md, "Grafana Loki push"), so that
 * Promtail, Grafana Alloy, Fluent Bit's `loki` output, pino-loki and winston-loki deliver to
 * Loglane with only their URL and key changed. The entries go through the same ingest path as
 * POST /v1/logs; the answers are Loki's: 204 with no body once stored, and plain-text errors, a 400
 * naming the entries refused when some were (the others are stored).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { errorHandler, type Translated } from '../../http/errors.js';
import type { Metrics } from '../../metrics.js';
import type { ProjectsService } from '../projects/service.js';
import { HEAVY_BODY_BYTES, heavyWork } from './ingest/admission.js';
import { MAX_BODY_BYTES, type BodyItem } from './ingest/body.js';
import { shipperKeyOf } from './ingest/keys.js';
import { parseJsonPush, readPush, snappyDecodedBytes, unsnappy } from './ingest/loki.js';
import { ItemCharge, type IngestRateLimiter } from './ingest/rate-limit.js';
import { countAnswers, counted, decodeInSlot, requireApiKey } from './routes.js';
import type { LogsService } from './service.js';

/** Loki's errors are plain text. */
function sendText(reply: FastifyReply, _request: FastifyRequest, t: Translated) {
  if (t.retryAfter !== undefined) reply.header('retry-after', String(Math.max(1, Math.ceil(t.retryAfter))));
  return reply.status(t.status).type('text/plain; charset=utf-8').send(`${t.message}\n`);
}

/** The first few refusals and how many in all, as Loki words a partial push. */
function refusals(rejected: { index: number; message: string }[], refused: number, total: number): string {
  const shown = rejected.slice(0, 5).map((r) => `entry ${r.index}: ${r.message}`);
  const stored = refused < total ? ' (the others are stored)' : '';
  return `${refused} of ${total} entries were refused${stored}: ${shown.join('; ')}${refused > 5 ? `; and ${refused - 5} more` : ''}\n`;
}

export function lokiRoutes(deps: { logs: LogsService; projects: ProjectsService; metrics: Metrics; ingestRate: Pick<IngestRateLimiter, 'take' | 'give' | 'check' | 'spend'>; isRetryable: (err: unknown) => boolean }) {
  const { logs, projects, metrics } = deps;
  return async function (app: FastifyInstance) {
    countAnswers(app, metrics, 'loki');
    app.setErrorHandler(errorHandler(deps.isRetryable, sendText));
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, async (_request: FastifyRequest, raw: Buffer) => raw);
    app.addHook('onRequest', requireApiKey(projects, logs, 'Send the project API key as the basic-auth password (any user name), in X-API-Key, or as Authorization: Bearer <key>.', shipperKeyOf));

    // rawText: the body is bytes read here; log text is cleaned log by log (ingest/normalise.ts), not refused whole.
    app.post('/api/v1/push', { schema: { hide: true }, config: { rawText: true } }, async (request, reply) => {
      const type = String(request.headers['content-type'] ?? 'application/json').split(';')[0]!.trim().toLowerCase();
      const protobufBody = type === 'application/x-protobuf' || type === 'application/protobuf';
      if (!protobufBody && type !== 'application/json') throw new AppError('UNSUPPORTED_MEDIA_TYPE', `Content-Type "${type}" is not taken: send application/json, or snappy-compressed application/x-protobuf.`);
      const body = await decodeInSlot(request, Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0));
      if (body.length > MAX_BODY_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', 'The body is larger than 5 MiB once decompressed.');
      let source: Parameters<typeof readPush>[0];
      if (protobufBody) {
        // Snappy states the size it decodes to: that is claimed (429/503 when the project or the
        // server has too much in flight) before a byte is decompressed.
        const decoded = snappyDecodedBytes(body);
        request.admitted?.resize(body.length + decoded);
        source = { protobuf: decoded < HEAVY_BODY_BYTES / 4 ? unsnappy(body) : await heavyWork.run(() => unsnappy(body)) };
      } else {
        // JSON is parsed whole, in a turn of its own when large; its streams are then read in slices.
        source = { json: body.length < HEAVY_BODY_BYTES / 4 ? parseJsonPush(body) : await heavyWork.run(() => parseJsonPush(body)) };
      }
      // Every entry, and every stream with none, is an item: counted against the request's cap
      // and the plan's rate as it is read, a slice at a time with turns between (the items that are
      // no logs take their tokens now, the logs in the ingest path; the bucket must hold them all).
      const charge = new ItemCharge(deps.ingestRate, request.projectId, request.plan);
      let items: BodyItem[];
      let read: number;
      try {
        ({ items, counted: read } = await readPush(source, (others, logs) => charge.take(others, logs)));
      } catch (err) {
        charge.refund();
        throw err;
      }
      if (items.length === 0) return reply.status(204).send();
      try {
        const { result } = await counted(metrics, 'loki', items.length, logs.ingest(request.projectId, request.plan, items, undefined, request.admitted));
        // Entries the checks refused cost their tokens too.
        charge.settle(read, result.accepted);
        if (result.rejected.length > 0) return reply.status(400).type('text/plain; charset=utf-8').send(refusals(result.rejected, result.rejected.length, items.length));
        return reply.status(204).send();
      } catch (err) {
        if (err instanceof AppError && err.code === 'VALIDATION_ERROR' && Array.isArray(err.details)) {
          charge.settle(read, 0);
          const rejected = (err.details as { path: string; message: string }[]).map((d) => ({ index: Number(d.path.slice(1)), message: d.message }));
          // Every entry refused (the details name the first hundred).
          return reply.status(400).type('text/plain; charset=utf-8').send(refusals(rejected, items.length, items.length));
        }
        // Nothing was stored and the client will send the whole push again (429, 503, a failed
        // commit): the tokens its empty streams took go back, or every retry would pay them again.
        charge.refund();
        throw err;
      }
    });
  };
}
