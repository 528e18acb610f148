/**
 * Deleting a project, or an account with its projects, takes every log with it; on SQLite one
 * DELETE of a big project's logs ran on the event loop's thread (2M logs: 3.8 s in which no other
 * tenant was answered), and retention's batches ran there too. The logs now go in bounded steps on
 * the log writer's thread. Here a project of 300,000 logs is deleted, the same number expire, and an
 * account owning such a project is deleted, each beside a bystander tenant that must see no harm.
 *
 * That the event loop never ran the delete is asserted by counting the work, not by timing it: the
 * store counts each step where it runs (LogStore.deleteCounts): how many, the most logs one took,
 * and on which thread. On PostgreSQL a project's logs go in the deleting transaction's one DELETE,
 * which PostgreSQL runs (no step in the app); retention's batches are counted there as on SQLite.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { threadId } from 'node:worker_threads';
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { PURGE_BATCH } from '../src/features/logs/store/sqlite.js';
import type { DeleteCounts } from '../src/features/logs/store/index.js';
import { createProject, describeEngines, setPlan, signup, useAccount, useProject, useServer } from './harness.js';
import { beside, expectUnharmed } from './hostile.js';

const LOGS = 300_000;
/** Retention's batch in these tests: at most this many logs a step. */
const RETENTION_BATCH = 5000;
/** Loading and deleting 300,000 logs beside the bystander takes a while on a busy machine; the time is not what is tested. */
const BIG_TEST_MS = 300_000;

