/**
 * Issue 17: alert state. A rule goes ok → firing (a `triggered` entry and notifications), reminds
 * once per cooldown while its condition holds, and goes back to ok (a `resolved` entry and
 * notifications) once its condition has been false for a whole window, seen on the clock; silence
 * alerts (`comparison: "below"`) fire when logs stop, never in their first window; muted rules
 * write entries whose deliveries are skipped; two nodes make each transition once.
 *
 * The clock is the test's (TestClock) and `tick()` is called directly, except in the test of the
 * server's own timer (ALERT_CLOCK_INTERVAL=1s).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, describeEngines, ingest, useAccount, useServer, waitFor } from './harness.js';
import { startPushReceiver, startSmtpSink } from './sinks.js';
import { claimFiring } from '../src/features/alerts/repository.js';

describeEngines('alert state: triggered, reminders, resolved, silence, mute', (engine) => {
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
  let pushSvc: Awaited<ReturnType<typeof startPushReceiver>>;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    pushSvc = await startPushReceiver();
  });
  // Declared before the server: afterAll hooks run in reverse, so the sinks close after it.
  afterAll(async () => {
    await smtp?.close();
    await pushSvc?.close();
  });
  // The server's own clock runs only every 10 s here: the tests tick it themselves.
  const s = useServer(engine, () => ({
    env: { SMTP_URL: smtp.url, PUSH_ALLOWED_ORIGINS: pushSvc.origin, PUBLIC_URL: 'https://logs.example.com', DELIVERY_RETRY_BASE: '1s', DELIVERY_MAX_ATTEMPTS: '2', ALERT_CLOCK_INTERVAL: '10s' },
  }));
  beforeAll(async () => {
    pushSvc.expectPublicKey((await s.request('GET', '/v1/push/vapid-public-key')).body.publicKey);
  });
  const a = useAccount(s, { plan: 'enterprise' });

  const tick = () => s.app.services.alerts.tick();
  /** A rule's stateSince in ms; null gives NaN, which no comparison accepts. */
  const since = (rule: { stateSince: string | null }) => (rule.stateSince === null ? Number.NaN : Date.parse(rule.stateSince));
  const getRule = async (id: string) => (await s.request('GET', `/v1/alerts/${id}`, { token: a.accessToken })).body;
  const history = async (id: string) => (await s.request('GET', `/v1/alerts/${id}/history`, { token: a.accessToken })).body.data as any[];
  async function create(projectId: string, condition: Record<string, unknown>, extra: Record<string, unknown> = {}) {
    const res = await s.request('POST', '/v1/alerts', { token: a.accessToken, body: { projectId, name: 'Checkout errors', condition, channels: ['email'], cooldown: '1h', ...extra } });
    expect(res.status, res.text).toBe(201);
    return res.body;
  }
  /** Logs of level error from `source`, at the test clock's now, checked against the rules. */
  async function send(apiKey: string, n: number, source = 'checkout') {
    const res = await ingest(s, apiKey, Array.from({ length: n }, (_, i) => ({ level: 'error', source, message: `payment failed ${i}`, timestamp: new Date(s.clock.now()).toISOString() })));
    expect(res.status, res.text).toBe(202);
    await s.app.services.alertsCaughtUp();
  }
  /** Every delivery of the rule's entries settled (none pending). */
  const settled = (id: string) => waitFor(async () => ((await history(id)).every((e) => e.deliveries.every((d: { status: string }) => d.status !== 'pending')) ? true : undefined), 6000);

  it('ok → firing → ok: one triggered and one resolved entry, each notified on every channel; state and stateSince follow', async () => {
    const browser = pushSvc.subscribe();
    expect((await s.request('POST', '/v1/push/subscriptions', { token: a.accessToken, body: { endpoint: browser.endpoint, keys: browser.keys } })).status).toBe(201);
    const p = await createProject(s, a, 'Shop');
    const r = await create(p.id, { level: 'error', threshold: 2, window: '10s', source: 'checkout' }, { channels: ['email', 'push'] });
    expect(r).toMatchObject({ state: 'ok', stateSince: null, mutedUntil: null, condition: { comparison: 'above' } });
    const mailsBefore = smtp.mails.length;

    await send(p.apiKey, 2);
    const firing = await getRule(r.id);
    expect(firing.state).toBe('firing');
    expect(since(firing)).toBeGreaterThan(0);
    // Still true, inside the cooldown: nothing more.
    await tick();
    expect((await history(r.id)).map((e) => e.kind)).toEqual(['triggered']);

    // The logs leave the window: the condition is false from the next evaluation on ...
    s.clock.advance(11_000);
    await tick();
    expect((await getRule(r.id)).state).toBe('firing');
    // ... and resolves once it has been false for a whole window.
    s.clock.advance(5_000);
    await tick();
    expect((await getRule(r.id)).state).toBe('firing');
    s.clock.advance(6_000);
    await tick();
    const resolved = await getRule(r.id);
    expect(resolved.state).toBe('ok');
    expect(since(resolved)).toBeGreaterThan(since(firing));
    await tick();
    await settled(r.id);
    const entries = await history(r.id);
    expect(entries.map((e) => e.kind)).toEqual(['resolved', 'triggered']);
    expect(entries[0]).toMatchObject({ matchedCount: 0, threshold: 2, window: '10s', sample: [] });
    expect(entries[1].sample).toHaveLength(2);
    for (const e of entries) expect(e.deliveries).toEqual([{ channel: 'email', status: 'sent' }, { channel: 'push', status: 'sent' }]);
    const subjects = smtp.mails.slice(mailsBefore).map((m) => m.subject);
    expect(subjects).toEqual(['[Loglane] Checkout errors fired on Shop', '[Loglane] Checkout errors resolved on Shop']);
    const titles = pushSvc.deliveries.filter((d) => browser.endpoint.endsWith(d.path)).map((d) => [d.payload.title, d.payload.kind]);
    expect(titles).toEqual([
      ['Checkout errors fired', 'triggered'],
      ['Checkout errors resolved', 'resolved'],
    ]);
    const subscriptions = (await s.request('GET', '/v1/push/subscriptions', { token: a.accessToken })).body.data;
    expect(subscriptions).toHaveLength(1);
    expect((await s.request('DELETE', `/v1/push/subscriptions/${subscriptions[0]!.id}`, { token: a.accessToken })).status).toBe(204);
  });

  it('logs matching again during the quiet window start it over', async () => {
    const p = await createProject(s, a, 'Flaky');
    const r = await create(p.id, { level: 'error', threshold: 1, window: '10s' });
    await send(p.apiKey, 1);
    s.clock.advance(11_000);
    await tick(); // false: the quiet window starts
    s.clock.advance(6_000);
    await send(p.apiKey, 1); // true again (inside the cooldown: no entry)
    await tick();
    s.clock.advance(6_000);
    await tick(); // 12 s after the quiet window's start, but it started over
    expect((await getRule(r.id)).state).toBe('firing');
    s.clock.advance(5_000);
    await tick(); // the log is out of the window: quiet again from here
    s.clock.advance(10_000);
    await tick();
    expect((await getRule(r.id)).state).toBe('ok');
    expect((await history(r.id)).map((e) => e.kind)).toEqual(['resolved', 'triggered']);
  });

  it('while firing, a reminder once the cooldown has passed and the condition still holds, at the next evaluation', async () => {
    const p = await createProject(s, a, 'Reminders');
    const r = await create(p.id, { level: 'error', threshold: 1, window: '1m' }, { cooldown: '5s' });
    await send(p.apiKey, 1);
    await tick();
    expect((await history(r.id)).map((e) => e.kind)).toEqual(['triggered']);
    s.clock.advance(6_000);
    await tick();
    await tick();
    expect((await history(r.id)).map((e) => e.kind)).toEqual(['triggered', 'triggered']);
    expect((await getRule(r.id)).state).toBe('firing');
    // stateSince stays at the change of state.
    const first = (await history(r.id))[1].triggeredAt;
    expect((await getRule(r.id)).stateSince).toBe(first);
    // A 0 s cooldown notifies on every batch that holds the condition, and the clock adds nothing.
    const zero = await create(p.id, { level: 'error', threshold: 1, window: '1m', source: 'zero' }, { cooldown: '0s' });
    await send(p.apiKey, 1, 'zero');
    await send(p.apiKey, 1, 'zero');
    s.clock.advance(6_000);
    await tick();
    await tick();
    expect((await history(zero.id)).map((e) => e.kind)).toEqual(['triggered', 'triggered']);
  });

  it('a silence alert (below) fires when its source goes quiet, never during its first window, and resolves when logs come back', async () => {
    const p = await createProject(s, a, 'Nightly');
    const r = await create(p.id, { level: 'error', threshold: 1, window: '10s', source: 'nightly', comparison: 'below' });
    expect(r.condition.comparison).toBe('below');
    // No logs at all, but the rule is younger than its window.
    await tick();
    s.clock.advance(5_000);
    await tick();
    expect(await history(r.id)).toEqual([]);
    await send(p.apiKey, 1, 'nightly');
    s.clock.advance(6_000);
    await tick(); // 11 s old, one log in the window: fine
    expect(await history(r.id)).toEqual([]);
    s.clock.advance(10_000);
    await tick(); // the log left the window: silence
    const fired = await getRule(r.id);
    expect(fired.state).toBe('firing');
    expect((await history(r.id)).map((e) => [e.kind, e.matchedCount])).toEqual([['triggered', 0]]);
    // Logs of another source do not count; the rule's own do.
    await send(p.apiKey, 3, 'other');
    await tick();
    expect((await getRule(r.id)).state).toBe('firing');
    for (let i = 0; i < 3; i++) {
      await send(p.apiKey, 1, 'nightly');
      await tick();
      s.clock.advance(5_000);
    }
    await tick();
    expect((await getRule(r.id)).state).toBe('ok');
    expect((await history(r.id)).map((e) => e.kind)).toEqual(['resolved', 'triggered']);
  });

  it('a new condition or disabling puts a firing rule back to ok without an entry; a changed silence alert waits a window again', async () => {
    const p = await createProject(s, a, 'Edits');
    // A short cooldown: a change of condition does not lift the cooldown of the last entry.
    const r = await create(p.id, { level: 'error', threshold: 1, window: '10s' }, { cooldown: '5s' });
    await send(p.apiKey, 1);
    expect((await getRule(r.id)).state).toBe('firing');
    const res = await s.request('PUT', `/v1/alerts/${r.id}`, { token: a.accessToken, body: { condition: { level: 'error', threshold: 1, window: '10s', comparison: 'below' } } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ state: 'ok', condition: { comparison: 'below' } });
    expect(since(res.body)).toBeGreaterThan(0);
    expect((await history(r.id)).map((e) => e.kind)).toEqual(['triggered']);
    // 11 s on, the log has left the window (below holds) and the change is a window old: it fires.
    s.clock.advance(5_000);
    await tick();
    expect(await history(r.id)).toHaveLength(1);
    s.clock.advance(6_000);
    await tick();
    expect((await history(r.id)).map((e) => [e.kind, e.matchedCount])).toEqual([['triggered', 0], ['triggered', 1]]);
    expect((await getRule(r.id)).state).toBe('firing');
    // Disabling puts it back to ok, without an entry; enabled again, its first window starts over.
    expect((await s.request('PUT', `/v1/alerts/${r.id}`, { token: a.accessToken, body: { enabled: false } })).body.state).toBe('ok');
    expect((await s.request('PUT', `/v1/alerts/${r.id}`, { token: a.accessToken, body: { enabled: true } })).body.state).toBe('ok');
    await tick();
    s.clock.advance(5_000);
    await tick();
    expect(await history(r.id)).toHaveLength(2);
    expect((await s.request('PUT', `/v1/alerts/${r.id}`, { token: a.accessToken, body: { condition: { level: 'error', threshold: 1, window: '10s', comparison: 'sideways' } } })).status).toBe(400);
  });

  it('muted: entries are written, every delivery is skipped as "muted"; mutedUntil in the past or null is not muted', async () => {
    const p = await createProject(s, a, 'Muted');
    const r = await create(p.id, { level: 'error', threshold: 1, window: '10s' }, { cooldown: '0s' });
    const until = new Date(s.clock.now() + 3_600_000).toISOString();
    const put = await s.request('PUT', `/v1/alerts/${r.id}`, { token: a.accessToken, body: { mutedUntil: until } });
    expect(put.status, put.text).toBe(200);
    expect(put.body.mutedUntil).toBe(until);
    await send(p.apiKey, 1);
    const [entry] = await history(r.id);
    expect(entry.deliveries).toEqual([{ channel: 'email', status: 'skipped', error: 'muted' }]);
    for (const bad of ['tomorrow', '2026-13-45T00:00:00Z', 12]) {
      const res = await s.request('PUT', `/v1/alerts/${r.id}`, { token: a.accessToken, body: { mutedUntil: bad } });
      expect(res.status, String(bad)).toBe(400);
    }
    expect((await s.request('PUT', `/v1/alerts/${r.id}`, { token: a.accessToken, body: { mutedUntil: null } })).body.mutedUntil).toBeNull();
    s.clock.advance(1000);
    await send(p.apiKey, 1);
    await settled(r.id);
    expect((await history(r.id))[0].deliveries).toEqual([{ channel: 'email', status: 'sent' }]);
  });

  it('a claim holds once per cooldown, and only for the condition the node evaluated (a sight from before a change claims nothing)', async () => {
    const p = await createProject(s, a, 'Claims');
    const r = await create(p.id, { level: 'error', threshold: 1, window: '10s' }, { cooldown: '1h' });
    const row = () => s.database.db.selectFrom('alert_rules').selectAll().where('id', '=', r.id).executeTakeFirstOrThrow();
    const seen = await row();
    const t = s.clock.now();
    expect(await claimFiring(s.database.db, seen, t)).toBeDefined();
    // A second node with the same sight of the rule claims nothing.
    expect(await claimFiring(s.database.db, seen, t)).toBeUndefined();
    // A change of condition: a sight from before it claims nothing, even past the cooldown.
    const before = await row();
    expect((await s.request('PUT', `/v1/alerts/${r.id}`, { token: a.accessToken, body: { condition: { level: 'error', threshold: 2, window: '10s' } } })).body.state).toBe('ok');
    const later = t + 3_600_001;
    expect(await claimFiring(s.database.db, before, later)).toBeUndefined();
    expect(await claimFiring(s.database.db, await row(), later)).toBeDefined();
  });

  it('a condition sent again unchanged does not reset a firing rule; a changed one forgets the old counts', async () => {
    const p = await createProject(s, a, 'Resend');
    const condition = { level: 'error', threshold: 3, window: '1m' };
    const r = await create(p.id, condition);
    await send(p.apiKey, 3);
    expect((await getRule(r.id)).state).toBe('firing');
    const same = await s.request('PUT', `/v1/alerts/${r.id}`, { token: a.accessToken, body: { name: 'Renamed', condition: { ...condition, comparison: 'above' } } });
    expect(same.body).toMatchObject({ name: 'Renamed', state: 'firing' });
    // Narrowed to a source: the 3 logs counted before do not count for it.
    expect((await s.request('PUT', `/v1/alerts/${r.id}`, { token: a.accessToken, body: { condition: { ...condition, source: 'billing' } } })).body.state).toBe('ok');
    s.clock.advance(1000);
    await send(p.apiKey, 1, 'billing');
    await tick();
    expect((await getRule(r.id)).state).toBe('ok');
    expect(await history(r.id)).toHaveLength(1);
  });

  it('a firing the cooldown held back happens on the clock once the cooldown ends, with no new log', async () => {
    const p = await createProject(s, a, 'Held back');
    const r = await create(p.id, { level: 'error', threshold: 1, window: '10s' }, { cooldown: '30s' });
    await send(p.apiKey, 1);
    s.clock.advance(11_000);
    await tick();
    s.clock.advance(11_000);
    await tick();
    expect((await getRule(r.id)).state).toBe('ok');
    // 25 s after the first entry: the condition holds again, inside the cooldown.
    s.clock.advance(3_000);
    await send(p.apiKey, 1);
    expect((await history(r.id)).map((e) => e.kind)).toEqual(['resolved', 'triggered']);
    s.clock.advance(6_000);
    await tick();
    expect((await history(r.id)).map((e) => e.kind)).toEqual(['triggered', 'resolved', 'triggered']);
    expect((await getRule(r.id)).state).toBe('firing');
  });

  it('the clock reads the rules a page at a time and reaches every one (520 silence alerts)', async () => {
    const p = await createProject(s, a, 'Many');
    const ids: string[] = [];
    for (let i = 0; i < 520; i += 20) {
      const made = await Promise.all(
        Array.from({ length: 20 }, (_, k) =>
          s.request('POST', '/v1/alerts', { token: a.accessToken, body: { projectId: p.id, name: `quiet ${i + k}`, condition: { level: 'info', threshold: 1, window: '30s', source: `job-${i + k}`, comparison: 'below' }, channels: ['push'], cooldown: '1h' } }),
        ),
      );
      for (const res of made) {
        expect(res.status, res.text).toBe(201);
        ids.push(res.body.id);
      }
    }
    // One of them keeps getting logs: it alone stays ok. Its log is 6 s old at the round, well inside
    // the 30 s window however slow the machine is, and every rule's first window is over by then.
    s.clock.advance(25_000);
    await ingest(s, p.apiKey, [{ level: 'info', source: 'job-517', message: 'alive', timestamp: new Date(s.clock.now()).toISOString() }]);
    await s.app.services.alertsCaughtUp();
    s.clock.advance(6_000);
    await tick();
    const states = await s.database.db.selectFrom('alert_rules').select(['name', 'state']).where('project_id', '=', p.id).execute();
    expect(states.filter((r) => r.state === 'firing')).toHaveLength(519);
    expect(states.find((r) => r.name === 'quiet 517')!.state).toBe('ok');
    // 520 rules made through the API and 519 firings notified: ~25 s on a busy two-core machine, so
    // this test's hang guard is wider than the suite's 30 s default (a guard, not a speed bound).
  }, 180_000);

  // Several nodes share PostgreSQL only (a SQLite file has one server).
  if (engine === 'postgres') describe('two nodes', () => {
    const b = useServer(engine, () => ({ shareWith: s, env: { SMTP_URL: smtp.url, PUSH_ALLOWED_ORIGINS: pushSvc.origin, ALERT_CLOCK_INTERVAL: '10s' } }));

    it('evaluating on both at once, each transition is written once', async () => {
      const p = await createProject(s, a, 'Cluster');
      const quiet = await create(p.id, { level: 'error', threshold: 1, window: '10s', source: 'cron', comparison: 'below' });
      const loud = await create(p.id, { level: 'error', threshold: 2, window: '10s', source: 'api' });
      // The same logs reach both nodes at once: one triggered entry.
      const stamp = () => new Date(s.clock.now()).toISOString();
      const [x, y] = await Promise.all([
        ingest(s, p.apiKey, [{ level: 'error', source: 'api', message: 'a', timestamp: stamp() }, { level: 'error', source: 'api', message: 'b', timestamp: stamp() }]),
        ingest(b, p.apiKey, [{ level: 'error', source: 'api', message: 'c', timestamp: stamp() }, { level: 'error', source: 'api', message: 'd', timestamp: stamp() }]),
      ]);
      expect([x.status, y.status]).toEqual([202, 202]);
      await Promise.all([s.app.services.alertsCaughtUp(), b.app.services.alertsCaughtUp()]);
      const both = () => Promise.all([tick(), b.app.services.alerts.tick(), tick(), b.app.services.alerts.tick()]);
      s.clock.advance(11_000);
      await both(); // the silence alert fires; the loud one starts its quiet window
      s.clock.advance(11_000);
      await both(); // the loud one resolves
      await both();
      expect((await history(quiet.id)).map((e) => e.kind)).toEqual(['triggered']);
      expect((await history(loud.id)).map((e) => e.kind)).toEqual(['resolved', 'triggered']);
      expect((await getRule(loud.id)).state).toBe('ok');
      expect((await getRule(quiet.id)).state).toBe('firing');
    });
  });
});

