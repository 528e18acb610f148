/**
 * Splunk's HTTP Event Collector at /services/collector (docs/integrations.md, "Splunk HEC"), so
 * that Docker's `splunk` log driver, splunk-logging, Vector's and Fluent Bit's HEC outputs and the
 * OpenTelemetry Collector's `splunk_hec` exporter deliver to Loglane with only their URL and token
 * changed (the token is the project key). Events go through the same ingest path as POST /v1/logs;
 * the answers are HEC's `{"text", "code"}`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { errorHandler, type Translated } from '../../http/errors.js';
import type { Metrics } from '../../metrics.js';
import type { ProjectsService } from '../projects/service.js';
import { HEAVY_BODY_BYTES, heavyWork } from './ingest/admission.js';
import { MAX_BODY_BYTES, type BodyItem } from './ingest/body.js';
import { eventItems, HEC, rawItems, type HecFormatError } from './ingest/hec.js';
import { shipperKeyOf } from './ingest/keys.js';
import { countAnswers, counted, decodeInSlot, requireApiKey } from './routes.js';
import type { LogsService } from './service.js';

/** HEC's error body for a refusal: its code by kind, Loglane's reason beside HEC's text. */
function sendHec(reply: FastifyReply, _request: FastifyRequest, t: Translated) {
  if (t.retryAfter !== undefined) reply.header('retry-after', String(Math.max(1, Math.ceil(t.retryAfter))));
  if (t.code === 'UNAUTHORIZED') return reply.status(401).send(HEC.tokenRequired);
  if (t.code === 'INVALID_API_KEY') return reply.status(403).send(HEC.invalidToken);
  if (t.code === 'RATE_LIMITED' || t.code === 'OVERLOADED') return reply.status(t.status).send({ ...HEC.busy, reason: t.message });
  if (t.status >= 500) return reply.status(t.status).send({ text: 'Internal server error', code: 8 });
  return reply.status(t.status).send({ ...HEC.invalidFormat, reason: t.message });
}

export function hecRoutes(deps: { logs: LogsService; projects: ProjectsService; metrics: Metrics; isRetryable: (err: unknown) => boolean }) {
  const { logs, projects, metrics } = deps;
  const keyCheck = requireApiKey(projects, logs, 'Token is required', shipperKeyOf);
  return async function (app: FastifyInstance) {
    app.setErrorHandler(errorHandler(deps.isRetryable, sendHec));
    app.removeAllContentTypeParsers();
    // Clients send application/x-www-form-urlencoded, application/json or nothing: the body is read as bytes whatever it says.
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, async (_request: FastifyRequest, raw: Buffer) => raw);

    app.get('/health', { schema: { hide: true } }, async () => HEC.healthy);
    app.get('/health/1.0', { schema: { hide: true } }, async () => HEC.healthy);

    await app.register(async (ingest) => {
      countAnswers(ingest, metrics, 'hec');
      ingest.addHook('onRequest', async (request, reply) => {
        // No token at all is HEC's 401 (code 2); a wrong one its 403 (code 4).
        if (shipperKeyOf(request) === undefined) throw new AppError('UNAUTHORIZED', 'Token is required');
        await keyCheck(request, reply);
      });

      /** Stores the items; HEC's answer: success, or the first event that could not be stored. */
      async function store(request: FastifyRequest, reply: FastifyReply, items: BodyItem[], bad: HecFormatError | undefined) {
        let firstRefused = bad?.eventNumber;
        let reason = bad?.message;
        if (items.length > 0) {
          try {
            const { result } = await counted(metrics, 'hec', items.length, logs.ingest(request.projectId, request.plan, items, undefined, request.admitted));
            const refused = result.rejected[0];
            if (refused !== undefined && (firstRefused === undefined || refused.index < firstRefused)) [firstRefused, reason] = [refused.index, refused.message];
          } catch (err) {
            if (!(err instanceof AppError) || err.code !== 'VALIDATION_ERROR' || !Array.isArray(err.details)) throw err;
            const first = (err.details as { path: string; message: string }[])[0];
            [firstRefused, reason] = [Number(first?.path.slice(1) ?? 0), first?.message ?? 'the event cannot be stored'];
          }
        } else if (bad === undefined) {
          return reply.status(400).send(HEC.noData);
        }
        if (firstRefused !== undefined) return reply.status(400).send({ ...HEC.invalidFormat, 'invalid-event-number': firstRefused, reason });
        return reply.status(200).send(HEC.success);
      }

      const body = async (request: FastifyRequest) => {
        const raw = await decodeInSlot(request, Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0));
        if (raw.length > MAX_BODY_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', 'The body is larger than 5 MiB once decompressed.');
        return raw.toString('utf8');
      };

      const events = async (request: FastifyRequest, reply: FastifyReply) => {
        const text = await body(request);
        if (text.trim() === '') return reply.status(400).send(HEC.noData);
        // A large body is read in a turn of its own.
        const { items, bad } = text.length < HEAVY_BODY_BYTES ? eventItems(text) : await heavyWork.run(() => eventItems(text));
        return store(request, reply, items, bad);
      };
      // rawText: the body is bytes read here; log text is cleaned log by log (ingest/normalise.ts), not refused whole.
      const RAW = { schema: { hide: true }, config: { rawText: true } };
      for (const url of ['/', '/event', '/event/1.0']) ingest.post(url, RAW, events);

      const raw = async (request: FastifyRequest, reply: FastifyReply) => {
        const text = await body(request);
        const q = request.query as Record<string, unknown>;
        const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
        const items = rawItems(text, { source: str(q.source), sourcetype: str(q.sourcetype), host: str(q.host) });
        if (items.length === 0) return reply.status(400).send(HEC.noData);
        return store(request, reply, items, undefined);
      };
      for (const url of ['/raw', '/raw/1.0']) ingest.post(url, RAW, raw);
    });
  };
}
