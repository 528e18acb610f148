/**
 * Hostile ingestion (issue 14, findings 1, 4 and 6): one tenant's strange or heavy traffic must
 * cost other tenants nothing. Each attack runs beside a bystander project (test/hostile.ts) that
 * keeps sending small batches while /healthz is probed; the bystander must see only 2xx (or
 * 429/503 with Retry-After), /healthz must stay fast, and every log anyone was told was stored
 * must be stored.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { beside, expectUnharmed, type BystanderReport } from './hostile.js';
import { createProject, describeEngines, errorOf, ingest, signup, useServer, type Account, type TestServer } from './harness.js';

async function logCount(s: TestServer, account: Account, projectId: string): Promise<number> {
  const res = await s.request('GET', `/v1/projects/${projectId}`, { token: account.accessToken });
  expect(res.status).toBe(200);
  return res.body.logCount as number;
}

/** An attacker and a bystander ("victim"), each with an account and a project. */
async function twoTenants(s: TestServer) {
  const attacker = await signup(s);
  const victim = await signup(s);
  return { attacker, ap: await createProject(s, attacker), victim, vp: await createProject(s, victim) };
}

/** The bystander saw no harm, and exactly the logs each tenant was told were stored are stored. */
async function expectEveryAcknowledgedStored(s: TestServer, t: Awaited<ReturnType<typeof twoTenants>>, report: BystanderReport, attackerAcknowledged: number): Promise<void> {
  expectUnharmed(report);
  expect(await logCount(s, t.victim, t.vp.id)).toBe(report.acknowledgedLogs);
  expect(await logCount(s, t.attacker, t.ap.id)).toBe(attackerAcknowledged);
}

/** What the attacker's requests got. */
interface Flood {
  statuses: Record<string, number>;
  /** Logs acknowledged with 202. */
  acknowledged: number;
  /** Answers other than 202 and 429/503 with Retry-After, and requests that got no answer. */
  problems: string[];
}

/** The attacker: sends every request at once with node:http and reports each answer. */
const FLOOD_SCRIPT = `
const http = require('node:http');
const fs = require('node:fs');
const [url, key, file, count] = process.argv.slice(1);
const body = fs.readFileSync(file);
const out = { statuses: {}, acknowledged: 0, problems: [] };
const go = () => Promise.all(Array.from({ length: Number(count) }, one)).then(() => process.stdout.write(JSON.stringify(out)));
const one = () => new Promise((resolve) => {
  const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length, 'x-api-key': key } }, (res) => {
    const chunks = [];
    res.on('data', (c) => chunks.push(c));
    res.on('end', () => {
      const text = Buffer.concat(chunks).toString();
      out.statuses[res.statusCode] = (out.statuses[res.statusCode] || 0) + 1;
      if (res.statusCode === 202) out.acknowledged += JSON.parse(text).accepted;
      else if (!((res.statusCode === 429 || res.statusCode === 503) && Number(res.headers['retry-after']) > 0)) out.problems.push(res.statusCode + ' ' + text.slice(0, 200));
      resolve();
    });
  });
  req.on('error', (err) => { out.problems.push('request failed: ' + err.message); resolve(); });
  req.end(body);
});
// Ready once the body is read; the requests go when the parent says so.
process.stdout.write('ready\\n');
process.stdin.once('data', go);
`;

/**
 * An attacker in a child process that sends `count` concurrent POST /v1/logs requests of `body`
 * when `go()` is called. The attacker is another machine: its own work (writing hundreds of MB to
 * sockets) must not block the event loop that this process's server and /healthz probes share,
 * so it is started, and has read its body, before the measured run begins. It still shares the CPUs.
 */
async function floodReady(s: TestServer, apiKey: string, body: string, count: number): Promise<{ go(): Promise<Flood> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loglane-flood-'));
  const file = path.join(dir, 'body.json');
  fs.writeFileSync(file, body);
  const child = spawn(process.execPath, ['-e', FLOOD_SCRIPT, `${s.url}/v1/logs`, apiKey, file, String(count)], { stdio: ['pipe', 'pipe', 'inherit'] });
  let stdout = '';
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve)).finally(() => fs.rmSync(dir, { recursive: true, force: true }));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (stdout.startsWith('ready\n')) resolve();
    });
    void closed.then((code) => reject(new Error(`the attacker process exited early (${code})`)));
  });
  return {
    async go() {
      child.stdin.end('go\n');
      const code = await closed;
      if (code !== 0) throw new Error(`the attacker process exited with ${code}`);
      return JSON.parse(stdout.slice('ready\n'.length)) as Flood;
    },
  };
}

