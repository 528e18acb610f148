import { Type, type TSchema } from 'typebox';

/** ISO 8601 UTC with milliseconds, as every timestamp in the API. */
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' });

/** The characters Text refuses, as the inside of a regular-expression class. */
const TEXT_FORBIDDEN = '\\u0000-\\u001f\\u007f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';

/**
 * Text a person typed: a length range counted in characters (code points, as the validator counts
 * them), no control characters (which also keeps NUL, which PostgreSQL cannot store, out of the
 * database) and no bidirectional controls (U+200E, U+200F, U+061C, U+202A to U+202E, U+2066 to
 * U+2069), which would make a name shown to other members read as something else.
 */
export function Text(minLength: number, maxLength: number, description?: string) {
  return Type.String({ minLength, maxLength, pattern: TEXT_PATTERN, ...(description ? { description } : {}) });
}

/** The pattern of Text, so a refusal can be explained in words rather than as a regular expression. */
export const TEXT_PATTERN = `^[^${TEXT_FORBIDDEN}]*$`;

/** Characters in a text, counted as the validator counts `maxLength` (code points, not UTF-16 units). */
export function charCount(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** `{data: [...]}`, the shape of every list. */
export function ListOf<T extends TSchema>(item: T) {
  return Type.Object({ data: Type.Array(item) }, { additionalProperties: false });
}

/** A path parameter `:id`. Its format is not checked by the schema: an id of the wrong shape is simply not found (404). */
export const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
