/**
 * Search pages as streams. A page of large logs is big: 1,000 logs of ~124 KB (a 64 KiB message and
 * 60 KiB of metadata, inside the limits) is ~124 MB of JSON. Read whole, built as one string and
 * handed to the socket, four such searches held the event loop for seconds and took the process to
 * gigabytes, and a client that asked for a page and never read it pinned ~200 MB. So a page is
 * planned from its logs' keys and sizes (no text), then read from the database, serialised and
 * written a chunk of at most PAGE_CHUNK_BYTES at a time, each only when the client has taken the
 * one before (back-pressure): a client that stops reading holds about two chunks, and a page that
 * makes no progress for PAGE_STALL_MS (PAGE_STALL_TIMEOUT) is ended. A user runs at most SEARCHES_PER_USER searches at
 * once; more wait in line briefly, then get 429 (docs/reliability.md, "Hostile tenant").
 */
import { Readable } from 'node:stream';
import { createUserSlots } from './slots.js';
import { logTextBytes } from '../store/batch.js';
import { logJson } from '../present.js';
import { nextTurn } from '../turns.js';
import type { LogRowStored, PageKey } from '../store/repository.js';

/** Bytes of log text a page reads, serialises and writes at a time (at least one log). */
export const PAGE_CHUNK_BYTES = 256 * 1024;
/** Logs a chunk holds at most, whatever their size. */
export const PAGE_CHUNK_LOGS = 250;
/** Searches one user may have running (read, or being written to its client) at once. */
export const SEARCHES_PER_USER = 2;
/** Searches of one user that may wait for a running one to end; past that, 429 at once. */
export const SEARCHES_WAITING_PER_USER = 4;
/** How long a search waits in line before it is answered 429. */
export const SEARCH_WAIT_MS = 10_000;
/** A page whose client has read nothing for this long is ended (its connection closed); the default of PAGE_STALL_TIMEOUT. */
export const PAGE_STALL_MS = 30_000;

/** One log of a page: its key and size, and its row while the search still holds it. */
export interface PageEntry extends PageKey {
  row?: LogRowStored;
}

/** A search's answer before it is written: the logs' keys (rows for the first few), and the cursor. */
export interface Page {
  projectId: string;
  entries: PageEntry[];
  nextCursor: string | null;
}

/** What a stored log costs as text, as ingest counted it: for rows a search read whole. */
export const rowTextBytes = (row: LogRowStored): number => logTextBytes(row);

/** Consecutive runs of `keys`, each of at most `maxBytes` (and `maxLogs` logs), at least one log each. */
export function chunksOf<K extends PageKey>(keys: readonly K[], maxBytes = PAGE_CHUNK_BYTES, maxLogs = PAGE_CHUNK_LOGS): K[][] {
  const out: K[][] = [];
  let chunk: K[] = [];
  let bytes = 0;
  for (const key of keys) {
    if (chunk.length > 0 && (bytes + key.bytes > maxBytes || chunk.length >= maxLogs)) {
      out.push(chunk);
      chunk = [];
      bytes = 0;
    }
    chunk.push(key);
    bytes += key.bytes;
  }
  if (chunk.length > 0) out.push(chunk);
  return out;
}

export interface PageReadStats {
  /** Searches holding a slot (reading, or being written to their client). */
  running: number;
  /** Searches waiting in line for a slot. */
  waiting: number;
  /** Pages waiting for their client to read what was written. */
  stalled: number;
  /** Bytes of JSON all pages have produced. */
  bytesProduced: number;
  /** The largest chunk of log text any page read at once. */
  maxChunkBytes: number;
}

export type PageReads = ReturnType<typeof createPageReads>;

/**
 * The per-user line for searches and the page writer. `read` gives the rows at keys (the store's
 * rowsAt, under the query budget); a page unread for `stallMs` is ended.
 */
