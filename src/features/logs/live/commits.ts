import type { FastifyBaseLogger } from 'fastify';
import type { LogRowStored } from '../store/repository.js';
import type { Committed } from '../store/writer.js';
import type { TailHub } from './tail.js';

/**
 * Called after every commit, for whoever reacts to new logs (alerts). `rows()` builds the stored
 * form of the committed logs, with their seqs, only if the listener asks for it.
 */
export type CommitListener = (projectId: string, rows: () => LogRowStored[]) => void;

export type CommitFanOut = ReturnType<typeof createCommitFanOut>;

/** Hands each commit to this node's live tails and to the commit listeners. */
export function createCommitFanOut(hub: TailHub, log: FastifyBaseLogger) {
  const listeners: CommitListener[] = [];
  return {
    /** Calls `listener` after every commit, with the committed logs. */
    add(listener: CommitListener): void {
      listeners.push(listener);
    },
    /** The ingest queue's onCommit. */
    committed(committed: Committed[]): void {
      for (const { batch, prevSeq, firstSeq, lastSeq } of committed) {
        hub.markCommitted(batch.projectId, lastSeq);
        // The stored form is built only when someone on this node wants the logs, and once.
        let built: LogRowStored[] | undefined;
        const rows = () => {
          let seq = firstSeq;
          built ??= batch.rows.map((r) => ({ project_id: batch.projectId, seq: seq++, ts: r.ts, received_at: batch.receivedAt, level: r.level, source: r.source, message: r.message, metadata: r.metadata }));
          return built;
        };
        if (hub.isTailed(batch.projectId)) hub.publish(batch.projectId, prevSeq, lastSeq, rows());
        for (const listener of listeners) {
          try {
            listener(batch.projectId, rows);
          } catch (err) {
            log.error({ err }, 'a commit listener failed');
          }
        }
      }
    },
  };
}
