import { Type, type TSchema } from 'typebox';

/** ISO 8601 UTC with milliseconds, as every timestamp in the API. */
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' });

/**
 * Text a person typed: a length range and no control characters (which also keeps NUL, which
 * PostgreSQL cannot store, out of the database).
 */
export function Text(minLength: number, maxLength: number, description?: string) {
  return Type.String({ minLength, maxLength, pattern: '^[^\\u0000-\\u001f\\u007f]*$', ...(description ? { description } : {}) });
}

/** `{data: [...]}`, the shape of every list. */
export function ListOf<T extends TSchema>(item: T) {
  return Type.Object({ data: Type.Array(item) }, { additionalProperties: false });
}

/** A path parameter `:id`. Its format is not checked by the schema: an id of the wrong shape is simply not found (404). */
export const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
