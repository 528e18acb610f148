/**
 * Regenerates packages/client/src/schema.ts from the OpenAPI document the server serves.
 *
 *   npm run gen:client            # write it
 *   npm run gen:client -- --check # exit 1 if it is out of date (the test suite checks this too)
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { openApiDocument } from '../src/openapi.js';

export const SCHEMA_FILE = fileURLToPath(new URL('../packages/client/src/schema.ts', import.meta.url));

const HEADER = `/**
 * The Loglane API's types, generated from the OpenAPI document the server serves
 * (GET /v1/openapi.json) by \`npm run gen:client\`. Do not edit: change the route declarations in
 * src/ and regenerate. A test fails when this file and the served document disagree.
 */
/* eslint-disable */
`;

export async function generateSchema(): Promise<string> {
  const doc = await openApiDocument();
  const ast = await openapiTS(doc as unknown as Parameters<typeof openapiTS>[0], { alphabetize: false, exportType: false });
  return HEADER + astToString(ast);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const fresh = await generateSchema();
  if (process.argv.includes('--check')) {
    const current = await readFile(SCHEMA_FILE, 'utf8').catch(() => '');
    if (current !== fresh) {
      console.error('packages/client/src/schema.ts is out of date with the served OpenAPI document: run `npm run gen:client`.');
      process.exit(1);
    }
    console.log('packages/client/src/schema.ts matches the served OpenAPI document.');
  } else {
    await writeFile(SCHEMA_FILE, fresh);
    console.log(`wrote ${SCHEMA_FILE}`);
  }
}
