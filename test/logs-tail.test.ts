import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { createProject, describeEngines, errorOf, ingest, signup, openTail, useAccount, useServer, waitFor } from './harness.js';

describeEngines('live tail', (engine) => {
  const s = useServer(engine, { env: { TAIL_HEARTBEAT: '1s', MAX_TAILS_PER_USER: '3' } });
  const a = useAccount(s, { plan: 'enterprise' });

  it('streams Server-Sent Events and delivers a new log as it is ingested', async () => {
    const p = await createProject(s, a);
    await ingest(s, p.apiKey, { message: 'before the tail' });
    const tail = await openTail(s, a.accessToken, p.id);
    try {
      expect(tail.status).toBe(200);
      expect(tail.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(tail.headers.get('cache-control')).toBe('no-store');
      await tail.waitFor(() => tail.events.some((e) => e.comment === 'connected'));
      await ingest(s, p.apiKey, { message: 'hello tail', level: 'warn', source: 'api' });
      // Delivered live: the tail gets it (the wait fails at its timeout otherwise), and only it.
      await tail.waitFor(() => tail.logs().length === 1, 10_000);
      const [log] = tail.logs();
      expect(log).toMatchObject({ message: 'hello tail', level: 'warn', source: 'api' });
      expect(tail.events.find((e) => e.event === 'log')!.id).toMatch(/^\d+$/);
    } finally {
      tail.close();
    }
  });

  it('applies the filters, and sends heartbeats', async () => {
    const p = await createProject(s, a);
    const tail = await openTail(s, a.accessToken, p.id, { query: `level=error,fatal&source=api&q=disk&pattern=${encodeURIComponent('sd[a-z]\\d')}` });
    try {
      await tail.waitFor(() => tail.events.some((e) => e.comment === 'connected'));
      await ingest(s, p.apiKey, [
        { message: 'disk sda1 full', level: 'error', source: 'api' },
        { message: 'disk sda1 full', level: 'info', source: 'api' },
        { message: 'disk sda1 full', level: 'error', source: 'worker' },
        { message: 'memory low', level: 'error', source: 'api' },
        { message: 'DISK sdb2 failing', level: 'fatal', source: 'api' },
        { message: 'disk ok', level: 'fatal', source: 'api' },
      ]);
      await tail.waitFor(() => tail.logs().length === 2);
      expect(tail.logs().map((l) => l.message)).toEqual(['disk sda1 full', 'DISK sdb2 failing']);
      await tail.waitFor(() => tail.events.some((e) => e.comment === 'keep-alive'), 10_000);
    } finally {
      tail.close();
    }
  });

  it('resumes with Last-Event-ID without duplicates or gaps', async () => {
    const p = await createProject(s, a);
    const first = await openTail(s, a.accessToken, p.id);
    await first.waitFor(() => first.events.some((e) => e.comment === 'connected'));
    await ingest(s, p.apiKey, Array.from({ length: 5 }, (_, i) => ({ message: `m${i}` })));
    await first.waitFor(() => first.logs().length === 5);
    const lastId = first.logs()[2]!.sseId; // the client saw up to m2 before it dropped
    first.close();

    await ingest(s, p.apiKey, Array.from({ length: 3 }, (_, i) => ({ message: `m${5 + i}` })));
    const again = await openTail(s, a.accessToken, p.id, { lastEventId: lastId });
    try {
      await again.waitFor(() => again.logs().length === 5);
      await ingest(s, p.apiKey, { message: 'm8' });
      await again.waitFor(() => again.logs().length === 6);
      expect(again.logs().map((l) => l.message)).toEqual(['m3', 'm4', 'm5', 'm6', 'm7', 'm8']);
      const ids = again.logs().map((l) => Number(l.sseId));
      expect(ids).toEqual([...ids].sort((x, y) => x - y));
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      again.close();
    }
    const bad = await openTail(s, a.accessToken, p.id, { lastEventId: 'abc' });
    expect(bad.status).toBe(400);
  });

  it('many batches in a row arrive complete and in order', async () => {
    const p = await createProject(s, a);
    const tail = await openTail(s, a.accessToken, p.id);
    try {
      await tail.waitFor(() => tail.events.some((e) => e.comment === 'connected'));
      await Promise.all(Array.from({ length: 10 }, (_, b) => ingest(s, p.apiKey, Array.from({ length: 50 }, (_, i) => ({ message: `b${b}-${i}` })))));
      await tail.waitFor(() => tail.logs().length === 500, 15_000);
      const ids = tail.logs().map((l) => Number(l.sseId));
      expect(ids).toEqual(Array.from({ length: 500 }, (_, i) => ids[0]! + i));
    } finally {
      tail.close();
    }
  });

  it('a client that stops reading is paused, not dropped, and then gets every log in order', async () => {
    const p = await createProject(s, a);
    // A raw request whose body nobody reads until the logs are in: ~12 MB of frames, more than the
    // socket buffers and the server's 1 MiB allowance, so the tail must pause and catch up.
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      http.get(`${s.url}/v1/projects/${p.id}/logs/tail`, { headers: { authorization: `Bearer ${a.accessToken}` }, agent: false }, resolve).on('error', reject);
    });
    expect(res.statusCode).toBe(200);
    // Read up to the 'connected' comment (written once the tail is open), then stop reading.
    let buffer = '';
    res.setEncoding('utf8');
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: string) => {
        buffer += chunk;
        if (!buffer.includes(': connected\n')) return;
        res.pause();
        res.off('data', onData);
        resolve();
      };
      res.on('data', onData);
      res.once('end', () => reject(new Error('the tail ended before it was connected')));
    });
    const padding = 'x'.repeat(1000);
    const total = 12_000;
    for (let b = 0; b < total / 1000; b++) {
      await ingest(s, p.apiKey, Array.from({ length: 1000 }, (_, i) => ({ message: `slow ${b * 1000 + i} ${padding}` })));
    }
    const seen: number[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${seen.length} of ${total} logs arrived`)), 20_000);
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const m = /^data: \{.*"message":"slow (\d+) /m.exec(frame);
          if (m) seen.push(Number(m[1]));
        }
        if (seen.length >= total) {
          clearTimeout(timer);
          resolve();
        }
      });
      res.on('end', () => reject(new Error(`the server ended the tail after ${seen.length} logs`)));
      res.resume();
    });
    res.destroy();
    expect(seen).toEqual(Array.from({ length: total }, (_, i) => i));
  });

  it('caps the open tails per user with 429 RATE_LIMITED', async () => {
    const b = await signup(s);
    const p = await createProject(s, b);
    const open = [];
    for (let i = 0; i < 3; i++) open.push(await openTail(s, b.accessToken, p.id));
    expect(open.map((t) => t.status)).toEqual([200, 200, 200]);
    const fourth = await openTail(s, b.accessToken, p.id);
    expect(fourth.status).toBe(429);
    expect(fourth.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(JSON.parse(fourth.body!).error.code).toBe('RATE_LIMITED');
    open[0]!.close();
    // The slot frees once the server sees the connection close.
    await waitFor(
      async () => {
        const t = await openTail(s, b.accessToken, p.id);
        t.close();
        return t.status === 200;
      },
      10_000,
      'a fourth tail to be let in',
    );
    for (const t of open) t.close();
  });

  it('refuses bad filters with 400 before streaming', async () => {
    const p = await createProject(s, a);
    const res = await s.request('GET', `/v1/projects/${p.id}/logs/tail?pattern=${encodeURIComponent('(a)\\1')}`, { token: a.accessToken });
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toBe('VALIDATION_ERROR');
  });

  if (engine === 'postgres') {
    describe('across nodes', () => {
      const b = useServer(engine, () => ({ shareWith: s }));

      it('a log ingested through node A reaches a tail open on node B', async () => {
        const p = await createProject(s, a);
        const tail = await openTail(b, a.accessToken, p.id);
        try {
          await tail.waitFor(() => tail.events.some((e) => e.comment === 'connected'));
          await ingest(s, p.apiKey, [{ message: 'from A 1' }, { message: 'from A 2' }]);
          await ingest(b, p.apiKey, { message: 'from B' });
          await ingest(s, p.apiKey, { message: 'from A 3' });
          await tail.waitFor(() => tail.logs().length === 4, 10_000);
          expect(tail.logs().map((l) => l.message)).toEqual(['from A 1', 'from A 2', 'from B', 'from A 3']);
        } finally {
          tail.close();
        }
      });
    });
  }
});