describeEngines('deleting a big project stalls nobody', (engine) => {
  const s = useServer(engine, { env: { RETENTION_DAYS_FREE: '3' } });
  const bystander = useProject(s, useAccount(s), 'bystander');

  /** Puts `n` logs straight into the project (one statement), as a bulk load would, the newest at `t`, a millisecond apart. */
  async function load(projectId: string, n: number, t = s.clock.now()): Promise<void> {
    const db = s.database.db;
    if (engine === 'postgres') {
      await sql`insert into logs (project_id, seq, ts, received_at, level, source, message, metadata)
                select ${projectId}, g, ${t}::bigint - g, ${t}::bigint - g, 2 + g % 3, 'api', 'order ' || g || ' shipped to the warehouse', null
                from generate_series(1, ${n}) g`.execute(db);
    } else {
      await sql`with recursive g(i) as (select 1 union all select i + 1 from g where i < ${n})
                insert into logs (project_id, seq, ts, received_at, level, source, message, metadata)
                select ${projectId}, i, ${t} - i, ${t} - i, 2 + i % 3, 'api', 'order ' || i || ' shipped to the warehouse', null from g`.execute(db);
    }
    await db.updateTable('projects').set({ last_seq: n, log_count: n }).where('id', '=', projectId).execute();
  }

  const deleteCounts = (): Promise<DeleteCounts> => s.app.services.store.deleteCounts();

  /**
   * `LOGS` logs went in steps of `kind` (counted where they ran): at least LOGS / `bound` of them,
   * none taking more than `bound` logs, and on SQLite every one on the log writer's thread, never
   * this one, whose event loop answers the requests.
   */
  function expectSteps(kind: keyof DeleteCounts, before: DeleteCounts, after: DeleteCounts, bound: number): void {
    expect(after[kind].steps - before[kind].steps, `${kind} steps`).toBeGreaterThanOrEqual(LOGS / bound);
    expect(after[kind].maxLogs, `the most logs one ${kind} step took`).toBeLessThanOrEqual(bound);
    if (engine === 'sqlite') {
      expect(after[kind].threads, `the threads ${kind} steps ran on`).toHaveLength(1);
      expect(after[kind].threads, `the threads ${kind} steps ran on`).not.toContain(threadId);
    }
  }

  /** A project's deletion: on SQLite its logs go first in purge steps; on PostgreSQL in the one DELETE, which PostgreSQL runs (no step). */
  function expectPurged(before: DeleteCounts, after: DeleteCounts): void {
    if (engine === 'sqlite') expectSteps('purge', before, after, PURGE_BATCH);
    else expect(after.purge.steps - before.purge.steps, 'purge steps').toBe(0);
  }

  const logsOf = async (projectId: string) => Number((await sql<{ n: number }>`select count(*) as n from logs where project_id = ${projectId}`.execute(s.database.db)).rows[0]!.n);

  /**
   * Runs `work` beside the bystander, which must see no harm (only 2xx, every log it was told was
   * stored kept, every /healthz probe answered). How long the event loop was held depends on the
   * machine, so it is printed, not asserted; `npm run bench:hostile` reports it with the bystander's
   * /healthz figures (docs/benchmarks.md).
   */
  async function unharmedBy(label: string, work: () => Promise<unknown>): Promise<void> {
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const { report } = await beside(s, bystander.apiKey, work, { label });
    delay.disable();
    console.log(`[hostile ${engine}] ${label}: event loop delay max ${(delay.max / 1e6).toFixed(1)} ms`);
    expectUnharmed(report);
  }

  it(`DELETE /v1/projects/:id of ${LOGS.toLocaleString('en')} logs: the bystander sees no stall, and every log of the project is gone`, async () => {
    const owner = await signup(s);
    await setPlan(s, owner.id, 'enterprise');
    const big = await createProject(s, owner, 'big');
    await load(big.id, LOGS);
    expect(await logsOf(big.id)).toBe(LOGS);
    const before = await deleteCounts();
    await unharmedBy('deleting a project of 300,000 logs', async () => {
      const res = await s.request('DELETE', `/v1/projects/${big.id}`, { token: owner.accessToken });
      expect(res.status, res.text).toBe(204);
    });
    expectPurged(before, await deleteCounts());
    expect(await logsOf(big.id)).toBe(0);
    expect((await s.request('GET', `/v1/projects/${big.id}`, { token: owner.accessToken })).status).toBe(404);
  }, BIG_TEST_MS);

  it(`retention of ${LOGS.toLocaleString('en')} expired logs: the bystander sees no stall, and exactly the expired logs go`, async () => {
    const owner = await signup(s);
    const old = await createProject(s, owner, 'free, four days old');
    await load(old.id, LOGS, s.clock.now() - 4 * 86_400_000);
    const recent = await s.request('POST', '/v1/logs', { headers: { 'x-api-key': old.apiKey }, body: [{ message: 'today', level: 'info' }] });
    expect(recent.status, recent.text).toBe(202);
    const before = await deleteCounts();
    await unharmedBy('retention of 300,000 logs', () => s.app.services.logs.runRetention(RETENTION_BATCH));
    // In batches on both engines: the logs are older than every partition PostgreSQL has (its
    // partitions reach back as far as the longest retention of the plans holding projects, 3 days).
    expectSteps('retention', before, await deleteCounts(), RETENTION_BATCH);
    expect(await logsOf(old.id)).toBe(1);
    expect((await s.request('GET', `/v1/projects/${old.id}`, { token: owner.accessToken })).body.logCount).toBe(1);
  }, BIG_TEST_MS);

  it('DELETE /v1/account with a big project: the same, and the account is gone', async () => {
    const owner = await signup(s);
    await setPlan(s, owner.id, 'enterprise');
    const big = await createProject(s, owner, 'big');
    await load(big.id, LOGS);
    const before = await deleteCounts();
    await unharmedBy('deleting an account with a project of 300,000 logs', async () => {
      const res = await s.request('DELETE', '/v1/account', { token: owner.accessToken, body: { password: owner.password } });
      expect(res.status, res.text).toBe(204);
    });
    expectPurged(before, await deleteCounts());
    expect(await logsOf(big.id)).toBe(0);
    expect((await s.request('GET', '/v1/auth/me', { token: owner.accessToken })).status).toBe(401);
  }, BIG_TEST_MS);
});
