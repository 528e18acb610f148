/** The error codes and their statuses, as data (docs/api.md, "Codes and statuses"). */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  TOKEN_EXPIRED: 401,
  INVALID_CREDENTIALS: 401,
  INVALID_REFRESH_TOKEN: 401,
  INVALID_API_KEY: 401,
  PLAN_LIMIT_EXCEEDED: 403,
  FORBIDDEN_ROLE: 403,
  NOT_FOUND: 404,
  EMAIL_TAKEN: 409,
  VIEW_NAME_TAKEN: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  OVERLOADED: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetail {
  path: string;
  message: string;
}

/** An error meant for the client: a stable code, a sentence for a person, optional details. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: unknown;
  /** Seconds the client should wait, sent as `Retry-After` (429 and 503). */
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, message: string, options: { details?: unknown; retryAfter?: number } = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = options.details;
    this.retryAfter = options.retryAfter;
  }
}

export const notFound = (what = 'resource') => new AppError('NOT_FOUND', `The ${what} was not found.`);

export const validationError = (path: string, message: string) =>
  new AppError('VALIDATION_ERROR', `The request is not valid: ${path.replace(/^\//, '') || 'body'} ${message}.`, {
    details: [{ path, message }] satisfies ErrorDetail[],
  });