/** Metadata nested `depth` objects deep: {"d": {"d": … {"leaf": true}}}. */
function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let i = 1; i < depth; i++) value = { d: value };
  return value;
}

/** The same as JSON text, built without recursion (JSON.stringify would overflow first). */
function nestedJson(depth: number): string {
  return '{"d":'.repeat(depth - 1) + '{"leaf":true}' + '}'.repeat(depth - 1);
}

describeEngines('hostile ingest', (engine) => {
  const s = useServer(engine);

  describe('levels named after Object.prototype', () => {
    it('a level of __proto__, constructor, toString or hasOwnProperty is a rejected log, never a 500, and a bystander in the same group commits loses nothing', async () => {
      const tenants = await twoTenants(s);
      const { ap, vp } = tenants;
      const names = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'isPrototypeOf'];

      const { result, report } = await beside(s, vp.apiKey, async () => {
        const seen: Record<number, number> = {};
        const problems: string[] = [];
        let acknowledged = 0;
        const deadline = Date.now() + 1500;
        let round = 0;
        // Four concurrent senders, so their batches share group commits with the bystander's.
        await Promise.all(
          Array.from({ length: 4 }, async () => {
            while (Date.now() < deadline) {
              const name = names[round++ % names.length]!;
              const onlyBad = round % 2 === 0;
              const body = onlyBad
                ? [{ message: 'x', level: name }, { message: 'y', level: name.toUpperCase() }]
                : [{ message: 'x', level: name }, { message: 'good', level: 'warn' }, { message: 'z', level: ` ${name} ` }];
              const res = await ingest(s, ap.apiKey, body);
              seen[res.status] = (seen[res.status] ?? 0) + 1;
              if (onlyBad) {
                if (res.status !== 400) problems.push(`${name} alone: ${res.status} ${res.text.slice(0, 200)}`);
                else if (errorOf(res).code !== 'VALIDATION_ERROR') problems.push(`${name} alone: ${res.text.slice(0, 200)}`);
              } else if (res.status !== 202) {
                problems.push(`${name} with a good log: ${res.status} ${res.text.slice(0, 200)}`);
              } else {
                acknowledged += res.body.accepted;
                const indexes = (res.body.rejected as { index: number; message: string }[]).map((r) => r.index);
                if (res.body.accepted !== 1 || indexes.join() !== '0,2') problems.push(`${name} with a good log: ${res.text.slice(0, 200)}`);
                else if (!/^level must be/.test(res.body.rejected[0].message)) problems.push(`${name}: ${res.body.rejected[0].message}`);
              }
            }
          }),
        );
        return { seen, problems, acknowledged };
      }, { label: 'levels named after Object.prototype' });

      expect(result.problems).toEqual([]);
      expect(result.seen[500]).toBeUndefined();
      expect(result.seen[202]).toBeGreaterThan(0);
      expect(result.seen[400]).toBeGreaterThan(0);
      await expectEveryAcknowledgedStored(s, tenants, report, result.acknowledged);
    });
  });

  describe('large requests from one tenant', () => {
    it('80 concurrent requests of 80 logs × 60 KB on the free plan: the attacker gets 202 or 429/503 with Retry-After, the bystander is unharmed, every acknowledged log is stored', async () => {
      const tenants = await twoTenants(s);
      const { ap, vp } = tenants;
      // 80 logs of 60 KB: 4.8 MB, under the 5 MiB body limit.
      const body = JSON.stringify(Array.from({ length: 80 }, (_, i) => ({ message: `${i} ${'m'.repeat(60 * 1024 - 10)}`, source: 'attacker' })));

      const attack = await floodReady(s, ap.apiKey, body, 80);
      const { result, report } = await beside(s, vp.apiKey, () => attack.go(), { label: '80 concurrent requests of 80 logs × 60 KB' });

      console.log(`[hostile ${engine}] attacker statuses ${JSON.stringify(result.statuses)}`);
      expect(result.problems).toEqual([]);
      expect(result.acknowledged).toBeGreaterThan(0);
      // 384 MB offered at once against a share of 16 MiB in flight (INGEST_PROJECT_INFLIGHT_BYTES): the
      // attacker must have been refused in part, and told so.
      expect(result.statuses[429]).toBeGreaterThan(0);
      await expectEveryAcknowledgedStored(s, tenants, report, result.acknowledged);
    });
  });

  describe('deeply nested metadata', () => {
    it('JSON: a log nested past 32 levels is rejected alone; the good logs beside it are stored', async () => {
      const a = await signup(s);
      const p = await createProject(s, a);
      const raw = `[{"message":"good 1"},{"message":"deep","metadata":${nestedJson(4100)}},{"message":"good 2","metadata":${JSON.stringify(nested(32))}},{"message":"deep top","x":${nestedJson(32)}},{"message":"one too deep","metadata":${JSON.stringify(nested(33))}}]`;
      const res = await s.request('POST', '/v1/logs', { raw, headers: { 'content-type': 'application/json', 'x-api-key': p.apiKey } });
      expect(res.status).toBe(202);
      expect(res.body.accepted).toBe(2);
      expect(res.body.rejected).toEqual([
        { index: 1, message: 'metadata is nested more than 32 levels deep' },
        { index: 3, message: 'metadata is nested more than 32 levels deep' },
        { index: 4, message: 'metadata is nested more than 32 levels deep' },
      ]);
      expect(await logCount(s, a, p.id)).toBe(2);
      const search = await s.request('GET', `/v1/projects/${p.id}/logs`, { token: a.accessToken });
      expect(search.body.data.map((l: { message: string }) => l.message).sort()).toEqual(['good 1', 'good 2']);
    });

    it('NDJSON (gzip too): the deep line is rejected alone; a body nested too deep for any parser is a 400', async () => {
      const a = await signup(s);
      const p = await createProject(s, a);
      const ndjson = ['{"message":"good"}', `{"message":"deep","metadata":${nestedJson(5000)}}`, `{"message":"deep array","metadata":{"a":${'['.repeat(5000)}${']'.repeat(5000)}}}`, '{"message":"good too"}'].join('\n');
      const res = await s.request('POST', '/v1/logs', { raw: gzipSync(ndjson), headers: { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip', 'x-api-key': p.apiKey } });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({
        accepted: 2,
        rejected: [
          { index: 1, message: 'metadata is nested more than 32 levels deep' },
          { index: 2, message: 'metadata is nested more than 32 levels deep' },
        ],
      });
      expect(await logCount(s, a, p.id)).toBe(2);

      // Every log too deep: a 400 listing them, not a 500.
      const allDeep = await s.request('POST', '/v1/logs', { raw: `[{"message":"a","metadata":${nestedJson(4100)}}]`, headers: { 'content-type': 'application/json', 'x-api-key': p.apiKey } });
      expect(allDeep.status).toBe(400);
      expect(errorOf(allDeep).message).toContain('nested more than 32 levels deep');

      // Nesting that no log could hold (2 MB of brackets): a 400 whatever the parser makes of it.
      const absurd = await s.request('POST', '/v1/logs', { raw: '['.repeat(2_000_000) + ']'.repeat(2_000_000), headers: { 'content-type': 'application/json', 'x-api-key': p.apiKey } });
      expect(absurd.status).toBe(400);
      expect(errorOf(absurd).code).toBe('VALIDATION_ERROR');
      const absurdLine = await s.request('POST', '/v1/logs', { raw: `{"message":"fine"}\n${'{"a":'.repeat(400_000)}1${'}'.repeat(400_000)}\n`, headers: { 'content-type': 'application/x-ndjson', 'x-api-key': p.apiKey } });
      expect(absurdLine.status).toBe(202);
      expect(absurdLine.body.accepted).toBe(1);
      expect(absurdLine.body.rejected).toHaveLength(1);
      expect(absurdLine.body.rejected[0]!.index).toBe(1);
      expect(await logCount(s, a, p.id)).toBe(3);
    });

    it('OTLP/JSON: a record whose attributes or body nest kvlists and arrays past the limit is refused alone (partial success)', async () => {
      const a = await signup(s);
      const p = await createProject(s, a);
      // An AnyValue nesting kvlists and arrays `depth` levels deep, as JSON text (built without
      // recursion: JSON.stringify would overflow first).
      const deepKv = (depth: number): string => {
        let open = '';
        let close = '';
        for (let i = 0; i < depth; i++) {
          if (i % 2 === 0) {
            open += '{"kvlistValue":{"values":[{"key":"k","value":';
            close = '}]}}' + close;
          } else {
            open += '{"arrayValue":{"values":[';
            close = ']}}' + close;
          }
        }
        return open + '{"stringValue":"leaf"}' + close;
      };
      const time = String(Date.now() * 1e6);
      const record = (message: string, extra = '') => `{"timeUnixNano":"${time}","severityText":"INFO","body":{"stringValue":"${message}"}${extra}}`;
      const records = [
        record('good'),
        record('deep attribute', `,"attributes":[{"key":"deep","value":${deepKv(4100)}}]`),
        `{"timeUnixNano":"${time}","body":${deepKv(5000)}}`,
        record('shallow attribute', `,"attributes":[{"key":"ok","value":${deepKv(20)}}]`),
      ];
      const raw = `{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"svc"}}]},"scopeLogs":[{"scope":{"name":"test"},"logRecords":[${records.join(',')}]}]}]}`;
      const res = await s.request('POST', '/v1/otlp/v1/logs', { raw, headers: { 'content-type': 'application/json', 'x-api-key': p.apiKey } });
      expect(res.status).toBe(200);
      expect(res.body.partialSuccess?.rejectedLogRecords).toBe('2');
      expect(res.body.partialSuccess?.errorMessage).toBe('record 1: metadata is nested more than 32 levels deep; record 2: metadata is nested more than 32 levels deep');
      expect(await logCount(s, a, p.id)).toBe(2);
      const search = await s.request('GET', `/v1/projects/${p.id}/logs`, { token: a.accessToken });
      const shallow = search.body.data.find((l) => l.message === 'shallow attribute');
      expect(shallow, 'the log with the shallow attribute').toBeDefined();
      // Kept whole, not cut off at some depth.
      expect(JSON.stringify(shallow!.metadata.ok)).toContain('"leaf"');
    });

    it('OTLP/protobuf: a record nested past the limit is refused alone; a request past the decoder\'s own nesting limit (100 messages, as protoc) is a 400', async () => {
      const a = await signup(s);
      const p = await createProject(s, a);
      // Protobuf by hand: length-delimited fields only.
      const varint = (n: number) => {
        const out: number[] = [];
        for (; n > 127; n >>>= 7) out.push((n & 127) | 128);
        out.push(n);
        return Buffer.from(out);
      };
      const field = (tag: number, bytes: Buffer) => Buffer.concat([varint((tag << 3) | 2), varint(bytes.length), bytes]);
      const text = (t: string) => Buffer.from(t);
      /** AnyValue: arrays (2 messages a level) or kvlists (3 messages a level) `depth` deep around a string. */
      const deep = (depth: number, kind: 'array' | 'kvlist') => {
        let v = field(1, text('leaf'));
        for (let i = 0; i < depth; i++) v = kind === 'array' ? field(5, field(1, v)) : field(6, field(1, Buffer.concat([field(1, text('k')), field(2, v)])));
        return v;
      };
      const record = (message: string, attribute?: Buffer) => Buffer.concat([field(3, text('INFO')), field(5, field(1, text(message))), ...(attribute ? [field(6, Buffer.concat([field(1, text('a')), field(2, attribute)]))] : [])]);
      const exportRequest = (...records: Buffer[]) => field(1, field(2, Buffer.concat(records.map((r) => field(2, r)))));
      const post = (body: Buffer) => s.request('POST', '/v1/otlp/v1/logs', { raw: body, headers: { 'content-type': 'application/x-protobuf', 'x-api-key': p.apiKey } });

      const res = await post(exportRequest(record('good'), record('40 arrays deep', deep(40, 'array')), record('20 kvlists deep', deep(20, 'kvlist'))));
      expect(res.status).toBe(200);
      expect(await logCount(s, a, p.id)).toBe(2);
      const search = await s.request('GET', `/v1/projects/${p.id}/logs`, { token: a.accessToken });
      expect(search.body.data.map((l: { message: string }) => l.message).sort()).toEqual(['20 kvlists deep', 'good']);

      const tooDeep = await post(exportRequest(record('good'), record('4,100 kvlists deep', deep(4100, 'kvlist'))));
      expect(tooDeep.status).toBe(400);
      expect(errorOf(tooDeep).code).toBe('VALIDATION_ERROR');
      expect(await logCount(s, a, p.id)).toBe(2);
    });
  });
});
