/**
 * GET /metrics, scraped and read with a Prometheus text-format parser after real traffic: ingest
 * (plain and OTLP), a live tail, an alert firing and its deliveries.
 */
import { createRequire } from 'node:module';
import { expect, it } from 'vitest';
import { createProject, describeEngines, errorOf, ingest, openTail, useAccount, useServer, waitFor } from './harness.js';

interface Family {
  name: string;
  type: string;
  help: string;
  metrics: Array<{ value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string; sum?: string }>;
}
const parsePrometheus = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => Family[];

describeEngines('metrics', (engine) => {
  const s = useServer(engine, { env: { METRICS_TOKEN: 'scrape-secret-123' } });
  const account = useAccount(s, { plan: 'pro' });

  async function scrape(): Promise<Map<string, Family>> {
    const res = await fetch(`${s.url}/metrics`, { headers: { authorization: 'Bearer scrape-secret-123' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return new Map(parsePrometheus(await res.text()).map((f) => [f.name, f]));
  }

  function value(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
    const family = families.get(name);
    if (!family) throw new Error(`no metric ${name}`);
    const sample = family.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
    return Number(sample?.value ?? sample?.count ?? 0);
  }

  it('asks for the token when METRICS_TOKEN is set', async () => {
    const none = await s.request('GET', '/metrics');
    expect(none.status).toBe(401);
    expect(errorOf(none).code).toBe('UNAUTHORIZED');
    const wrong = await s.request('GET', '/metrics', { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
  });

  it('counts ingest requests, logs accepted and rejected, batch latency, tails, firings and deliveries', async () => {
    const before = await scrape();
    const project = await createProject(s, account, 'metrics');
    const tail = await openTail(s, account.accessToken, project.id);
    const ok = await ingest(s, project.apiKey, [{ message: 'a' }, { message: 'b' }, { level: 'nonsense', message: 'c' }]);
    expect(ok.status).toBe(202);
    expect((await ingest(s, project.apiKey, [{ nothing: 1 }, { nothing: 2 }])).status).toBe(400);
    expect((await ingest(s, 'llk_not_a_key', { message: 'x' })).status).toBe(401);
    const otlp = await fetch(`${s.url}/v1/otlp/v1/logs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': project.apiKey },
      body: JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 'otlp one' } }, { body: { stringValue: 'otlp two' } }] }] }] }),
    });
    expect(otlp.status).toBe(200);

    // No SMTP is configured here, so the email delivery ends as skipped.
    const rule = await s.request('POST', '/v1/alerts', { token: account.accessToken, body: { projectId: project.id, name: 'm', condition: { level: 'error', threshold: 2, window: '1m' }, channels: ['email'] } });
    expect(rule.status).toBe(201);
    expect((await ingest(s, project.apiKey, [{ level: 'error', message: 'e1' }, { level: 'error', message: 'e2' }])).status).toBe(202);

    // The firing and its delivery happen after the ingest's answer: wait until the delivery is counted.
    const skipped = (families: Map<string, Family>) => value(families, 'loglane_alert_deliveries_total', { channel: 'email', status: 'skipped' });
    const after = await waitFor(
      async () => {
        const now = await scrape();
        return skipped(now) > skipped(before) && now;
      },
      5000,
      'the skipped email delivery to be counted',
      100,
    );
    const diff = (name: string, labels: Record<string, string> = {}) => value(after, name, labels) - value(before, name, labels);

    expect(diff('loglane_ingest_requests_total', { endpoint: 'logs', status: '202' })).toBe(2);
    expect(diff('loglane_ingest_requests_total', { endpoint: 'logs', status: '400' })).toBe(1);
    expect(diff('loglane_ingest_requests_total', { endpoint: 'logs', status: '401' })).toBe(1);
    expect(diff('loglane_ingest_requests_total', { endpoint: 'otlp', status: '200' })).toBe(1);
    expect(diff('loglane_logs_accepted_total', { endpoint: 'logs' })).toBe(4);
    expect(diff('loglane_logs_rejected_total', { endpoint: 'logs' })).toBe(3);
    expect(diff('loglane_logs_accepted_total', { endpoint: 'otlp' })).toBe(2);
    expect(diff('loglane_alert_firings_total')).toBe(1);
    expect(diff('loglane_alert_deliveries_total', { channel: 'email', status: 'skipped' })).toBe(1);
    expect(value(after, 'loglane_live_tails_open')).toBe(1);
    expect(after.get('loglane_ingest_queue_logs')?.type).toBe('GAUGE');

    const histogram = after.get('loglane_ingest_batch_duration_seconds')!;
    expect(histogram.type).toBe('HISTOGRAM');
    const logsLatency = histogram.metrics[0]!;
    const latencyBefore = Number(before.get('loglane_ingest_batch_duration_seconds')?.metrics[0]?.count ?? 0);
    // Three successful ingest requests: two plain, one OTLP.
    expect(Number(logsLatency.count) - latencyBefore).toBe(3);
    expect(Number(logsLatency.buckets!['+Inf'])).toBe(Number(logsLatency.count));
    expect(Number(logsLatency.sum)).toBeGreaterThan(0);
    // The process metrics come along, prefixed.
    expect(after.has('loglane_process_resident_memory_bytes')).toBe(true);

    tail.close();
    // The server sees the tail's connection close a moment after the client drops it.
    await waitFor(async () => value(await scrape(), 'loglane_live_tails_open') === 0, 5000, 'the closed tail to leave loglane_live_tails_open', 100);
  });
});
