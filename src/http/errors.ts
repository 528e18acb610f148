import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError, ERROR_STATUS, type ErrorCode, type ErrorDetail } from '../errors.js';

/** The CONTRACT's error body, for the OpenAPI document and for response serialisation. */
export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ enum: Object.keys(ERROR_STATUS) }),
      message: Type.String(),
      requestId: Type.String(),
      details: Type.Optional(Type.Unknown()),
    }),
  },
  { $id: 'ErrorBody', description: 'Every error has this body.' },
);

/** Response-schema entries for the error statuses a route can answer. */
export function errorResponses(...statuses: number[]) {
  return Object.fromEntries(statuses.map((s) => [s, Type.Ref('ErrorBody')]));
}

const FASTIFY_CODES: Record<string, { code: ErrorCode; message: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is too large.' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'This endpoint does not take that Content-Type; send application/json.' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'VALIDATION_ERROR', message: 'The Content-Length header does not match the body.' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'VALIDATION_ERROR', message: 'The body is empty; send a JSON object.' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'VALIDATION_ERROR', message: 'The body is not valid JSON (or it holds a forbidden key such as __proto__).' },
};

const STATUS_CODES: Partial<Record<number, ErrorCode>> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  404: 'NOT_FOUND',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  503: 'OVERLOADED',
};

interface Translated {
  status: number;
  code: ErrorCode;
  message: string;
  details?: unknown;
  retryAfter?: number;
}

function validationDetails(err: FastifyError): ErrorDetail[] {
  const part = err.validationContext === 'body' ? '' : `${err.validationContext ?? ''}:`;
  return (err.validation ?? []).map((v) => {
    const missing = (v.params as { missingProperty?: string }).missingProperty;
    const path = `${v.instancePath}${missing ? `/${missing}` : ''}` || '/';
    return { path: `${part}${path}`, message: v.message ?? 'is not valid' };
  });
}

/** SQLSTATEs of transient PostgreSQL failures: deadlock, serialization failure, lock not available, too many connections, admin shutdown. */
const RETRYABLE_PG_CODES = new Set(['40P01', '40001', '55P03', '53300', '57P01']);

/** Turns anything thrown into the CONTRACT's code, status and message; unknown errors become 500. */
export function translateError(err: unknown): Translated {
  if (err instanceof AppError) return { status: err.status, code: err.code, message: err.message, details: err.details, retryAfter: err.retryAfter };
  const fe = err as FastifyError;
  if (fe?.validation) {
    const details = validationDetails(fe);
    const first = details[0];
    const where = fe.validationContext === 'body' || !fe.validationContext ? 'body' : fe.validationContext;
    const message = first ? `The request ${where} is not valid: ${first.path === '/' ? 'it' : first.path.replace(/^[a-z]*:?\//, '')} ${first.message}.` : 'The request is not valid.';
    return { status: 400, code: 'VALIDATION_ERROR', message, details };
  }
  const known = fe?.code ? FASTIFY_CODES[fe.code] : undefined;
  if (known) return { status: ERROR_STATUS[known.code], ...known };
  // Fastify's JSON parser reports prototype-poisoning keys such as __proto__ with a 400.
  const status = typeof fe?.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    const code = STATUS_CODES[status] ?? 'VALIDATION_ERROR';
    const message = fe instanceof SyntaxError ? 'The body is not valid JSON.' : `The request was refused: ${fe.message}`;
    return { status: ERROR_STATUS[code], code, message };
  }
  // PostgreSQL gave up a transaction that may well succeed again (deadlock, serialization, lock or
  // connection trouble): the client retries it, as it would a 503.
  const pgCode = (err as { code?: unknown } | null)?.code;
  if (typeof pgCode === 'string' && RETRYABLE_PG_CODES.has(pgCode)) {
    return { status: 503, code: 'OVERLOADED', message: 'The database could not complete this request just now; retry after the delay in Retry-After.', retryAfter: 1 };
  }
  return { status: 500, code: 'INTERNAL_ERROR', message: 'Something went wrong on our side. The request id identifies it in the server logs.' };
}

export function sendError(reply: FastifyReply, request: FastifyRequest, t: Translated) {
  if (t.retryAfter !== undefined) reply.header('retry-after', String(Math.max(1, Math.ceil(t.retryAfter))));
  const error: Record<string, unknown> = { code: t.code, message: t.message, requestId: request.id };
  if (t.details !== undefined) error.details = t.details;
  return reply.status(t.status).type('application/json; charset=utf-8').send({ error });
}

export function installErrorHandling(app: FastifyInstance): void {
  app.addSchema(ErrorBody);
  app.setErrorHandler((err, request, reply) => {
    const t = translateError(err);
    if (t.code === 'INTERNAL_ERROR') request.log.error({ err }, 'request failed');
    // Shedding load is expected behaviour, not a fault: one short line, no stack.
    else if (t.code === 'OVERLOADED') request.log.warn({ code: t.code, status: t.status }, 'request shed');
    else request.log.info({ code: t.code, status: t.status }, 'request refused');
    return sendError(reply, request, t);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, request, { status: 404, code: 'NOT_FOUND', message: `No route ${request.method} ${request.url.split('?')[0]}.` }),
  );
}
