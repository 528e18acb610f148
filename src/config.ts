import path from 'node:path';
import { formatDuration, parseDuration } from './duration.js';
import { DEFAULT_INGEST_RATES, PLAN_NAMES, type PlanName } from './features/plans/plans.js';

export type Engine = 'sqlite' | 'postgres';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly engine: Engine;
  /** PostgreSQL connection string; undefined on SQLite. */
  readonly databaseUrl: string | undefined;
  readonly databasePoolSize: number;
  /** Where SQLite keeps its file and the generated secret key. */
  readonly dataDir: string;
  /** SECRET_KEY as given; on SQLite it may be absent and is then generated into dataDir. */
  readonly secretKey: string | undefined;
  readonly accessTokenTtlMs: number;
  readonly refreshTokenTtlMs: number;
  readonly loginMaxAttempts: number;
  readonly loginMaxAttemptsPerIp: number;
  readonly loginWindowMs: number;
  /** Accounts one client address (an IPv6 client's /64) may create per signupWindowMs. */
  readonly signupMaxPerIp: number;
  readonly signupWindowMs: number;
  readonly defaultPlan: PlanName;
  readonly logLevel: string;
  readonly trustProxy: boolean;
  readonly shutdownTimeoutMs: number;
  /** Logs that may wait for a commit before ingestion answers 503 OVERLOADED. */
  readonly ingestQueueLimit: number;
  /** The most logs one ingest transaction takes (group commit). */
  readonly ingestCommitMaxLogs: number;
  /** Bytes of logs (message, source, metadata) that may wait for a commit, all projects together. */
  readonly ingestQueueMaxBytes: number;
  /** The most bytes of logs one ingest transaction takes (group commit); a lone larger request still goes alone. */
  readonly ingestCommitMaxBytes: number;
  readonly queryBudgetMs: number;
  /** A search page whose client reads nothing of it for this long is ended (its connection closed). */
  readonly pageStallMs: number;
  /** The skip index (src/features/logs/store/blocks/): built in the background; searches use it unless off. */
  readonly searchIndex: boolean;
  /** Logs per block of the skip index. */
  readonly indexBlockLogs: number;
  /** How often the index builder looks for logs to summarise. */
  readonly indexIntervalMs: number;
  /** Logs received longer ago than this are packed (stored compressed); undefined: never (COMPACT_AFTER=off). */
  readonly compactAfterMs: number | undefined;
  /** How often alert rules are evaluated on the clock (silence alerts, recovery, reminders). */
  readonly alertClockMs: number;
  /** The syslog listeners (docs/integrations.md, "Syslog"): each off (undefined) until its port is set. */
  readonly syslog: {
    host: string;
    tcpPort: number | undefined;
    udpPort: number | undefined;
    tlsPort: number | undefined;
    tlsCert: string | undefined;
    tlsKey: string | undefined;
    /** The project key of messages that carry none in their structured data. */
    defaultKey: string | undefined;
  };
  /** Request-body bytes one project may have in flight at once (past that, 429). */
  readonly ingestProjectInflightBytes: number;
  /** groupBy: distinct values one stats request counts by name (further ones count under "(other)"). */
  readonly groupByMaxValues: number;
  readonly maxTailsPerUser: number;
  /** Live tails open at once on this node, all users together. */
  readonly maxTails: number;
  /** Live tails open at once on this node from one client address (an IPv6 client's /64). */
  readonly maxTailsPerIp: number;
  /** Invitations (each a mail) one user may send per hour, from all their projects together. */
  readonly invitationsPerSenderPerHour: number;
  readonly tailHeartbeatMs: number;
  /** Logs per second per project, per plan (0: no limit). */
  readonly ingestRates: Readonly<Record<PlanName, number>>;
  /** Days of logs kept per plan. */
  readonly retentionDays: Readonly<Record<PlanName, number>>;
  readonly retentionIntervalMs: number;
  /** Where links in notifications point, without a trailing slash. */
  readonly publicUrl: string;
  /** smtp(s)://user:pass@host:port; undefined disables email (deliveries are `skipped`). */
  readonly smtpUrl: string | undefined;
  readonly alertEmailFrom: string;
  /** VAPID keys (base64url); generated once and kept in the database when unset. */
  readonly vapidPublicKey: string | undefined;
  /** When set, GET /metrics asks for `Authorization: Bearer <METRICS_TOKEN>`. */
  readonly metricsToken: string | undefined;
  readonly vapidPrivateKey: string | undefined;
  readonly vapidSubject: string;
  /** Origins (`https://host`) or host patterns (`https://*.push.apple.com`) push endpoints may have. */
  readonly pushAllowedOrigins: readonly string[];
  /** Origins webhook and Slack destinations may use without the private-network checks (http included). */
  readonly webhookAllowedOrigins: readonly string[];
  readonly deliveryMaxAttempts: number;
  readonly deliveryRetryBaseMs: number;
}

