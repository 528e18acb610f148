import type { Generated, Kysely, Transaction } from 'kysely';

/**
 * The tables, as Kysely sees them. Every time is epoch milliseconds in a BIGINT column, so both
 * engines store, index and compare times the same way (PostgreSQL's int8 is parsed to a number).
 */
export interface UsersTable {
  id: string;
  email: string;
  password_hash: string;
  plan: string;
  plan_status: string;
  created_at: number;
  updated_at: number;
  /** Set when the account's deletion began (its projects are being purged); null otherwise. */
  deleting_since: number | null;
}

export interface RefreshTokensTable {
  id: string;
  user_id: string;
  /** Every token descended from one login shares the family id. */
  family_id: string;
  token_hash: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  revoked_at: number | null;
}

export interface LoginThrottleTable {
  /** `email:<address>` or `ip:<address>`. */
  key: string;
  window_start: number;
  failures: number;
  /** Password checks in flight (reserved, not yet failed or succeeded). */
  pending: Generated<number>;
}

export interface ProjectsTable {
  id: string;
  user_id: string;
  name: string;
  /** SHA-256 of the API key, for the lookup on the ingest path. */
  api_key_hash: string;
  /** AES-256-GCM of the API key, so the owner can see it again. */
  api_key_ciphertext: string;
  log_count: Generated<number>;
  /** The seq of the project's newest log. */
  last_seq: Generated<number>;
  created_at: number;
  updated_at: number;
}

export interface LogsTable {
  project_id: string;
  /** The log's number in its project, 1, 2, 3… in commit order (both engines, since migration 0008). */
  seq: number;
  ts: number;
  received_at: number;
  /** 0 trace … 5 fatal. */
  level: number;
  source: string | null;
  message: string;
  /** A JSON object, serialised. */
  metadata: string | null;
}

export interface AlertRulesTable {
  id: string;
  project_id: string;
  name: string;
  level: number;
  threshold: number;
  window_ms: number;
  source: string | null;
  pattern: string | null;
  /** A search query (the query language) the logs must match too, or null. */
  query: string | null;
  /** Comma-separated: `email`, `push`. */
  channels: string;
  cooldown_ms: number;
  /** 0 or 1. */
  enabled: number;
  last_triggered_at: number | null;
  created_at: number;
  updated_at: number;
  /** `ok` or `firing` (migration 0015). */
  state: string;
  state_since: number | null;
  /** `above` (count ≥ threshold) or `below` (count < threshold). */
  comparison: string;
  /** When the condition was last set (null: at created_at). */
  condition_at: number | null;
  /** While firing: since when evaluations have seen the condition false (null: not, or true since). */
  clear_since: number | null;
  muted_until: number | null;
}

/** Logs per project, minute (its first ms) and level: what stats over whole minutes read. */
export interface LogCountsTable {
  project_id: string;
  minute: number;
  level: number;
  n: number;
}

/** The per-minute rollup by level and source; '' stands for logs without a source. */
export interface LogSourceCountsTable {
  project_id: string;
  minute: number;
  level: number;
  source: string;
  n: number;
}

/** The skip index: one summary per block of a project's consecutive logs (migration 0012). */
export interface LogBlocksTable {
  project_id: string;
  first_seq: number;
  last_seq: number;
  min_ts: number;
  max_ts: number;
  level_mask: number;
  logs: number;
  buckets: number;
  /** The gram filter's buckets (migration 0014); 0: none. */
  gram_buckets: number;
  built_at: number;
  /** The size in bytes of the block's pack in log_packs (migration 0020); 0: its logs are rows in `logs`; -1: they stay rows for good (too large to pack: packs/statements.ts KEPT_IN_ROWS). */
  packed: number;
  /** Buckets per stored part of its filter (migration 0020): 64 for blocks summarised before, blocks/rows.ts PART_BUCKETS after. */
  part_buckets: number;
  /** The format its filter was built in (blocks/rows.ts INDEX_FORMAT; migration 0022, before which it was a filter row of its own). */
  format: number;
}

export interface LogPacksTable {
  project_id: string;
  first_seq: number;
  data: Uint8Array;
}

