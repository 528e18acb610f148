import { Type } from 'typebox';
import { Text, Timestamp } from '../../http/schemas.js';
import { Log } from '../logs/schemas.js';
import { LEVELS } from '../logs/levels.js';
import { CHANNELS, COMPARISONS } from './rules.js';

const Duration = (description: string) => Type.String({ pattern: '^[0-9]+(s|m|h|d)$', maxLength: 12, description });

export const ConditionBody = Type.Object(
  {
    level: Type.String({ maxLength: 10, description: `One of ${LEVELS.join(', ')}; matches that level exactly` }),
    threshold: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'How many matching logs within the window fire the rule' }),
    window: Duration('1s to 7d, e.g. 5m'),
    source: Type.Optional(Text(0, 200, 'Only logs from this source count')),
    pattern: Type.Optional(Type.String({ maxLength: 1000, description: 'RE2 regular expression matched anywhere in the message' })),
    query: Type.Optional(Type.String({ maxLength: 2000, description: 'A search query (docs/search.md) the logs must match too, e.g. `@res.statusCode:>=500 -@path:"/healthz"`; `level` stays required' })),
    comparison: Type.Optional(Type.String({ enum: [...COMPARISONS], description: 'above (default): fires when the count reaches the threshold; below: when it is under it (the logs stopped)' })),
  },
  { additionalProperties: false },
);

const Channels = Type.Array(Type.String({ enum: [...CHANNELS] }), { minItems: 1, maxItems: 10, description: 'A non-empty set of email, push, webhook, slack (webhook and slack: every destination of that type in the project)' });
const Name = Text(1, 200, 'Alert name');
const Cooldown = Duration('Minimum time between firings, 0s to 7d; default 15m');

export const CreateRuleBody = Type.Object(
  { projectId: Type.String({ maxLength: 100 }), name: Name, condition: ConditionBody, channels: Channels, cooldown: Type.Optional(Cooldown) },
  { additionalProperties: false },
);

export const UpdateRuleBody = Type.Object(
  {
    name: Type.Optional(Name),
    condition: Type.Optional(ConditionBody),
    channels: Type.Optional(Channels),
    cooldown: Type.Optional(Cooldown),
    enabled: Type.Optional(Type.Boolean()),
    mutedUntil: Type.Optional(Type.Union([Type.String({ maxLength: 40, description: 'ISO 8601 time until which deliveries are skipped (entries are still written); null or a past time: not muted' }), Type.Null()])),
    projectId: Type.Optional(Type.String({ maxLength: 100, description: 'Cannot change; accepted only when equal to the current one' })),
  },
  { additionalProperties: false },
);

export const Rule = Type.Object(
  {
    id: Type.String({ pattern: '^alt_' }),
    projectId: Type.String(),
    name: Type.String(),
    condition: Type.Object(
      {
        level: Type.String({ enum: [...LEVELS] }),
        threshold: Type.Integer(),
        window: Type.String(),
        source: Type.Optional(Type.String()),
        pattern: Type.Optional(Type.String()),
        query: Type.Optional(Type.String()),
        comparison: Type.String({ enum: [...COMPARISONS] }),
      },
      { additionalProperties: false },
    ),
    channels: Type.Array(Type.String({ enum: [...CHANNELS] })),
    cooldown: Type.String(),
    enabled: Type.Boolean(),
    state: Type.String({ enum: ['ok', 'firing'] }),
    stateSince: Type.Union([Timestamp, Type.Null()]),
    mutedUntil: Type.Union([Timestamp, Type.Null()]),
    lastTriggeredAt: Type.Union([Timestamp, Type.Null()]),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: false },
);

export const ListQuery = Type.Object({ projectId: Type.Optional(Type.String({ maxLength: 100 })) });
export const HistoryQuery = Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }), cursor: Type.Optional(Type.String({ maxLength: 200 })) });

export const HistoryEntry = Type.Object(
  {
    id: Type.String({ pattern: '^alh_' }),
    alertId: Type.String(),
    kind: Type.String({ enum: ['triggered', 'resolved'] }),
    triggeredAt: Timestamp,
    matchedCount: Type.Integer(),
    threshold: Type.Integer(),
    window: Type.String(),
    deliveries: Type.Array(
      Type.Object(
        { channel: Type.String({ enum: [...CHANNELS] }), status: Type.String({ enum: ['pending', 'sent', 'failed', 'skipped'] }), error: Type.Optional(Type.String()) },
        { additionalProperties: false },
      ),
    ),
    sample: Type.Array(Log),
    links: Type.Object(
      { logs: Type.String({ description: "View matching logs: the explorer under PUBLIC_URL with the rule's condition (its current one) as a query and the entry's window as from/to" }) },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const HistoryResponse = Type.Object({ data: Type.Array(HistoryEntry), nextCursor: Type.Union([Type.String(), Type.Null()]) }, { additionalProperties: false });

export const PushSubscriptionBody = Type.Object(
  {
    endpoint: Type.String({ minLength: 1, maxLength: 2000 }),
    expirationTime: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
    keys: Type.Object({ p256dh: Type.String({ minLength: 1, maxLength: 200 }), auth: Type.String({ minLength: 1, maxLength: 100 }) }),
  },
  { additionalProperties: false },
);

export const PushSubscription = Type.Object({ id: Type.String({ pattern: '^psub_' }), endpoint: Type.String(), createdAt: Timestamp }, { additionalProperties: false });

export const TestResponse = Type.Object(
  {
    deliveries: Type.Array(
      Type.Object({ channel: Type.String({ enum: [...CHANNELS] }), status: Type.String({ enum: ['sent', 'failed', 'skipped'] }), error: Type.Optional(Type.String()) }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);

export const DestinationBody = Type.Object(
  {
    type: Type.String({ enum: ['webhook', 'slack'] }),
    name: Type.Optional(Type.String({ maxLength: 100 })),
    url: Type.String({ minLength: 1, maxLength: 2000, description: 'https; not localhost or a private, loopback or link-local address (WEBHOOK_ALLOWED_ORIGINS lifts this)' }),
  },
  { additionalProperties: false },
);

export const Destination = Type.Object(
  {
    id: Type.String({ pattern: '^dst_' }),
    type: Type.String({ enum: ['webhook', 'slack'] }),
    name: Type.String(),
    url: Type.String(),
    createdAt: Timestamp,
    secret: Type.Optional(Type.String({ description: 'A webhook\'s signing secret (whsec_…): in the answer to its creation only' })),
  },
  { additionalProperties: false },
);

export const DestinationParams = Type.Object({ id: Type.String({ maxLength: 100 }), destId: Type.String({ maxLength: 100 }) });
