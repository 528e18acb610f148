import { Migrator, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely';
import type { Db } from './types.js';
import * as m0001 from './migrations/0001_accounts.js';
import * as m0002 from './migrations/0002_projects.js';
import * as m0003 from './migrations/0003_logs.js';
import * as m0004 from './migrations/0004_alerts.js';
import * as m0005 from './migrations/0005_idempotency.js';
import * as m0006 from './migrations/0006_partition_logs.js';
import * as m0007 from './migrations/0007_log_counts.js';
import * as m0008 from './migrations/0008_log_seq_per_project.js';
import * as m0009 from './migrations/0009_login_throttle_pending.js';
import * as m0010 from './migrations/0010_alert_query.js';
import * as m0011 from './migrations/0011_log_source_counts.js';
import * as m0012 from './migrations/0012_log_blocks.js';
import * as m0013 from './migrations/0013_log_block_blooms_inline.js';
import * as m0014 from './migrations/0014_log_block_grams.js';
import * as m0015 from './migrations/0015_alert_state.js';
import * as m0016 from './migrations/0016_destinations.js';
import * as m0017 from './migrations/0017_teams.js';
import * as m0018 from './migrations/0018_alert_history_project.js';
import * as m0019 from './migrations/0019_account_deleting.js';
import * as m0020 from './migrations/0020_log_packs.js';
import * as m0021 from './migrations/0021_log_blocks_max_ts.js';
import * as m0022 from './migrations/0022_log_blocks_format.js';
import * as m0023 from './migrations/0023_views.js';

/** The one migration set, for both engines, in order. Add new ones at the end; never edit old ones. */
const MIGRATIONS: Record<string, Migration> = {
  '0001_accounts': m0001,
  '0002_projects': m0002,
  '0003_logs': m0003,
  '0004_alerts': m0004,
  '0005_idempotency': m0005,
  '0006_partition_logs': m0006,
  '0007_log_counts': m0007,
  '0008_log_seq_per_project': m0008,
  '0009_login_throttle_pending': m0009,
  '0010_alert_query': m0010,
  '0011_log_source_counts': m0011,
  '0012_log_blocks': m0012,
  '0013_log_block_blooms_inline': m0013,
  '0014_log_block_grams': m0014,
  '0015_alert_state': m0015,
  '0016_destinations': m0016,
  '0017_teams': m0017,
  '0018_alert_history_project': m0018,
  '0019_account_deleting': m0019,
  '0020_log_packs': m0020,
  '0021_log_blocks_max_ts': m0021,
  '0022_log_blocks_format': m0022,
  '0023_views': m0023,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

export interface MigrationOutcome {
  applied: string[];
}

/**
 * Brings the schema up to date. Safe to run from several nodes at once: Kysely takes a lock
 * (an advisory lock on PostgreSQL) around the run.
 */
export async function migrateToLatest(db: Db): Promise<MigrationOutcome> {
  return run(migrator(db).migrateToLatest());
}

/** Brings the schema up (or down) to the named migration: for tests of a migration over existing data. */
export async function migrateTo(db: Db, name: string): Promise<MigrationOutcome> {
  return run(migrator(db).migrateTo(name));
}

function migrator(db: Db): Migrator {
  return new Migrator({ db, provider, migrationTableName: 'loglane_migrations', migrationLockTableName: 'loglane_migrations_lock' });
}

async function run(outcome: Promise<MigrationResultSet>): Promise<MigrationOutcome> {
  const { error, results } = await outcome;
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`database migration ${failed ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}