export const DEFAULT_PUSH_ORIGINS = [
  'https://fcm.googleapis.com',
  'https://updates.push.services.mozilla.com',
  'https://*.push.services.mozilla.com',
  'https://*.notify.windows.com',
  'https://*.push.apple.com',
];

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Loglane cannot start, the settings have ${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Reads every setting from the environment once, checks them all, and either returns a frozen
 * Config or throws a ConfigError that lists every problem at once.
 */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const value = (name: string) => {
    const v = env[name]?.trim();
    return v === '' ? undefined : v;
  };

  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min || n > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return n;
  };

  const duration = (name: string, fallback: string, minMs: number, maxMs: number): number => {
    const raw = value(name) ?? fallback;
    const ms = parseDuration(raw);
    if (ms === undefined || ms < minMs || ms > maxMs) {
      problems.push(`${name} must be a duration such as 900, 900s, 15m, 12h or 7d (a number alone is seconds), between ${formatDuration(Math.max(1000, minMs))} and ${formatDuration(maxMs)} (got "${raw}")`);
      return parseDuration(fallback)!;
    }
    return ms;
  };

  const boolean = (name: string, fallback: boolean): boolean => {
    const raw = value(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
    if (['0', 'false', 'no', 'off'].includes(raw)) return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  };

  function url(name: string, fallback: string): string {
    const raw = value(name) ?? fallback;
    try {
      const u = new URL(raw);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
      return raw.replace(/\/+$/, '');
    } catch {
      problems.push(`${name} must be an http(s) URL such as https://logs.example.com (got "${raw}")`);
      return fallback;
    }
  }

  function smtp(): string | undefined {
    const raw = value('SMTP_URL');
    if (raw !== undefined && !/^smtps?:\/\//.test(raw)) problems.push('SMTP_URL must start with smtp:// or smtps:// (for example smtp://user:pass@mail.example.com:587)');
    return raw;
  }

  function vapidSubject(): string {
    const raw = value('VAPID_SUBJECT') ?? 'mailto:admin@localhost';
    if (!/^(mailto:|https:\/\/)/.test(raw)) problems.push('VAPID_SUBJECT must be a mailto: or https:// URL (RFC 8292)');
    return raw;
  }

  function webhookOrigins(): string[] {
    const raw = value('WEBHOOK_ALLOWED_ORIGINS');
    if (raw === undefined) return [];
    const list = raw.split(',').map((o) => o.trim().replace(/\/+$/, '')).filter(Boolean);
    for (const o of list) if (!/^https?:\/\/[a-z0-9.-]+(:\d+)?$/i.test(o) && !/^https?:\/\/\[[0-9a-f:.]+\](:\d+)?$/i.test(o)) problems.push(`WEBHOOK_ALLOWED_ORIGINS: "${o}" is not an origin such as http://127.0.0.1:8080 or https://hooks.internal`);
    return list;
  }

  function origins(): string[] {
    const raw = value('PUSH_ALLOWED_ORIGINS');
    if (raw === undefined) return DEFAULT_PUSH_ORIGINS;
    const list = raw.split(',').map((o) => o.trim().replace(/\/+$/, '')).filter(Boolean);
    for (const o of list) if (!/^https?:\/\/(\*\.)?[a-z0-9.-]+(:\d+)?$/i.test(o)) problems.push(`PUSH_ALLOWED_ORIGINS: "${o}" is not an origin such as https://fcm.googleapis.com or https://*.push.apple.com`);
    return list;
  }

  const databaseUrl = value('DATABASE_URL');
  let engine: Engine = 'sqlite';
  if (databaseUrl !== undefined) {
    if (/^postgres(ql)?:\/\//.test(databaseUrl)) engine = 'postgres';
    else problems.push('DATABASE_URL must start with postgres:// or postgresql:// (leave it unset to use SQLite)');
  }

  const secretKey = value('SECRET_KEY');
  if (secretKey !== undefined && secretKey.length < 32) {
    problems.push('SECRET_KEY must be at least 32 characters (for example the output of `openssl rand -hex 32`)');
  }
  if (secretKey === undefined && engine === 'postgres') {
    problems.push('SECRET_KEY is required with PostgreSQL, and every node must share it (for example `openssl rand -hex 32`)');
  }

  const defaultPlan = (value('DEFAULT_PLAN') ?? 'free').toLowerCase();
  if (!(PLAN_NAMES as readonly string[]).includes(defaultPlan)) {
    problems.push(`DEFAULT_PLAN must be one of ${PLAN_NAMES.join(', ')} (got "${defaultPlan}")`);
  }

  const logLevel = (value('LOG_LEVEL') ?? 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`);

  const port = integer('PORT', 8080, 0, 65_535);
  const config: Config = {
    port,
    host: value('HOST') ?? '0.0.0.0',
    engine,
    databaseUrl: engine === 'postgres' ? databaseUrl : undefined,
    databasePoolSize: integer('DATABASE_POOL_SIZE', 10, 1, 500),
    dataDir: path.resolve(value('DATA_DIR') ?? './data'),
    secretKey,
    accessTokenTtlMs: duration('ACCESS_TOKEN_EXPIRY', '15m', 1_000, 86_400_000),
    refreshTokenTtlMs: duration('REFRESH_TOKEN_EXPIRY', '7d', 1_000, 365 * 86_400_000),
    loginMaxAttempts: integer('LOGIN_MAX_ATTEMPTS', 10, 1, 1_000_000),
    loginMaxAttemptsPerIp: integer('LOGIN_MAX_ATTEMPTS_PER_IP', 100, 1, 1_000_000),
    loginWindowMs: duration('LOGIN_WINDOW', '15m', 1_000, 7 * 86_400_000),
    signupMaxPerIp: integer('SIGNUP_MAX_PER_IP', 50, 1, 1_000_000),
    signupWindowMs: duration('SIGNUP_WINDOW', '1h', 1_000, 7 * 86_400_000),
    defaultPlan: defaultPlan as PlanName,
    logLevel,
    trustProxy: boolean('TRUST_PROXY', false),
    shutdownTimeoutMs: duration('SHUTDOWN_TIMEOUT', '25s', 1_000, 3_600_000),
    ingestQueueLimit: integer('INGEST_QUEUE_LIMIT', 200_000, 10_000, 10_000_000),
    ingestCommitMaxLogs: integer('INGEST_COMMIT_MAX_LOGS', 20_000, 1_000, 1_000_000),
    ingestQueueMaxBytes: integer('INGEST_QUEUE_MAX_BYTES', 256 * 1024 * 1024, 16 * 1024 * 1024, 64 * 1024 * 1024 * 1024),
    ingestCommitMaxBytes: integer('INGEST_COMMIT_MAX_BYTES', 16 * 1024 * 1024, 1024 * 1024, 1024 * 1024 * 1024),
    queryBudgetMs: duration('QUERY_TIME_BUDGET', '5s', 1_000, 600_000),
    pageStallMs: duration('PAGE_STALL_TIMEOUT', '30s', 1_000, 600_000),
    searchIndex: boolean('SEARCH_INDEX', true),
    indexBlockLogs: integer('INDEX_BLOCK_LOGS', 4096, 16, 1_000_000),
    indexIntervalMs: duration('INDEX_INTERVAL', '1s', 1_000, 3_600_000),
    compactAfterMs: value('COMPACT_AFTER')?.trim().toLowerCase() === 'off' ? undefined : duration('COMPACT_AFTER', '10m', 0, 365 * 86_400_000),
    alertClockMs: duration('ALERT_CLOCK_INTERVAL', '5s', 1_000, 10_000),
    syslog: {
      host: value('SYSLOG_HOST') ?? value('HOST') ?? '0.0.0.0',
      tcpPort: value('SYSLOG_TCP_PORT') === undefined ? undefined : integer('SYSLOG_TCP_PORT', 0, 0, 65_535),
      udpPort: value('SYSLOG_UDP_PORT') === undefined ? undefined : integer('SYSLOG_UDP_PORT', 0, 0, 65_535),
      tlsPort: value('SYSLOG_TLS_PORT') === undefined ? undefined : integer('SYSLOG_TLS_PORT', 0, 0, 65_535),
      tlsCert: value('SYSLOG_TLS_CERT'),
      tlsKey: value('SYSLOG_TLS_KEY'),
      defaultKey: value('SYSLOG_DEFAULT_KEY'),
    },
    ingestProjectInflightBytes: integer('INGEST_PROJECT_INFLIGHT_BYTES', 16 * 1024 * 1024, 1024 * 1024, 64 * 1024 * 1024 * 1024),
    groupByMaxValues: integer('GROUP_BY_MAX_VALUES', 10_000, 10, 1_000_000),
    maxTailsPerUser: integer('MAX_TAILS_PER_USER', 5, 1, 1_000),
    maxTails: integer('MAX_TAILS', 1_000, 1, 1_000_000),
    maxTailsPerIp: integer('MAX_TAILS_PER_IP', 100, 1, 1_000_000),
    invitationsPerSenderPerHour: integer('INVITATIONS_PER_SENDER_PER_HOUR', 20, 1, 1_000_000),
    tailHeartbeatMs: duration('TAIL_HEARTBEAT', '15s', 1_000, 3_600_000),
    ingestRates: Object.fromEntries(PLAN_NAMES.map((p) => [p, integer(`INGEST_RATE_${p.toUpperCase()}`, DEFAULT_INGEST_RATES[p], 0, 100_000_000)])) as Record<PlanName, number>,
    retentionDays: {
      free: integer('RETENTION_DAYS_FREE', 7, 1, 36_500),
      starter: integer('RETENTION_DAYS_STARTER', 30, 1, 36_500),
      pro: integer('RETENTION_DAYS_PRO', 90, 1, 36_500),
      enterprise: integer('RETENTION_DAYS_ENTERPRISE', 365, 1, 36_500),
    },
    retentionIntervalMs: duration('RETENTION_INTERVAL', '10m', 1_000, 7 * 86_400_000),
    publicUrl: url('PUBLIC_URL', `http://localhost:${port}`),
    smtpUrl: smtp(),
    alertEmailFrom: value('ALERT_EMAIL_FROM') ?? 'Loglane <alerts@localhost>',
    vapidPublicKey: value('VAPID_PUBLIC_KEY'),
    metricsToken: value('METRICS_TOKEN'),
    vapidPrivateKey: value('VAPID_PRIVATE_KEY'),
    vapidSubject: vapidSubject(),
    pushAllowedOrigins: origins(),
    webhookAllowedOrigins: webhookOrigins(),
    deliveryMaxAttempts: integer('DELIVERY_MAX_ATTEMPTS', 5, 1, 100),
    deliveryRetryBaseMs: duration('DELIVERY_RETRY_BASE', '2s', 1_000, 3_600_000),
  };
  if ((config.vapidPublicKey === undefined) !== (config.vapidPrivateKey === undefined)) {
    problems.push('VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY go together: set both, or neither to have a pair generated');
  }

  if (config.syslog.tlsPort !== undefined && (config.syslog.tlsCert === undefined || config.syslog.tlsKey === undefined)) {
    problems.push('SYSLOG_TLS_PORT needs SYSLOG_TLS_CERT and SYSLOG_TLS_KEY (PEM files of the listener\'s certificate and key)');
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}
