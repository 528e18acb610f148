import { useState } from 'react';
import { CopyButton } from './ui.tsx';

/** Ready-to-paste ways to send a first log, with this server's address filled in. */
export function SendFirstLog({ apiKey }: { apiKey: string | null }) {
  const base = location.origin;
  const key = apiKey ?? '$LOGLANE_API_KEY';
  const tabs = {
    curl: {
      label: 'curl',
      code: `curl -X POST ${base}/v1/logs \\
  -H "X-API-Key: ${key}" \\
  -H "Content-Type: application/json" \\
  -d '{"level": "info", "message": "Hello from curl", "source": "shell", "metadata": {"user": "me"}}'`,
    },
    node: {
      label: 'Node.js',
      code: `// Node 18+: batch your logs and send them as an array (up to 10,000 per request).
await fetch('${base}/v1/logs', {
  method: 'POST',
  headers: { 'X-API-Key': process.env.LOGLANE_API_KEY ?? '${key}', 'Content-Type': 'application/json' },
  body: JSON.stringify([
    { level: 'info', message: 'Server started', source: 'api', metadata: { port: 3000 } },
  ]),
});`,
    },
    pino: {
      label: 'pino',
      code: `// npm install pino @loglane/pino
import pino from 'pino';

const logger = pino(pino.transport({
  target: '@loglane/pino',
  options: { url: '${base}', apiKey: process.env.LOGLANE_API_KEY ?? '${key}', source: 'my-service' },
}));
logger.info({ port: 3000 }, 'Server started');`,
    },
    otlp: {
      label: 'OpenTelemetry',
      code: `# Any OpenTelemetry SDK or Collector: logs go to ${base}/v1/otlp/v1/logs
OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=${base}/v1/otlp/v1/logs
OTEL_EXPORTER_OTLP_HEADERS=x-api-key=${key}
OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf
# service.name becomes the source, severity the level, attributes the metadata.`,
    },
    elasticsearch: {
      label: 'Filebeat / Logstash',
      code: `# Anything that writes to Elasticsearch: point it at ${base}/es with the key as its API key.
# filebeat.yml
output.elasticsearch:
  hosts: ["${base}"]
  path: "/es"
  api_key: "loglane:${key}"
setup.ilm.enabled: false
setup.template.enabled: false`,
    },
    loki: {
      label: 'Promtail / Loki',
      code: `# Anything that pushes to Grafana Loki: ${base} is its Loki, the key its password.
# promtail.yaml
clients:
  - url: ${base}/loki/api/v1/push
    basic_auth:
      username: loglane
      password: ${key}`,
    },
    hec: {
      label: 'Splunk HEC',
      code: `# Anything that sends to a Splunk HTTP Event Collector: the key is the token.
docker run --log-driver=splunk \\
  --log-opt splunk-url=${base} \\
  --log-opt splunk-token=${key} \\
  --log-opt splunk-format=raw \\
  my-image`,
    },
    syslog: {
      label: 'syslog',
      code: `# The server's syslog listeners are off until SYSLOG_TCP_PORT (or _UDP_, _TLS_) is set.
# The key goes in the message's structured data:
logger --server ${location.hostname} --port 6514 --tcp --octet-count --rfc5424 \\
  --sd-id loglane@53595 --sd-param 'key="${key}"' --tag my-app 'Hello from syslog'`,
    },
    ndjson: {
      label: 'NDJSON file',
      code: `# One JSON log per line; gzip is welcome.
gzip -c app.ndjson | curl -X POST ${base}/v1/logs \\
  -H "X-API-Key: ${key}" \\
  -H "Content-Type: application/x-ndjson" \\
  -H "Content-Encoding: gzip" \\
  --data-binary @-`,
    },
  } as const;
  type Tab = keyof typeof tabs;
  const [tab, setTab] = useState<Tab>('curl');
  const ids = Object.keys(tabs) as Tab[];
  return (
    <section className="card" aria-labelledby="first-log-heading">
      <h2 id="first-log-heading">Send your first log</h2>
      {!apiKey && <p className="muted">Reveal the key above to put it into these snippets, or set <code>LOGLANE_API_KEY</code> in your shell.</p>}
      <div role="tablist" aria-label="Ways to send logs" className="tabs">
        {ids.map((id) => (
          <button
            key={id}
            type="button"
            role="tab"
            id={`snippet-tab-${id}`}
            aria-selected={tab === id}
            aria-controls={`snippet-panel-${id}`}
            tabIndex={tab === id ? 0 : -1}
            onClick={() => setTab(id)}
            onKeyDown={(e) => {
              if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
              const next = ids[(ids.indexOf(tab) + (e.key === 'ArrowRight' ? 1 : ids.length - 1)) % ids.length]!;
              setTab(next);
              document.getElementById(`snippet-tab-${next}`)?.focus();
            }}
          >
            {tabs[id].label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`snippet-panel-${tab}`} aria-labelledby={`snippet-tab-${tab}`} className="snippet">
        <pre tabIndex={0}>
          <code>{tabs[tab].code}</code>
        </pre>
        <CopyButton text={tabs[tab].code} />
      </div>
      <p className="muted small">
        Levels: trace, debug, info, warn, error, fatal. Timestamps default to the time of receipt. The full API is described at <a href="/docs">/docs</a>; every shipper's mapping and more recipes are in the project's docs/integrations.md.
      </p>
    </section>
  );
}
