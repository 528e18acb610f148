import pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';

/**
 * The channel on which PostgreSQL nodes announce committed logs (the writer's pg_notify): payload
 * `projectId:lastSeq:count:minTs:maxTs` (the oldest and newest timestamps among them: minTs bounds a
 * tail's read, both bound the skip index builder's; a node before maxTs was added sends four fields).
 */
export const PG_CHANNEL = 'loglane_logs';

/**
 * Listens for other nodes' commits (`NOTIFY loglane_logs`) on a dedicated connection, and
 * reconnects with backoff when it drops. After a reconnect `onResync` runs, since notifications
 * sent meanwhile are lost.
 */
export function listenForCommits(
  url: string,
  log: FastifyBaseLogger,
  handlers: { onCommit: (projectId: string, lastSeq: number, count: number, minTs: number | undefined, maxTs: number | undefined) => void; onResync: () => void },
): { close(): Promise<void>; ready: Promise<void> } {
  let client: pg.Client | undefined;
  let closed = false;
  let delay = 500;
  let markReady: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));

  async function connect(first: boolean): Promise<void> {
    if (closed) return;
    const c = new pg.Client({ connectionString: url });
    c.on('notification', (msg) => {
      if (msg.channel !== PG_CHANNEL || !msg.payload) return;
      const [projectId, last, count, minTs, maxTs] = msg.payload.split(':');
      const ts = (t: string | undefined) => (t && Number.isFinite(Number(t)) ? Number(t) : undefined);
      if (projectId && last && count) handlers.onCommit(projectId, Number(last), Number(count), ts(minTs), ts(maxTs));
    });
    c.on('error', (err) => {
      log.warn({ err }, 'lost the notification connection to PostgreSQL; reconnecting');
      void c.end().catch(() => {});
      if (client === c) client = undefined;
      setTimeout(() => void connect(false), delay).unref();
      delay = Math.min(delay * 2, 30_000);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${PG_CHANNEL}`);
      client = c;
      delay = 500;
      if (closed) await c.end();
      if (!first) handlers.onResync();
      markReady();
    } catch (err) {
      log.warn({ err }, 'could not LISTEN on PostgreSQL; retrying');
      await c.end().catch(() => {});
      setTimeout(() => void connect(first), delay).unref();
      delay = Math.min(delay * 2, 30_000);
    }
  }
  void connect(true);

  return {
    ready,
    async close() {
      closed = true;
      await client?.end().catch(() => {});
      client = undefined;
    },
  };
}
