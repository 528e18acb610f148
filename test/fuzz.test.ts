/**
 * Fuzzing from the served OpenAPI document: for every operation, requests built from its schemas,
 * valid and mutated (wrong types, missing and extra fields, huge strings, unicode, nulls, prototype
 * keys), plus stateful sequences (signup → project → ingest → search → alert). Every answer must
 * be a status the document lists for that operation, with a body that validates against its
 * schema, and never a 5xx. LOGLANE_FUZZ_RUNS sets the size (CI: small; test:reliability: 10,000).
 */
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LEVELS } from '../src/features/logs/levels.js';
import { describeEngines, useAccount, useProject, useServer, type Account } from './harness.js';

const FULL = process.env.LOGLANE_RELIABILITY === 'full';
const RUNS = Number(process.env.LOGLANE_FUZZ_RUNS ?? (FULL ? 10_000 : 600));
const SEQUENCES = Math.max(5, Math.round(RUNS / 50));

type Schema = Record<string, any>;
interface Operation {
  method: string;
  path: string;
  op: Schema;
}

/** Replaces `$ref`s to components with the components themselves. */
function deref(doc: Schema, node: unknown, seen = new Set<string>()): any {
  if (Array.isArray(node)) return node.map((n) => deref(doc, n, seen));
  if (node === null || typeof node !== 'object') return node;
  const obj = node as Schema;
  if (typeof obj.$ref === 'string') {
    const name = obj.$ref.split('/').pop()!;
    if (seen.has(name)) return {};
    return deref(doc, doc.components?.schemas?.[name] ?? {}, new Set([...seen, name]));
  }
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, deref(doc, v, seen)]));
}

const HUGE = 'A'.repeat(300_000);
const weird = fc.constantFrom('', ' ', '\u0000', '\ud800', '🦄'.repeat(50), '__proto__', 'constructor', '../../etc/passwd', '%00', "' or 1=1 --", '<script>', '\r\nX-Injected: 1', HUGE);

/** Values for a schema: mostly valid, sometimes mutated. */
function valueFor(schema: Schema | undefined, name: string, ctx: Fixtures, depth = 0): fc.Arbitrary<unknown> {
  const mutated = fc.oneof(fc.anything({ maxDepth: 2 }), weird, fc.constant(null), fc.integer(), fc.boolean(), fc.array(fc.string(), { maxLength: 3 }));
  return fc.oneof({ weight: 5, arbitrary: validFor(schema, name, ctx, depth) }, { weight: 1, arbitrary: mutated });
}

function validFor(schema: Schema | undefined, name: string, ctx: Fixtures, depth: number): fc.Arbitrary<unknown> {
  if (!schema || depth > 4) return fc.anything({ maxDepth: 1 });
  if (name === 'projectId') return fc.constantFrom(ctx.projectId, ctx.otherProjectId, 'proj_nope');
  if (name === 'level') return fc.constantFrom(...LEVELS, 'WARNING', 'loud', 30);
  if (name === 'endpoint') return fc.constantFrom('https://fcm.googleapis.com/fcm/send/abc', 'http://127.0.0.1/x', 'https://10.0.0.1/', 'nonsense');
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return fc.oneof(...union.map((s: Schema) => validFor(s, name, ctx, depth + 1)));
  switch (schema.type) {
    case 'string':
      if (schema.format === 'email') return fc.emailAddress();
      if (schema.format === 'date-time') return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
      if (schema.pattern && !schema.pattern.includes('\\u')) return fc.stringMatching(new RegExp(schema.pattern)).map((s) => s.slice(0, schema.maxLength ?? 200));
      return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 60), unit: 'grapheme' });
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 100_000 });
    case 'number':
      return fc.double({ noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(validFor(schema.items, name, ctx, depth + 1), { maxLength: 4 });
    case 'object': {
      const props = schema.properties ?? {};
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, sub] of Object.entries(props)) record[key] = valueFor(sub as Schema, key, ctx, depth + 1);
      const required = (schema.required ?? []).filter(() => Math.random() < 0.95);
      return fc.tuple(fc.record(record, { requiredKeys: required }), fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 })).map(([r, extra]) => ({ ...extra, ...r }));
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

interface Fixtures {
  account: Account;
  projectId: string;
  otherProjectId: string;
  apiKey: string;
  alertId: string;
}

