import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.js';
import type { Database } from './db/connect.js';
import { createAccountsService } from './features/accounts/service.js';
import { createAccessTokens } from './features/accounts/tokens.js';
import { liveSessions } from './features/accounts/sessions.js';
import { EvaluationQueue } from './features/alerts/evaluation-queue.js';
import { createAlertsService } from './features/alerts/service.js';
import { createChannels } from './features/notifications/channels.js';
import { compilePattern } from './features/logs/filter.js';
import { parseQuery } from './features/logs/query/index.js';
import { createDestinationsService } from './features/notifications/destinations.js';
import { createViewsService } from './features/views/service.js';
import { createIndexBuilder } from './features/logs/store/blocks/builder.js';
import { createCompactor } from './features/logs/store/packs/compactor.js';
import { createCommitFanOut } from './features/logs/live/commits.js';
import { createIngest } from './features/logs/ingest/ingest.js';
import { IngestQueue } from './features/logs/ingest/ingest-queue.js';
import { IngestRateLimiter } from './features/logs/ingest/rate-limit.js';
import { createLogReader } from './features/logs/read/reader.js';
import { createRetention } from './features/logs/retention.js';
import { createSearch } from './features/logs/read/search.js';
import { createLogsService } from './features/logs/service.js';
import { createFacets } from './features/logs/read/facets.js';
import { createContext } from './features/logs/read/context.js';
import { createStats } from './features/logs/read/stats.js';
import { TailHub } from './features/logs/live/tail.js';
import { createTails } from './features/logs/live/tails.js';
import { createMailer } from './features/notifications/email.js';
import { createOutbox } from './features/notifications/outbox.js';
import { createPushService } from './features/notifications/push-service.js';
import { forgetRecipient } from './features/notifications/repository.js';
import { loadVapidKeys, type VapidKeys } from './features/notifications/vapid.js';
import { createProjectsService } from './features/projects/service.js';
import { createMembersService } from './features/projects/members.js';
import { requireUser } from './http/auth.js';
import { createMetrics } from './metrics.js';
import { createSyslogListeners } from './features/logs/syslog-listeners.js';
import { deriveKey } from './secrets.js';

export interface Clock {
  now(): number;
}