describeEngines('alert state on the server clock', (engine) => {
  const s = useServer(engine, { env: { ALERT_CLOCK_INTERVAL: '1s' } });
  const a = useAccount(s);

  it('a rule resolves without any ingest: the server evaluates on its own clock', async () => {
    const p = await createProject(s, a, 'Clock');
    const r = (await s.request('POST', '/v1/alerts', { token: a.accessToken, body: { projectId: p.id, name: 'Short', condition: { level: 'error', threshold: 1, window: '2s' }, channels: ['email'] } })).body;
    expect((await ingest(s, p.apiKey, [{ level: 'error', message: 'boom' }])).status).toBe(202);
    await s.app.services.alertsCaughtUp();
    expect((await s.request('GET', `/v1/alerts/${r.id}`, { token: a.accessToken })).body.state).toBe('firing');
    // Out of the window after 2 s, then false for a whole window (2 s), seen by a tick each second.
    const resolved = await waitFor(async () => {
      const rule = (await s.request('GET', `/v1/alerts/${r.id}`, { token: a.accessToken })).body;
      return rule.state === 'ok' ? rule : undefined;
    }, 9000);
    expect(resolved.stateSince).not.toBeNull();
    const kinds = (await s.request('GET', `/v1/alerts/${r.id}/history`, { token: a.accessToken })).body.data.map((e: { kind: string }) => e.kind);
    expect(kinds).toEqual(['resolved', 'triggered']);
  });
});