describeEngines('fuzzing from the OpenAPI document', (engine) => {
  const s = useServer(engine, { env: { LOGIN_MAX_ATTEMPTS: '1000000', LOGIN_MAX_ATTEMPTS_PER_IP: '1000000', SIGNUP_MAX_PER_IP: '1000000', LOG_LEVEL: 'warn' } });
  const account = useAccount(s, { plan: 'enterprise' });
  const project = useProject(s, account, 'fuzz');
  const other = useAccount(s);
  const othersProject = useProject(s, other, 'not yours');
  let doc: Schema;
  let ops: Operation[];
  let fx: Fixtures;
  const ajv = new Ajv({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  const validators = new Map<string, ReturnType<Ajv['compile']>>();
  const tally = { requests: 0, fiveXX: 0, undocumented: 0, invalidBodies: 0 };

  beforeAll(async () => {
    doc = (await s.request('GET', '/v1/openapi.json')).body;
    const rule = await s.request('POST', '/v1/alerts', { token: account.accessToken, body: { projectId: project.id, name: 'fuzz', condition: { level: 'error', threshold: 1, window: '1m' }, channels: ['email'] } });
    expect(rule.status).toBe(201);
    fx = { account, projectId: project.id, otherProjectId: othersProject.id, apiKey: project.apiKey, alertId: rule.body.id };
    ops = [];
    for (const [path, methods] of Object.entries<Schema>(doc.paths)) {
      for (const [method, op] of Object.entries<Schema>(methods)) {
        if (path.endsWith('/logs/tail')) continue; // a stream: exercised in the tail tests
        ops.push({ method: method.toUpperCase(), path, op: deref(doc, op) });
      }
    }
  });
  afterAll(async () => {
    console.log(`[${engine}] fuzz: ${tally.requests} requests over ${ops?.length} operations; 5xx ${tally.fiveXX}, undocumented statuses ${tally.undocumented}, schema violations ${tally.invalidBodies}`);
  });

  /** Sends one request and checks the answer against the document. */
  async function check(op: Operation, url: string, init: { body?: string; headers: Record<string, string> }): Promise<{ status: number; body: any }> {
    tally.requests++;
    const res = await fetch(`${s.url}${url}`, { method: op.method, headers: init.headers, body: op.method === 'GET' || op.method === 'DELETE' ? undefined : init.body });
    const text = await res.text();
    const label = `${op.method} ${url} ${init.body?.slice(0, 200) ?? ''} → ${res.status} ${text.slice(0, 300)}`;
    if (res.status >= 500) tally.fiveXX++;
    expect(res.status, label).toBeLessThan(500);
    const documented = op.op.responses?.[String(res.status)];
    if (!documented) tally.undocumented++;
    expect(documented, `undocumented status: ${label}`).toBeDefined();
    const schema = documented?.content?.['application/json']?.schema;
    let body: any;
    if (text.length > 0 && (res.headers.get('content-type') ?? '').includes('json')) {
      body = JSON.parse(text);
      if (schema) {
        const key = `${op.method} ${op.path} ${res.status}`;
        if (!validators.has(key)) validators.set(key, ajv.compile(schema));
        const validate = validators.get(key)!;
        if (!validate(body)) tally.invalidBodies++;
        expect(validate(body), `${label}\n${JSON.stringify(validate.errors)}`).toBe(true);
      }
    }
    return { status: res.status, body };
  }

  it(`every operation, valid and mutated requests (${RUNS} runs)`, async () => {
    const request = fc.record({
      opIndex: fc.nat({ max: ops.length - 1 }),
      id: fc.oneof({ weight: 4, arbitrary: fc.constant('owned') }, { weight: 1, arbitrary: fc.constantFrom('proj_01m80hn9cs45n80hpthxyczene', 'x', '%00', '..', '%E2%80%AE', 'a'.repeat(300)) }),
      auth: fc.constantFrom('valid', 'valid', 'valid', 'valid', 'none', 'garbage', 'apikey'),
      bodyMode: fc.constantFrom('schema', 'schema', 'schema', 'raw'),
      raw: fc.constantFrom('{"__proto__": {"x": 1}}', '{"constructor": {"prototype": {"x": 1}}}', 'not json', '', '[', 'null', `{"name": "${HUGE}"}`),
      seed: fc.integer(),
    });
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const op = ops[r.opIndex]!;
        const id = r.id === 'owned' ? (op.path.startsWith('/v1/alerts') ? fx.alertId : fx.projectId) : r.id;
        let url = op.path.replace('{id}', encodeURIComponent(id).replace(/%25/g, '%'));
        const queryParams = (op.op.parameters ?? []).filter((p: Schema) => p.in === 'query');
        if (queryParams.length > 0) {
          const q = fc.sample(fc.record(Object.fromEntries(queryParams.map((p: Schema) => [p.name, valueFor(p.schema, p.name, fx)])), { requiredKeys: [] }), { numRuns: 1, seed: r.seed })[0]!;
          const params = new URLSearchParams();
          for (const [k, v] of Object.entries(q)) params.set(k, typeof v === 'string' ? v : JSON.stringify(v));
          url += `?${params.toString().slice(0, 4000)}`;
        }
        const headers: Record<string, string> = {};
        if (r.auth === 'valid') headers.authorization = `Bearer ${url.startsWith('/v1/logs') ? fx.apiKey : fx.account.accessToken}`;
        if (r.auth === 'garbage') headers.authorization = 'Bearer garbage.garbage.garbage';
        if (r.auth === 'apikey') headers['x-api-key'] = fx.apiKey;
        let body: string | undefined;
        const bodySchema = op.op.requestBody?.content?.['application/json']?.schema;
        if (bodySchema || op.method === 'POST' || op.method === 'PUT') {
          headers['content-type'] = 'application/json';
          body = r.bodyMode === 'raw' ? r.raw : JSON.stringify(fc.sample(valueFor(bodySchema, 'body', fx), { numRuns: 1, seed: r.seed })[0] ?? null);
        }
        await check(op, url, { body, headers });
      }),
      { numRuns: RUNS },
    );
  }, 600_000);

  it(`stateful sequences: signup → project → ingest → search → alert (${SEQUENCES} runs)`, async () => {
    const op = (method: string, path: string) => ops.find((o) => o.method === method && o.path === path)!;
    const step = fc.record({
      email: fc.oneof(fc.emailAddress(), weird),
      password: fc.oneof(fc.string({ minLength: 8, maxLength: 30 }), weird),
      name: fc.oneof(fc.string({ minLength: 1, maxLength: 100 }), weird),
      logs: fc.array(fc.record({ message: fc.oneof(fc.string(), weird), level: fc.oneof(fc.constantFrom(...LEVELS), fc.string()), source: fc.oneof(fc.string({ maxLength: 20 }), fc.constant(undefined)), timestamp: fc.oneof(fc.date({ noInvalidDate: true, min: new Date(0), max: new Date() }).map((d) => d.getTime()), fc.string(), fc.constant(undefined)) }, { requiredKeys: [] }), { maxLength: 20 }),
      q: fc.oneof(fc.string({ maxLength: 10 }), fc.constant(undefined)),
      pattern: fc.oneof(fc.constantFrom('a+', '(a+)+$', '(a)\\1', '[', 'timeout|error', '\\d{3}'), fc.constant(undefined)),
      threshold: fc.oneof(fc.integer({ min: -5, max: 20 }), fc.double()),
      window: fc.oneof(fc.constantFrom('1m', '5m', '1h', '0s', '8d', 'soon'), fc.string({ maxLength: 5 })),
    });
    await fc.assert(
      fc.asyncProperty(step, async (st) => {
        const json = { 'content-type': 'application/json' };
        const su = await check(op('POST', '/v1/auth/signup'), '/v1/auth/signup', { body: JSON.stringify({ email: st.email, password: st.password }), headers: json });
        if (su.status !== 201) return;
        const auth = { ...json, authorization: `Bearer ${su.body.accessToken}` };
        const pr = await check(op('POST', '/v1/projects'), '/v1/projects', { body: JSON.stringify({ name: st.name }), headers: auth });
        if (pr.status !== 201) return;
        await check(op('POST', '/v1/logs'), '/v1/logs', { body: JSON.stringify(st.logs), headers: { ...json, 'x-api-key': pr.body.apiKey } });
        const params = new URLSearchParams();
        if (st.q !== undefined) params.set('q', st.q);
        if (st.pattern !== undefined) params.set('pattern', st.pattern);
        await check(op('GET', '/v1/projects/{id}/logs'), `/v1/projects/${pr.body.id}/logs?${params}`, { headers: auth });
        await check(op('GET', '/v1/projects/{id}/logs/stats'), `/v1/projects/${pr.body.id}/logs/stats${st.q !== undefined ? `?q=${encodeURIComponent(st.q)}` : ''}`, { headers: auth });
        await check(op('POST', '/v1/alerts'), '/v1/alerts', {
          body: JSON.stringify({ projectId: pr.body.id, name: st.name, condition: { level: 'error', threshold: st.threshold, window: st.window, pattern: st.pattern }, channels: ['email'] }),
          headers: auth,
        });
      }),
      { numRuns: SEQUENCES },
    );
  }, 600_000);
});
