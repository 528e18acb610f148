import type { Level } from './query.ts';

export interface Project {
  id: string;
  name: string;
  apiKey: string;
  logCount: number;
  createdAt: string;
  updatedAt: string;
}

export interface Log {
  id: string;
  timestamp: string;
  receivedAt: string;
  level: Level;
  message: string;
  source: string | null;
  metadata: Record<string, unknown>;
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export interface StatsBucket {
  start: string;
  total: number;
  levels: Partial<Record<Level, number>>;
}

export interface Stats {
  interval: string;
  buckets: StatsBucket[];
}

export interface Condition {
  level: Level;
  threshold: number;
  window: string;
  source?: string;
  pattern?: string;
}

export interface AlertRule {
  id: string;
  projectId: string;
  name: string;
  condition: Condition;
  channels: Array<'email' | 'push'>;
  cooldown: string;
  enabled: boolean;
  lastTriggeredAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface Delivery {
  channel: 'email' | 'push';
  status: 'pending' | 'sent' | 'failed' | 'skipped';
  error?: string;
}

export interface HistoryEntry {
  id: string;
  alertId: string;
  triggeredAt: string;
  matchedCount: number;
  threshold: number;
  window: string;
  deliveries: Delivery[];
  sample: Log[];
}

export interface Me {
  id: string;
  email: string;
  createdAt: string;
  subscription: { plan: string; status: string; periodEnd: string };
}

export interface Plan {
  name: string;
  maxProjects: number | null;
  maxAlertsPerProject: number | null;
}

export interface PushSubscriptionInfo {
  id: string;
  endpoint: string;
  createdAt: string;
}
