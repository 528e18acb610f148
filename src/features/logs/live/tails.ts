/**
 * Live tails: opening one (ownership and caps), and ending those whose authority lapsed, checked
 * every TAIL_RECHECK_MS on this node. The hub (tail.ts) fans committed logs out to them.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../../config.js';
import { AppError } from '../../../errors.js';
import { clientNetwork } from '../../accounts/client-address.js';
import type { ProjectsService } from '../../projects/service.js';
import type { LogFilter } from '../filter.js';
import type { TailAuthority, TailHandle, TailHub, TailSink } from './tail.js';

/** How often open tails are checked against their login and project (logout or deletion on any node). */
export const TAIL_RECHECK_MS = 2000;

export function createTails(deps: {
  hub: TailHub;
  config: Pick<Config, 'maxTails' | 'maxTailsPerUser' | 'maxTailsPerIp'>;
  now: () => number;
  log: FastifyBaseLogger;
  projects: Pick<ProjectsService, 'assertRole' | 'memberships'>;
  /** Which of these logins (access-token `sid`s) are still live: tails end with theirs. */
  liveSessions: (sessionIds: string[]) => Promise<Set<string>>;
}) {
  const { hub, config, now, log, projects, liveSessions } = deps;
  let timer: NodeJS.Timeout | undefined;
  /** Tails open on this node per client network (an IPv6 client's /64), whoever's accounts they are. */
  const perNetwork = new Map<string, number>();

  const release = (network: string) => {
    const left = (perNetwork.get(network) ?? 1) - 1;
    if (left > 0) perNetwork.set(network, left);
    else perNetwork.delete(network);
  };

  /**
   * Opens a live tail after checking ownership, the per-user cap, the per-address cap and the
   * node's cap. The tail ends when its access token expires, when its login ends (logout, revoked)
   * or when the project is deleted or the user is no longer a member, whichever comes first.
   *
   * The per-address cap (MAX_TAILS_PER_IP) is what keeps accounts made by the dozen from one
   * place from taking the node's MAX_TAILS between them: each account's own cap does not.
   */
  async function openTail(authority: TailAuthority & { ip?: string }, projectId: string, filter: LogFilter, afterSeq: number | undefined, sink: TailSink): Promise<TailHandle> {
    const { userId } = authority;
    await projects.assertRole(userId, projectId);
    if (hub.openCount(userId) >= config.maxTailsPerUser) {
      throw new AppError('RATE_LIMITED', `At most ${config.maxTailsPerUser} live tails can be open per user; close one first.`, { retryAfter: 5 });
    }
    const network = clientNetwork(authority.ip);
    if ((perNetwork.get(network) ?? 0) >= config.maxTailsPerIp) {
      throw new AppError('RATE_LIMITED', `At most ${config.maxTailsPerIp} live tails can be open from one address; close one first.`, { retryAfter: 5 });
    }
    if (hub.totalOpen >= config.maxTails) {
      throw new AppError('OVERLOADED', `This server has ${config.maxTails} live tails open, its limit; retry later or on another node.`, { retryAfter: 5 });
    }
    // Counted before the first await, so concurrent opens cannot pass the cap together; the place
    // is given back when the tail ends, however it ends (the hub closes its sink exactly once).
    perNetwork.set(network, (perNetwork.get(network) ?? 0) + 1);
    let released = false;
    const giveBack = () => {
      if (!released) (released = true), release(network);
    };
    const counted: TailSink = {
      send: (out, resume) => sink.send(out, resume),
      close(reason) {
        giveBack();
        sink.close(reason);
      },
    };
    try {
      return await hub.open(authority, projectId, filter, counted, afterSeq);
    } catch (err) {
      giveBack();
      throw err;
    }
  }

  /** Ends the tails whose authority has lapsed: an expired token, an ended login, a project gone or given away. */
  async function recheckTails(): Promise<number> {
    const open = hub.tails();
    if (open.length === 0) return 0;
    const [live, members] = await Promise.all([
      liveSessions([...new Set(open.map((t) => t.authority.sessionId))]),
      projects.memberships(open.map((t) => ({ projectId: t.projectId, userId: t.authority.userId }))),
    ]);
    const t = now();
    let ended = hub.closeWhere((projectId, a) => !members.has(`${projectId}\n${a.userId}`), 'the project is gone, or you are no longer one of its members');
    ended += hub.closeWhere((_, a) => !live.has(a.sessionId), 'the login that opened this tail has ended (logged out or revoked)');
    ended += hub.closeWhere((_, a) => a.expiresAt <= t, 'the access token expired; reconnect with a fresh one');
    return ended;
  }

  return {
    openTail,
    recheckTails,
    start(): void {
      timer = setInterval(() => {
        recheckTails().catch((err: unknown) => log.warn({ err }, 'could not recheck live tails'));
      }, TAIL_RECHECK_MS);
      timer.unref();
    },
    stop(): void {
      if (timer) clearInterval(timer);
    },
  };
}