export function createPageReads(read: (projectId: string, keys: readonly PageKey[]) => Promise<LogRowStored[]>, stallMs = PAGE_STALL_MS) {
  const line = createUserSlots({ perUser: SEARCHES_PER_USER, waitingPerUser: SEARCHES_WAITING_PER_USER, waitMs: SEARCH_WAIT_MS, what: 'searches' });
  let stalled = 0;
  let bytesProduced = 0;
  let maxChunkBytes = 0;

  /**
   * A slot for one search of `userId`: at once when the user has fewer than SEARCHES_PER_USER
   * running, else after a wait in line (at most SEARCH_WAIT_MS); 429 RATE_LIMITED when the line is
   * full or the wait runs out. Resolves with the function that gives the slot back.
   */
  const acquire = (userId: string, signal?: AbortSignal): Promise<() => void> => line.acquire(userId, signal);

  /** The page's JSON, a chunk at a time: the rows a search holds are used, the others read then. */
  async function* chunks(page: Page): AsyncGenerator<Buffer> {
    yield Buffer.from('{"data":[');
    let first = true;
    for (const chunk of chunksOf(page.entries)) {
      let bytes = 0;
      for (const e of chunk) bytes += e.bytes;
      maxChunkBytes = Math.max(maxChunkBytes, bytes);
      const missing = chunk.filter((e) => e.row === undefined);
      const read = missing.length > 0 ? new Map((await readRows(page.projectId, missing)).map((r) => [Number(r.seq), r])) : undefined;
      let text = '';
      for (const e of chunk) {
        const row = e.row ?? read?.get(e.seq);
        // Let go of what is written: a page holds one chunk of rows at a time.
        e.row = undefined;
        if (!row) continue; // deleted since the page was planned
        text += first ? logJson(row) : `,${logJson(row)}`;
        first = false;
      }
      if (text !== '') yield Buffer.from(text);
    }
    yield Buffer.from(`],"nextCursor":${page.nextCursor === null ? 'null' : JSON.stringify(page.nextCursor)}}`);
  }

  function readRows(projectId: string, keys: readonly PageKey[]): Promise<LogRowStored[]> {
    return read(projectId, keys);
  }

  /**
   * The page as a readable stream of JSON (the search's answer shape): each chunk is produced
   * only when the reader wants more, and a page whose reader has wanted nothing for `stallMs`
   * is destroyed (the response with it).
   */
  function body(page: Page): Readable {
    const source = chunks(page);
    let pulling = false;
    let isStalled = false;
    let timer: NodeJS.Timeout | undefined;
    const setStalled = (now: boolean) => {
      if (now === isStalled) return;
      isStalled = now;
      stalled += now ? 1 : -1;
      clearTimeout(timer);
      if (now) timer = setTimeout(() => stream.destroy(new Error(`the client read nothing of its page for ${stallMs} ms`)), stallMs);
    };
    const stream = new Readable({
      highWaterMark: PAGE_CHUNK_BYTES,
      read() {
        setStalled(false);
        if (pulling) return;
        pulling = true;
        void (async () => {
          try {
            for (;;) {
              const next = await source.next();
              if (stream.destroyed) return;
              if (next.done) {
                stream.push(null);
                return;
              }
              bytesProduced += next.value.length;
              if (!stream.push(next.value)) {
                setStalled(true);
                return;
              }
              await nextTurn();
              if (stream.destroyed) return;
            }
          } catch (err) {
            stream.destroy(err as Error);
          } finally {
            pulling = false;
          }
        })();
      },
      destroy(err, done) {
        setStalled(false);
        clearTimeout(timer);
        void source.return(undefined).catch(() => {});
        done(err);
      },
    });
    return stream;
  }

  return {
    acquire,
    body,
    /** Rows of the keys that have none yet, up to `maxBytes` of them from the first (a page's first chunk, read before its answer starts). */
    async fill(page: Page, maxBytes = PAGE_CHUNK_BYTES): Promise<void> {
      const first = chunksOf(page.entries, maxBytes)[0];
      const missing = first?.filter((e) => e.row === undefined) ?? [];
      if (missing.length === 0) return;
      const rows = new Map((await readRows(page.projectId, missing)).map((r) => [Number(r.seq), r]));
      for (const e of missing) e.row = rows.get(e.seq);
    },
    stats(): PageReadStats {
      return { ...line.stats(), stalled, bytesProduced, maxChunkBytes };
    },
  };
}
