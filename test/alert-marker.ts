/**
 * Proof that a node has finished evaluating alerts for the logs it already acknowledged, for the
 * tests that assert something did NOT fire. A fixed sleep before such a check passes whenever the
 * server is merely slow; this waits for a positive effect that can only come after the work in
 * question instead.
 *
 * The marker is an extra rule in the project (debug logs from the source `test-marker` whose
 * message matches a pattern; threshold 1, no cooldown, push only, so no email is sent) and a log
 * that only it matches. Why its firing proves that the earlier logs were evaluated and that any
 * firing they caused is recorded: a node evaluates committed logs in rounds, one at a time, in
 * commit order (EvaluationQueue); within a round, one project's matched rules fire one after
 * another in the order their hits were found, hits without a pattern first and then pattern hits
 * in log order (`matchRules`; `evaluate` awaits each `fire`). The marker log is sent after the
 * earlier logs were acknowledged (committed), and its rule has a pattern, so its hit comes after
 * theirs in the same round, or in a later round; either way its firing is written after theirs.
 * (The one gap: a round that runs out of its time slice carries logs whose patterns it has not
 * decided to a later round. The tests' patterns are cheap, so a slice does not run out on them.)
 *
 * Only logs acknowledged by the node the marker goes through are covered: in a cluster, send one
 * through every node that took logs.
 */
import { randomBytes } from 'node:crypto';
import { waitFor, type RequestOptions, type Response } from './harness.js';

/** Anything that answers HTTP requests: a TestServer, or a node of a cluster wrapped as one. */
export interface Node {
  request(method: string, path: string, options?: RequestOptions): Promise<Response>;
}

export const MARKER_SOURCE = 'test-marker';

export interface AlertMarker {
  ruleId: string;
  /**
   * Sends a marker log through `via` and resolves once its firing is in the rule's history: by
   * then every log `via` acknowledged before this call has been evaluated, and every firing those
   * logs caused is recorded (history and pending deliveries, in one transaction).
   */
  passThrough(via: Node, apiKey: string, token: string, timeoutMs?: number): Promise<void>;
}

/**
 * Creates the marker rule. Create it before the logs under test are sent, so that every node's
 * cached rule set includes it (and a project with no other enabled rule is still evaluated).
 */
export async function createAlertMarker(node: Node, token: string, projectId: string): Promise<AlertMarker> {
  const res = await node.request('POST', '/v1/alerts', {
    token,
    body: { projectId, name: 'test marker', condition: { level: 'debug', threshold: 1, window: '5m', source: MARKER_SOURCE, pattern: '^marker [0-9a-f]{12}$' }, channels: ['push'], cooldown: '0s' },
  });
  if (res.status !== 201) throw new Error(`marker rule: ${res.status} ${res.text}`);
  const ruleId = res.body.id as string;
  return {
    ruleId,
    async passThrough(via, apiKey, token, timeoutMs = 8000) {
      const message = `marker ${randomBytes(6).toString('hex')}`;
      const sent = await via.request('POST', '/v1/logs', { headers: { 'x-api-key': apiKey }, body: { message, level: 'debug', source: MARKER_SOURCE } });
      if (sent.status !== 202) throw new Error(`marker log: ${sent.status} ${sent.text}`);
      await waitFor(
        async () => {
          const h = await node.request('GET', `/v1/alerts/${ruleId}/history?limit=5`, { token });
          if (h.status !== 200) throw new Error(`marker history: ${h.status} ${h.text}`);
          const entries = h.body.data as { sample: { message: string }[] }[];
          return entries.some((e) => e.sample.some((l) => l.message === message));
        },
        timeoutMs,
        'the marker log to be evaluated',
      );
    },
  };
}
