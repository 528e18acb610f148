import { sql, type Kysely } from 'kysely';

/**
 * Teams and account care (docs/teams.md, "Roles" and "Account care"):
 * - project_members: who may see a project and with which role (`owner`, exactly one, mirrors
 *   projects.user_id; `admin`; `member`), and whether they muted its alert notifications.
 *   Every existing project gets its owner's row.
 * - project_invitations: pending invitations by email; the token only as its SHA-256.
 * - password_resets: single-use reset tokens, only as their SHA-256, 30 minutes.
 * - sessions: one row per login (a refresh-token family; the access token's `sid`), with where
 *   and when it was made and last refreshed. Existing logins get a row without user agent or IP.
 * Every table here goes with its user (and project) by a cascading foreign key.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('project_members')
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('joined_at', 'bigint', (c) => c.notNull())
    .addColumn('notifications_muted', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('project_members_pk', ['project_id', 'user_id'])
    .execute();
  await db.schema.createIndex('project_members_user').on('project_members').column('user_id').execute();
  await sql`insert into project_members (project_id, user_id, role, joined_at, notifications_muted)
            select id, user_id, 'owner', created_at, 0 from projects`.execute(db);

  await db.schema
    .createTable('project_invitations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('invited_by', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('accepted_at', 'bigint')
    .execute();
  await db.schema.createIndex('project_invitations_project').on('project_invitations').columns(['project_id', 'created_at']).execute();
  await db.schema.createIndex('project_invitations_invited_by').on('project_invitations').column('invited_by').execute();

  await db.schema
    .createTable('password_resets')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('password_resets_user').on('password_resets').column('user_id').execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint', (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .addColumn('ip', 'text')
    .execute();
  await db.schema.createIndex('sessions_user').on('sessions').columns(['user_id', 'created_at']).execute();
  await sql`insert into sessions (id, user_id, created_at, last_used_at, user_agent, ip)
            select family_id, min(user_id), min(created_at), max(created_at), null, null from refresh_tokens group by family_id`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['sessions', 'password_resets', 'project_invitations', 'project_members']) await db.schema.dropTable(table).execute();
}
