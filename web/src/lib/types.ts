/**
 * The API's shapes as the console uses them, taken from the client package's types, which are
 * generated from the server's OpenAPI document: a route change shows up here as a type error.
 */
import type { operations } from '../../../packages/client/src/schema.ts';

type JsonOf<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type OkOf<O> = O extends { responses: infer R } ? (200 extends keyof R ? JsonOf<R[200]> : 201 extends keyof R ? JsonOf<R[201]> : never) : never;
type Ok<K extends keyof operations> = OkOf<operations[K]>;

/** A project as the caller sees it, with the caller's role in it. */
export type Project = Ok<'getProject'>;
export type Log = Ok<'searchLogs'>['data'][number];
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}
export type Stats = Ok<'logStats'>;
export type StatsBucket = Stats['buckets'][number];
export type AlertRule = Ok<'getAlert'>;
export type Condition = AlertRule['condition'];
export type Channel = AlertRule['channels'][number];
export type Comparison = Condition['comparison'];
export type HistoryEntry = Ok<'alertHistory'>['data'][number];
export type Delivery = HistoryEntry['deliveries'][number];
export type Destination = Ok<'listDestinations'>['data'][number];
export type CreatedDestination = Ok<'createDestination'>;
export type TestResult = Ok<'testAlert'>;
export type Me = Ok<'me'>;
export type Plan = Ok<'listPlans'>['data'][number];
export type PushSubscriptionInfo = Ok<'listPushSubscriptions'>['data'][number];

/** Teams and account care. */
export type Role = Project['role'];
export type Member = Ok<'listMembers'>['data'][number];
export type Invitation = Ok<'listInvitations'>['data'][number];
export type SessionInfo = Ok<'listSessions'>['data'][number];

/** The explorer's reads beside search: saved views, context, facets and fields. */
export type View = Ok<'getView'>;
export type ViewRange = View['range'];
export type ContextAnswer = Ok<'logContext'>;
export type FacetsAnswer = Ok<'logFacets'>;
export type Facet = FacetsAnswer['facets'][number];
export type FacetValue = Facet['values'][number];
export type NumericSummary = NonNullable<Facet['numeric']>;
export type FieldsAnswer = Ok<'logFields'>;
