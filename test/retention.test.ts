import { expect, it } from 'vitest';
import { createProject, describeEngines, ingest, setPlan, signup, useServer } from './harness.js';

const DAY = 86_400_000;

describeEngines('retention and deletion', (engine) => {
  const s = useServer(engine, { env: { RETENTION_DAYS_FREE: '2', RETENTION_DAYS_PRO: '30' } });

  const countIn = async (projectId: string) =>
    Number((await s.database.db.selectFrom('logs').select((eb) => eb.fn.countAll<number>().as('n')).where('project_id', '=', projectId).executeTakeFirstOrThrow()).n);

  it('deletes logs past the plan\'s retention in bounded batches, and logCount follows', async () => {
    const free = await signup(s);
    const pro = await signup(s);
    await setPlan(s, pro.id, 'pro');
    const pf = await createProject(s, free, 'free project');
    const pp = await createProject(s, pro, 'pro project');
    const now = s.clock.now();
    const logs = [
      ...Array.from({ length: 23 }, (_, i) => ({ message: `old ${i}`, timestamp: now - 3 * DAY - i * 1000 })),
      ...Array.from({ length: 5 }, (_, i) => ({ message: `recent ${i}`, timestamp: now - DAY - i * 1000 })),
    ];
    for (const p of [pf, pp]) expect((await ingest(s, p.apiKey, logs)).body.accepted).toBe(28);

    const deleted = await s.app.services.logs.runRetention(5); // five at a time: several batches
    expect(deleted).toBe(23);
    const freeProject = (await s.request('GET', `/v1/projects/${pf.id}`, { token: free.accessToken })).body;
    expect(freeProject.logCount).toBe(5);
    expect(await countIn(pf.id)).toBe(5);
    const remaining = (await s.request('GET', `/v1/projects/${pf.id}/logs`, { token: free.accessToken })).body.data.map((l: { message: string }) => l.message);
    expect(remaining.sort()).toEqual(['recent 0', 'recent 1', 'recent 2', 'recent 3', 'recent 4']);
    // The pro plan keeps 30 days.
    expect((await s.request('GET', `/v1/projects/${pp.id}`, { token: pro.accessToken })).body.logCount).toBe(28);
    // Stats (read from the per-minute rollup) lose the deleted logs too, and keep the others.
    const total = async (account: { accessToken: string }, projectId: string) =>
      (await s.request('GET', `/v1/projects/${projectId}/logs/stats?from=${now - 4 * DAY}&to=${now}&interval=1h`, { token: account.accessToken })).body.buckets.reduce((n: number, b: { total: number }) => n + b.total, 0);
    expect(await total(free, pf.id)).toBe(5);
    expect(await total(pro, pp.id)).toBe(28);
    expect(Number((await s.database.db.selectFrom('log_counts').select((eb) => eb.fn.sum<number>('n').as('n')).where('project_id', '=', pf.id).executeTakeFirstOrThrow()).n)).toBe(5);

    // Time passes: the recent ones expire too, and a second run has nothing more to do.
    s.clock.advance(2 * DAY);
    expect(await s.app.services.logs.runRetention()).toBe(5);
    // (The access token has expired by now: read the counter directly.)
    expect((await s.database.db.selectFrom('projects').select('log_count').where('id', '=', pf.id).executeTakeFirstOrThrow()).log_count).toBe(0);
    expect(await s.app.services.logs.runRetention()).toBe(0);
  });

  it('deleting a project deletes its logs', async () => {
    const u = await signup(s);
    const p = await createProject(s, u);
    await ingest(s, p.apiKey, Array.from({ length: 10 }, (_, i) => ({ message: `gone ${i}` })));
    expect(await countIn(p.id)).toBe(10);
    expect((await s.request('DELETE', `/v1/projects/${p.id}`, { token: u.accessToken })).status).toBe(204);
    expect(await countIn(p.id)).toBe(0);
    expect((await ingest(s, p.apiKey, { message: 'after delete' })).status).toBe(401);
  });
});
