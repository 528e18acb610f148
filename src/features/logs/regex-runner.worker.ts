/**
 * The regex runner's worker thread (regex-runner.ts RegexWorker), a module of its own as the SQLite
 * writer's thread is: it compiles patterns (cached by source, the least recently used evicted) and
 * answers each message `{id, source, texts}` with `{id, result}`: whether the pattern matches any of
 * the texts, or null when it could not be compiled or run. It says `{ready: true}` first, once its
 * modules are loaded.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { RE2JS } from 're2js';
import { limitDfa, lruCache } from './pattern.js';

export interface RegexThreadData {
  /** Compiled patterns the thread keeps. */
  cacheSize: number;
}

export interface RegexMessage {
  id: number;
  source: string;
  texts: readonly string[];
}

export interface RegexAnswer {
  id: number;
  result: boolean | null;
}

export type RegexReply = RegexAnswer | { ready: true };

const cache = lruCache<string, RE2JS>((workerData as RegexThreadData).cacheSize);

parentPort!.on('message', (msg: RegexMessage) => {
  let result: boolean | null;
  try {
    let re = cache.get(msg.source);
    if (!re) {
      // A small DFA per cached pattern, as in the app.
      re = limitDfa(RE2JS.compile(msg.source));
      cache.set(msg.source, re);
    }
    result = false;
    for (const text of msg.texts) {
      if (re.test(text)) {
        result = true;
        break;
      }
    }
  } catch {
    result = null;
  }
  parentPort!.postMessage({ id: msg.id, result } satisfies RegexReply);
});
parentPort!.postMessage({ ready: true } satisfies RegexReply);
