import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { isValidEmail } from '../features/accounts/email-address.js';
import { installTextRule } from './text.js';

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: false, useDefaults: true, removeAdditional: true, ...options });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  // Emails are trimmed before they are stored, so surrounding blanks are not a reason to refuse one.
  ajv.addFormat('email', { type: 'string', validate: isValidEmail });
  return ajv;
}

/**
 * Bodies are validated strictly (no type coercion: `{"password": 12345678}` is a 400, not a
 * string); query strings and path parameters arrive as text and are coerced to their types.
 * Fields a body schema does not list are dropped (`additionalProperties: false`), so a client
 * can never set a server-owned field. Before any schema runs, every string of the body, query
 * string and path parameters passes the one text rule of ./text.ts (no NUL, no lone surrogate).
 */
export function installValidators(app: FastifyInstance): void {
  const body = makeAjv({ coerceTypes: false });
  const other = makeAjv({ coerceTypes: 'array' });
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? body : other).compile(schema));
  installTextRule(app);
}
