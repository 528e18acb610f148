import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { discardBody, discardPace } from './discard.js';
import { AppError, ERROR_STATUS, type ErrorCode, type ErrorDetail } from '../errors.js';
import { TEXT_PATTERN } from './schemas.js';

/** A request id, as every request (and every error body) carries. */
export const newRequestId = (): string => `req_${randomBytes(8).toString('hex')}`;

/** The error body (docs/api.md, "The error body"), for the OpenAPI document and for response serialisation. */
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

export interface Translated {
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
    // Text's pattern (http/schemas.ts) is explained in words, not shown as a regular expression.
    const message = v.keyword === 'pattern' && (v.params as { pattern?: string }).pattern === TEXT_PATTERN ? 'must not contain control characters or bidirectional controls' : v.message;
    return { path: `${part}${path}`, message: message ?? 'is not valid' };
  });
}

/**
 * Turns anything thrown into its code, status and message (docs/api.md, "Codes and statuses");
 * unknown errors become 500.
 * `isRetryable` says which database errors are worth a client's retry (the log store's, per engine).
 */
export function translateError(err: unknown, isRetryable: (err: unknown) => boolean = () => false): Translated {
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
  // The database gave up a transaction that may well succeed again (deadlock, serialization, lock or
  // connection trouble): the client retries it, as it would a 503.
  if (isRetryable(err)) {
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

/**
 * An error answered before the request body was read (a 413 by Content-Length, a 415, a 401 from
 * a hook) must still reach the client. If the server answered and closed at once, the unread rest
 * of the body would make the kernel reset the connection, and a client still writing would get
 * EPIPE or ECONNRESET instead of the answer. So the rest of the body is read and thrown away
 * first — at most DRAIN_MAX_BYTES within DRAIN_MAX_MS — and then the error is sent; past those
 * bounds the error is sent at once and the connection closed.
 */
export const DRAIN_MAX_BYTES = 16 * 1024 * 1024;
// Well inside SHUTDOWN_TIMEOUT (25 s), so a stalled upload cannot hold a graceful shutdown past it.
export const DRAIN_MAX_MS = 10_000;

/** Reads and discards the rest of a request body; true when it was read to its end within the bounds. */
function drainBody(raw: IncomingMessage): Promise<boolean> {
  if (raw.socket?.destroyed) return Promise.resolve(false);
  const length = Number(raw.headers['content-length']);
  if (Number.isFinite(length) && length > DRAIN_MAX_BYTES) return Promise.resolve(false);
  return discardBody(raw, DRAIN_MAX_BYTES, DRAIN_MAX_MS, discardPace);
}

/**
 * The error handler: drains what is left of a refused body (see DRAIN_MAX_BYTES), logs by kind,
 * and answers with `send` (Loglane's error body; a protocol served in its own shape passes its own,
 * e.g. the Elasticsearch routes under /es).
 */
export function errorHandler(isRetryable: (err: unknown) => boolean, send: (reply: FastifyReply, request: FastifyRequest, t: Translated) => unknown = sendError) {
  return async (err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    if (!request.raw.complete) {
      // Fastify asks to close the connection after a body it refused unread; once the body is read
      // to its end, the connection is as good as any other (the client's own Connection still counts).
      if (await drainBody(request.raw)) reply.removeHeader('connection');
      else reply.header('connection', 'close');
    }
    const t = translateError(err, isRetryable);
    if (t.code === 'INTERNAL_ERROR') request.log.error({ err }, 'request failed');
    // Shedding load is expected behaviour, not a fault: one short line, no stack.
    else if (t.code === 'OVERLOADED') request.log.warn({ code: t.code, status: t.status }, 'request shed');
    else request.log.info({ code: t.code, status: t.status }, 'request refused');
    return send(reply, request, t);
  };
}

export function installErrorHandling(app: FastifyInstance, database: { isRetryable(err: unknown): boolean }): void {
  app.addSchema(ErrorBody);
  app.setErrorHandler(errorHandler((err) => database.isRetryable(err)));
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, request, { status: 404, code: 'NOT_FOUND', message: `No route ${request.method} ${request.url.split('?')[0]}.` }),
  );
}

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 413: 'Payload Too Large', 431: 'Request Header Fields Too Large' };

/** What to answer for an error of Node's HTTP parser, which Fastify never sees as a request. */
export function clientErrorAnswer(err: { code?: string }, maxHeaderSize: number): { status: number; code: ErrorCode; message: string } {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: 'VALIDATION_ERROR', message: `The request line and headers are larger than the ${Math.round(maxHeaderSize / 1024)} KiB this server takes; send a shorter URL or fewer or shorter headers.` };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, code: 'PAYLOAD_TOO_LARGE', message: 'The chunk extensions of the body are too large.' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return { status: 408, code: 'VALIDATION_ERROR', message: 'The request did not arrive in time.' };
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return { status: 400, code: 'VALIDATION_ERROR', message: 'The Content-Length header is not valid (not a number, given twice with different values, or sent with Transfer-Encoding).' };
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_INVALID_CHUNK_SIZE':
      return { status: 400, code: 'VALIDATION_ERROR', message: 'The chunked body is not valid.' };
    case 'HPE_INVALID_HEADER_TOKEN':
      return { status: 400, code: 'VALIDATION_ERROR', message: 'A header name or value holds characters HTTP does not allow.' };
    default:
      return { status: 400, code: 'VALIDATION_ERROR', message: 'The request is not valid HTTP/1.1 (a request line, header or body framing the parser refused; a Content-Length shorter than the body sent also ends here).' };
  }
}

const answeredSockets = new WeakSet<Socket>();

/**
 * Fastify's `clientErrorHandler`: errors of Node's HTTP parser (a header section over the limit, a
 * broken Content-Length, bytes that are not HTTP, a request that never finished arriving) get the
 * error body (docs/api.md, "The error body") with a request id, in the body and in X-Request-Id,
 * like every other error.
 * The server then half-closes: it stops writing, reads what the client still sends for a while,
 * and only then closes, so a client still writing its request can read the answer.
 */
export function clientErrorHandler(maxHeaderSize: number) {
  return function (this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
    if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || socket.destroyed) return;
    // The parser reports every later chunk of a broken stream again: answer once.
    if (answeredSockets.has(socket)) return;
    answeredSockets.add(socket);
    const requestId = newRequestId();
    const answer = clientErrorAnswer(err, maxHeaderSize);
    this.log.info({ reqId: requestId, parserError: err.code, status: answer.status }, 'request refused by the HTTP parser');
    // A response of an earlier request on this connection already on the wire cannot be followed.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (!socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const body = JSON.stringify({ error: { code: answer.code, message: answer.message, requestId } });
    socket.write(
      `HTTP/1.1 ${answer.status} ${REASONS[answer.status] ?? 'Bad Request'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    );
    lingeringClose(socket);
  };
}

/** Half-closes a socket and closes it once the client has stopped sending, or after the drain bounds. */
function lingeringClose(socket: Socket): void {
  const startRead = socket.bytesRead;
  const check = setInterval(() => {
    if (socket.bytesRead - startRead > DRAIN_MAX_BYTES) socket.destroy();
  }, 250);
  const deadline = setTimeout(() => socket.destroy(), Math.min(DRAIN_MAX_MS, 5_000));
  check.unref();
  deadline.unref();
  socket.once('close', () => {
    clearInterval(check);
    clearTimeout(deadline);
  });
  socket.end();
}
