/**
 * @loglane/client: its types are generated from the OpenAPI document the server serves, and it has
 * a method for every operation; a route changed without regenerating the client fails here (and
 * the type check fails when an operation has no method). Then the client against a real server.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { LoglaneClient, LoglaneError, OPERATIONS } from '../packages/client/src/index.js';
import { generateSchema, SCHEMA_FILE } from '../scripts/gen-client.js';
import { describeEngines, ISSUED_SECRETS, setPlan, uniqueEmail, useServer } from './harness.js';

describe('the client package against the served OpenAPI document', () => {
  it('has types generated from the document as it is now (npm run gen:client)', async () => {
    const committed = await readFile(SCHEMA_FILE, 'utf8');
    const fresh = await generateSchema();
    expect(committed === fresh, 'packages/client/src/schema.ts is out of date: run `npm run gen:client`').toBe(true);
  }, 60_000);

  it('has a method for every operation the server serves, and no method for one it does not', async () => {
    const { openApiDocument } = await import('../src/openapi.js');
    const doc = (await openApiDocument()) as { paths: Record<string, Record<string, { operationId?: string }>> };
    const served = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId)).sort();
    expect(served.every((id) => typeof id === 'string')).toBe(true);
    expect(Object.keys(OPERATIONS).sort()).toEqual(served);
    for (const method of Object.values(OPERATIONS)) expect(typeof LoglaneClient.prototype[method]).toBe('function');
  }, 60_000);
});

describeEngines('client against the server', (engine) => {
  const s = useServer(engine);

  it('signs up, manages projects, ingests, searches, counts, tails, alerts and refreshes its tokens', async () => {
    const saved: string[] = [];
    const client = new LoglaneClient({ baseUrl: s.url, onTokens: (t) => saved.push(t.refreshToken) });
    const email = uniqueEmail('client');
    const session = await client.signup({ email, password: 'client password' });
    ISSUED_SECRETS.add(session.accessToken).add(session.refreshToken!);
    expect(session.user.email).toBe(email);
    expect((await client.me()).subscription.plan).toBe('free');
    await setPlan(s, session.user.id, 'pro');
    expect((await client.listPlans()).data.map((p) => p.name)).toEqual(['free', 'starter', 'pro', 'enterprise']);

    const project = await client.createProject({ name: 'client project' });
    ISSUED_SECRETS.add(project.apiKey);
    expect((await client.updateProject(project.id, { name: 'renamed' })).name).toBe('renamed');
    expect((await client.listProjects()).data.map((p) => p.id)).toContain(project.id);

    // Live tail first, so it sees what is sent next.
    const controller = new AbortController();
    let connected!: () => void;
    const ready = new Promise<void>((r) => (connected = r));
    const tailed = (async () => {
      for await (const log of client.tailLogs(project.id, { level: 'error' }, { signal: controller.signal, onConnected: connected })) return log;
      return undefined;
    })();
    await ready;

    const ingested = await client.ingestLogs(
      Array.from({ length: 300 }, (_, i) => ({ level: i % 3 === 0 ? 'error' : 'info', message: `client log ${i} ${'x'.repeat(40)}`, source: 'sdk', metadata: { i } })),
      { apiKey: project.apiKey, idempotencyKey: 'batch-1' },
    );
    expect(ingested).toEqual({ accepted: 300, rejected: [] });
    const first = await tailed;
    controller.abort();
    expect(first).toMatchObject({ level: 'error', message: expect.stringMatching(/^client log 0 /), source: 'sdk' });

    const page = await client.searchLogs(project.id, { level: 'error', limit: 50 });
    expect(page.data).toHaveLength(50);
    expect(page.nextCursor).toBeTruthy();
    const all = [];
    for await (const log of client.searchAll(project.id, { level: 'error', limit: 40 })) all.push(log);
    expect(all).toHaveLength(100);
    const stats = await client.logStats(project.id, { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString(), interval: '1h' });
    expect(stats.buckets.reduce((n, b) => n + b.total, 0)).toBe(300);

    // The explorer's reads: facets, fields, context, export and saved views.
    const facets = await client.logFacets(project.id, { fields: 'level', limit: 10 });
    expect(facets.facets[0]!.values).toEqual([{ value: 'info', count: 200 }, { value: 'error', count: 100 }]);
    expect((await client.logFields(project.id)).fields.map((f) => f.field)).toEqual(['level', 'source', '@i']);
    const around = await client.logContext(project.id, all[50]!.id, { before: 2, after: 2, query: 'level:error' });
    expect(around.before.map((l) => l.id)).toEqual([all[51]!.id, all[52]!.id]);
    expect(around.after.map((l) => l.id)).toEqual([all[49]!.id, all[48]!.id]);
    let exported = '';
    for await (const text of client.exportLogs(project.id, { format: 'ndjson', level: 'error' })) exported += text;
    expect(exported.trim().split('\n').map((line) => (JSON.parse(line) as { id: string }).id)).toEqual(all.map((l) => l.id));
    const view = await client.createView(project.id, { name: 'Errors', query: 'level:error', range: { last: '1h' }, columns: ['@i'] });
    expect((await client.updateView(project.id, view.id, { name: 'All errors', query: 'level:error', range: { last: '24h' } })).name).toBe('All errors');
    expect((await client.listViews(project.id)).data.map((v) => v.id)).toEqual([view.id]);
    expect((await client.getView(project.id, view.id)).range).toEqual({ last: '24h' });
    await client.deleteView(project.id, view.id);
    expect((await client.listViews(project.id)).data).toEqual([]);

    const rule = await client.createAlert({ projectId: project.id, name: 'errors', condition: { level: 'error', threshold: 5, window: '5m' }, channels: ['email'] });
    expect((await client.updateAlert(rule.id, { enabled: false })).enabled).toBe(false);
    expect((await client.listAlerts({ projectId: project.id })).data.map((r) => r.id)).toEqual([rule.id]);
    expect((await client.alertHistory(rule.id, { limit: 5 })).data).toEqual([]);
    await client.deleteAlert(rule.id);
    expect((await client.vapidPublicKey()).publicKey.length).toBeGreaterThan(40);
    expect((await client.listPushSubscriptions()).data).toEqual([]);

    // An expired access token is refreshed once, and the new tokens are handed over.
    s.clock.advance(16 * 60_000);
    expect((await client.getProject(project.id)).name).toBe('renamed');
    expect(saved.length).toBeGreaterThanOrEqual(2);
    for (const t of saved) ISSUED_SECRETS.add(t);

    const rotated = await client.rotateProjectKey(project.id);
    ISSUED_SECRETS.add(rotated.apiKey);
    const refused = await client.ingestLogs({ message: 'old key' }, { apiKey: project.apiKey }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LoglaneError);
    expect((refused as LoglaneError).code).toBe('INVALID_API_KEY');
    const otlp = await client.otlpExportLogs({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 'via otlp' } }] }] }] } as never, { apiKey: rotated.apiKey });
    expect(otlp).toEqual({});

    await client.deleteProject(project.id);
    const gone = await client.getProject(project.id).catch((e: unknown) => e);
    expect((gone as LoglaneError).status).toBe(404);
    await client.logout();
    expect(client.accessToken).toBeUndefined();
  });
});