export interface LogBlockBloomsTable {
  project_id: string;
  first_seq: number;
  part: number;
  bits: Buffer;
}

export interface AlertDestinationsTable {
  id: string;
  project_id: string;
  /** `webhook` or `slack`. */
  type: string;
  name: string;
  url: string;
  /** A webhook's signing secret, sealed (secrets.ts seal, owner = id); null for Slack. */
  secret_sealed: string | null;
  created_at: number;
}

export interface SavedViewsTable {
  id: string;
  project_id: string;
  name: string;
  /** The name lower-cased: unique in its project (migration 0023). */
  name_key: string;
  query: string;
  /** JSON: {"last": "<duration>"} or {"from": ISO, "to": ISO}. */
  range: string;
  /** JSON: the column names, in order. */
  columns: string;
  group_by: string | null;
  created_by: string;
  created_at: number;
  updated_at: number;
}

export interface AlertCountsTable {
  rule_id: string;
  bucket: number;
  n: number;
}

export interface AlertHistoryTable {
  id: string;
  rule_id: string;
  project_id: string;
  triggered_at: number;
  matched_count: number;
  threshold: number;
  window_ms: number;
  /** JSON: Log[] */
  sample: string;
  /** `triggered` or `resolved` (migration 0015). */
  kind: string;
}

export interface AlertDeliveriesTable {
  id: string;
  history_id: string;
  channel: string;
  /** pending, sent, failed, skipped */
  status: string;
  attempts: number;
  next_attempt_at: number;
  locked_until: number | null;
  error: string | null;
  /** Channel-specific progress (JSON), e.g. the push subscriptions still to reach. */
  state: string | null;
  updated_at: number;
}

export interface PushSubscriptionsTable {
  id: string;
  user_id: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  created_at: number;
}

export interface ProjectMembersTable {
  project_id: string;
  user_id: string;
  /** `owner` (exactly one, the same user as projects.user_id), `admin` or `member`. */
  role: string;
  joined_at: number;
  /** 1: this member gets no alert notifications of the project. */
  notifications_muted: number;
}

export interface ProjectInvitationsTable {
  id: string;
  project_id: string;
  /** Normalised (trimmed, lower-cased): only this account may accept. */
  email: string;
  role: string;
  /** SHA-256 of the token mailed to the address. */
  token_hash: string;
  invited_by: string;
  created_at: number;
  expires_at: number;
  accepted_at: number | null;
}

export interface PasswordResetsTable {
  /** SHA-256 of the token mailed to the account. */
  token_hash: string;
  user_id: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** One login: a refresh-token family (its id is the family id and the access token's `sid`). */
export interface SessionsTable {
  id: string;
  user_id: string;
  created_at: number;
  last_used_at: number;
  user_agent: string | null;
  ip: string | null;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export interface IdempotencyKeysTable {
  project_id: string;
  key: string;
  body_hash: string;
  /** in_flight or done */
  state: string;
  /** The JSON answer, once done. */
  response: string | null;
  created_at: number;
}

export interface DatabaseSchema {
  users: UsersTable;
  projects: ProjectsTable;
  logs: LogsTable;
  log_counts: LogCountsTable;
  log_source_counts: LogSourceCountsTable;
  log_blocks: LogBlocksTable;
  log_block_blooms: LogBlockBloomsTable;
  log_packs: LogPacksTable;
  alert_rules: AlertRulesTable;
  alert_destinations: AlertDestinationsTable;
  saved_views: SavedViewsTable;
  alert_counts: AlertCountsTable;
  alert_history: AlertHistoryTable;
  alert_deliveries: AlertDeliveriesTable;
  push_subscriptions: PushSubscriptionsTable;
  settings: SettingsTable;
  idempotency_keys: IdempotencyKeysTable;
  refresh_tokens: RefreshTokensTable;
  login_throttle: LoginThrottleTable;
  project_members: ProjectMembersTable;
  project_invitations: ProjectInvitationsTable;
  password_resets: PasswordResetsTable;
  sessions: SessionsTable;
}

export type Db = Kysely<DatabaseSchema>;
/** A repository function takes either the database or a transaction. */
export type Executor = Kysely<DatabaseSchema> | Transaction<DatabaseSchema>;
