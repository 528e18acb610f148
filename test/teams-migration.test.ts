/**
 * Migration 0017 on a database that already has accounts, projects and logins: every project gets
 * its owner as a member, and every login a session row, so nothing that worked before stops.
 */
import { expect, it } from 'vitest';
import { migrateTo, migrateToLatest } from '../src/db/migrate.js';
import { createProject, describeEngines, errorOf, signup, useServer } from './harness.js';

describeEngines('migration 0017 (teams) over existing data', (engine) => {
  const s = useServer(engine);

  it('keeps every project with its owner and every login as a session', async () => {
    const owner = await signup(s);
    const project = await createProject(s, owner, 'before teams');
    const again = await s.request('POST', '/v1/auth/login', { body: { email: owner.email, password: owner.password } });
    expect(again.status, again.text).toBe(200);
    const db = s.database.db;
    await migrateTo(db, '0016_destinations');
    // 0017 first, then whatever came after it.
    expect((await migrateToLatest(db)).applied[0]).toBe('0017_teams');

    const members = await db.selectFrom('project_members').selectAll().execute();
    expect(members).toEqual([expect.objectContaining({ project_id: project.id, user_id: owner.id, role: 'owner', notifications_muted: 0 })]);
    const listed = await s.request('GET', '/v1/projects', { token: owner.accessToken });
    expect(listed.body.data.map((p: { id: string; role: string }) => [p.id, p.role])).toEqual([[project.id, 'owner']]);

    const sessions = await s.request('GET', '/v1/auth/sessions', { token: owner.accessToken });
    expect(sessions.status, sessions.text).toBe(200);
    expect(sessions.body.data).toHaveLength(2);
    expect(sessions.body.data.filter((x: { current: boolean }) => x.current)).toHaveLength(1);
    // A login from before the migration can be signed out like any other.
    // Two sessions, one of them current (just checked), so the other one is there.
    const other = sessions.body.data.find((x: { current: boolean }) => !x.current)!;
    expect((await s.request('DELETE', `/v1/auth/sessions/${other.id}`, { token: owner.accessToken })).status).toBe(204);
    const refused = await s.request('POST', '/v1/auth/refresh', { body: { refreshToken: again.body.refreshToken } });
    expect(refused.status).toBe(401);
    expect(errorOf(refused).code).toBe('INVALID_REFRESH_TOKEN');
  });
});