/** The one place where repositories, services and hooks are wired together. */
export function createServices(deps: { config: Config; database: Database; secretKey: string; clock: Clock; log: FastifyBaseLogger }) {
  const { config, database, secretKey, clock, log } = deps;
  const db = database.db;
  const now = () => clock.now();
  const tokens = createAccessTokens(deriveKey(secretKey, 'jwt-signing'), config.accessTokenTtlMs, now);
  const mailer = config.smtpUrl ? createMailer(config.smtpUrl, config.alertEmailFrom) : undefined;
  // The log store is made below; a deletion asks it only once the server runs.
  const projects = createProjectsService({ db, encryptionKey: deriveKey(secretKey, 'api-key-encryption'), checksumKey: deriveKey(secretKey, 'api-key-checksum'), now, purgeLogs: (projectId) => store.purgeProject(projectId), storedBytes: (ids) => store.storedBytes(ids) });
  const members = createMembersService({ db, now, log, projects, mailer, publicUrl: config.publicUrl, invitationsPerSenderPerHour: config.invitationsPerSenderPerHour });
  const accounts = createAccountsService({
    db,
    config,
    tokens,
    now,
    log,
    mailer,
    removeOwnedProjects: (userId) => projects.removeOwnedBy(userId),
    forgetInvitationsTo: (email) => members.forgetInvitationsTo(email),
    forgetAsRecipient: (userId) => forgetRecipient(db, userId),
    // This node's tails of the account end at once; other nodes' at their next check.
    onAccountDeleted: (userId) => hub.closeWhere((_, a) => a.userId === userId, 'the account was deleted'),
  });

  // The logs slice: the engine's log store (made where the database was opened), commits fanned out
  // to this node's tails and to the alert evaluator, and search, stats, tails and retention over it.
  const store = database.createLogStore({ config, now, log });
  const hub = new TailHub(store, log, now);
  // A deleted project's tails end at once on this node; on other nodes, at their next check.
  projects.onDeleted((projectId) => hub.closeWhere((p) => p === projectId, 'the project was deleted'));
  members.onRemoved((projectId, userId) => hub.closeWhere((p, a) => p === projectId && a.userId === userId, 'you are no longer a member of this project'));
  const commits = createCommitFanOut(hub, log);
  const queue = new IngestQueue(store.writer, {
    maxQueuedLogs: config.ingestQueueLimit,
    maxQueuedBytes: config.ingestQueueMaxBytes,
    maxLogsPerCommit: config.ingestCommitMaxLogs,
    maxBytesPerCommit: config.ingestCommitMaxBytes,
    maxInFlightBytesPerProject: config.ingestProjectInflightBytes,
    onCommit: commits.committed,
    isUnavailable: (err) => store.isUnavailable(err),
    log,
  });
  const reader = createLogReader(store, config);
  // The plan's ingest rate, per project: taken by the ingest path for logs, and by the shipper
  // routes for their protocol items that are not logs (delete actions, empty streams).
  const ingestRate = new IngestRateLimiter(config.ingestRates, now);
  const search = createSearch({ store, reader, config, projects });
  const stats = createStats({ store, reader, config, now, projects });
  const logs = createLogsService({
    config,
    log,
    store,
    queue,
    hub,
    commits,
    reader,
    indexBuilder: createIndexBuilder(store, { blockLogs: config.indexBlockLogs, intervalMs: config.indexIntervalMs, log }),
    compactor: createCompactor(store, { compactAfterMs: config.compactAfterMs ?? 0, intervalMs: config.indexIntervalMs, now, log }),
    ingest: createIngest({ db, queue, limiter: ingestRate, now }),
    search,
    stats,
    facets: createFacets({ eachMatching: stats.eachMatching, config, now, projects }),
    context: createContext({ search, store, reader, projects }),
    tails: createTails({ hub, config, now, log, projects, liveSessions: (ids) => liveSessions(db, ids, now()) }),
    retention: createRetention({ db, store, config, now, log }),
  });

  let vapidKeys: Promise<VapidKeys> | undefined;
  const vapid = () =>
    (vapidKeys ??= loadVapidKeys(db, { publicKey: config.vapidPublicKey, privateKey: config.vapidPrivateKey }).catch((err: unknown) => {
      vapidKeys = undefined;
      throw err;
    }));
  const metrics = createMetrics({ queuedLogs: () => logs.queue.queuedLogs, openTails: () => logs.openTails(), storeBytes: () => store.storeBytes() });
  const destinations = createDestinationsService({ db, now, encryptionKey: deriveKey(secretKey, 'webhook-secret-encryption'), config, projects });
  const channels = createChannels({ db, config, mailer, vapid, destinations, recipients: (projectId) => members.notified(projectId), now });
  const outbox = createOutbox({ db, config, now, log, mailer, channels, onFinished: (channel, status) => metrics.deliveries.inc({ channel, status }) });
  const alerts = createAlertsService({
    db,
    now,
    log,
    projects,
    onFired: () => {
      metrics.alertFirings.inc();
      outbox.kick();
    },
    addCounts: logs.addAlertCounts,
    channels,
    publicUrl: config.publicUrl,
    sampleOf: async (userId, rule, from, to) => {
      // A test is sent whatever the sample: a rule saved before a check it no longer passes has none.
      try {
        const filter = { from, to, levels: [rule.level], source: rule.source ?? undefined, pattern: rule.pattern === null ? undefined : compilePattern(rule.pattern), query: rule.query === null ? undefined : parseQuery(rule.query) };
        return (await logs.search(userId, rule.project_id, filter, 5, undefined)).data;
      } catch {
        return [];
      }
    },
  });
  const push = createPushService({ db, config, now, vapid });
  const views = createViewsService({ db, now, projects });

  // Every committed batch is checked against its project's rules, off the request's path; while
  // evaluation is more than a queue's worth of logs or bytes behind, ingestion answers 503, and a
  // project whose own logs are a quarter of that gets 429 (nothing is dropped).
  const evaluations = new EvaluationQueue(
    (work) => alerts.evaluate(work),
    (err) => log.error({ err }, 'alert evaluation failed'),
  );
  logs.onCommit((projectId, rows) => {
    if (!alerts.surelyNoRules(projectId)) evaluations.add(projectId, rows());
  });
  // Silence alerts, recovery and reminders are decided on the clock too, not only on ingest.
  // Syslog: off until a port is set; stored through the same ingest path as the HTTP endpoints.
  const syslog = createSyslogListeners({ config: config.syslog, logs, projects, metrics, log, now });
  /** The ports the syslog listeners took (a configured port of 0 takes a free one): tests read them. */
  const syslogPorts: { tcp?: number; udp?: number; tls?: number } = {};
  const alertClock = everyInterval(config.alertClockMs, () => alerts.tick(), (err) => log.error({ err }, 'alert evaluation on the clock failed'));
  logs.queue.shedWhen((projectId) => evaluations.pressure(projectId, { logs: config.ingestQueueLimit, bytes: config.ingestQueueMaxBytes }));

  return {
    /** The log store; the HTTP error mapper asks it which database errors are worth a retry. */
    store,
    tokens,
    accounts,
    projects,
    members,
    logs,
    ingestRate,
    alerts,
    destinations,
    views,
    push,
    outbox,
    metrics,
    requireUser: requireUser(tokens, (userId) => accounts.exists(userId)),
    /** Resolves when every log committed so far has been checked against the alert rules (tests wait on it). */
    alertsCaughtUp: () => evaluations.drain(),
    tailHeartbeatMs: config.tailHeartbeatMs,

    syslogPorts,
    /** The syslog listeners' open connections and held bytes (tests check the bound). */
    syslogStats: () => syslog.stats(),

    async start(): Promise<void> {
      await projects.start();
      await logs.start();
      Object.assign(syslogPorts, await syslog.start());
      await vapid();
      if (!mailer) log.warn('SMTP_URL is not set: email alert deliveries will be recorded as skipped');
      outbox.start();
      alertClock.start();
    },

    /** Commits what waits, finishes the alert checks it causes, then stops delivering. */
    async stop(): Promise<void> {
      // Syslog stops reading and commits what it received; queued logs commit, then their alert
      // checks finish (on SQLite they write through the log writer), then the writer stops.
      await syslog.stop();
      await alertClock.stop();
      await logs.drain();
      await evaluations.drain();
      await logs.close();
      await outbox.stop();
    },
  };
}

export type Services = ReturnType<typeof createServices>;

/** Runs `work` every `ms` (never two at once: a round that overruns delays the next); stop() waits for the round under way. */
function everyInterval(ms: number, work: () => Promise<void>, onError: (err: unknown) => void) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const round = () => {
    running ??= work()
      .catch(onError)
      .finally(() => {
        running = undefined;
      });
  };
  return {
    start() {
      timer = setInterval(round, ms);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
