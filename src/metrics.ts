import client from 'prom-client';

/**
 * The service's Prometheus metrics, on a registry of its own (so several apps in one process, as in
 * the tests, keep theirs apart). Served at GET /metrics in the text exposition format.
 */
export function createMetrics(sources: { queuedLogs: () => number; openTails: () => number; storeBytes: () => Promise<{ rows: number; packs: number; index: number }> }) {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'loglane_' });
  const ingestRequests = new client.Counter({
    name: 'loglane_ingest_requests_total',
    help: 'Ingest requests answered, by endpoint (logs: POST /v1/logs, otlp: POST /v1/otlp/v1/logs, elasticsearch: POST /es/_bulk, loki: POST /loki/api/v1/push, hec: POST /services/collector/…) and HTTP status.',
    labelNames: ['endpoint', 'status'] as const,
    registers: [registry],
  });
  const logsAccepted = new client.Counter({ name: 'loglane_logs_accepted_total', help: 'Logs durably stored.', labelNames: ['endpoint'] as const, registers: [registry] });
  const logsRejected = new client.Counter({ name: 'loglane_logs_rejected_total', help: 'Logs refused for their content (listed in the answer as rejected).', labelNames: ['endpoint'] as const, registers: [registry] });
  const ingestDuration = new client.Histogram({
    name: 'loglane_ingest_batch_duration_seconds',
    help: 'Time from an ingest request (POST /v1/logs or OTLP) arriving to its answer once its logs are committed, for successful requests.',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  new client.Gauge({
    name: 'loglane_ingest_queue_logs',
    help: 'Logs accepted by this node and waiting for their commit.',
    registers: [registry],
    collect() {
      this.set(sources.queuedLogs());
    },
  });
  new client.Gauge({
    name: 'loglane_live_tails_open',
    help: 'Live tails open on this node.',
    registers: [registry],
    collect() {
      this.set(sources.openTails());
    },
  });
  new client.Gauge({
    name: 'loglane_store_bytes',
    help: 'Bytes the logs take on disk, by part: logs still in rows (estimated), packs (compressed blocks) and the skip index; at most a minute old.',
    labelNames: ['part'] as const,
    registers: [registry],
    async collect() {
      const bytes = await sources.storeBytes();
      for (const part of ['rows', 'packs', 'index'] as const) this.set({ part }, bytes[part]);
    },
  });
  const alertFirings = new client.Counter({ name: 'loglane_alert_firings_total', help: 'Alert rules fired (claimed by this node).', registers: [registry] });
  const deliveries = new client.Counter({
    name: 'loglane_alert_deliveries_total',
    help: 'Alert notifications finished, by channel and outcome (sent, failed, skipped); retries are not counted until they end.',
    labelNames: ['channel', 'status'] as const,
    registers: [registry],
  });
  const syslogMessages = new client.Counter({ name: 'loglane_syslog_messages_total', help: 'Syslog messages received, by transport (tcp, udp, tls).', labelNames: ['transport'] as const, registers: [registry] });
  const syslogRejected = new client.Counter({
    name: 'loglane_syslog_rejected_total',
    help: 'Syslog messages not stored, by reason: no_key (none in the message and no SYSLOG_DEFAULT_KEY), bad_key, bad_key_element (a loglane element that does not read as one), refused (the log failed its checks), dropped (UDP over the plan rate or a bound, the server overloaded or stopping, or left by a closed connection past its wait), address_rate (datagrams over one address\'s rate, dropped before they are read).',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  return { registry, ingestRequests, logsAccepted, logsRejected, ingestDuration, alertFirings, deliveries, syslogMessages, syslogRejected };
}

export type Metrics = ReturnType<typeof createMetrics>;
