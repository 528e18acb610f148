/**
 * Response bodies typed from the generated client schema (packages/client/src/schema.ts, made
 * from the served OpenAPI document by `npm run gen:client`): `s.request('GET', `/v1/projects/${id}`)`
 * answers a body typed as getProject's success answer. The path is matched segment by segment
 * against the schema's paths (`{projectId}` takes any one segment; a query string is ignored);
 * a path the schema does not know, or a method it does not have there, types the body as `any`.
 *
 * The body is typed as the success answer. On an error status, read it with `errorOf(res)`,
 * which checks the error body's shape instead of trusting a type.
 */
import type { paths } from '../packages/client/src/schema.js';

type Segments<S extends string> = S extends `${infer Head}/${infer Tail}` ? [Head, ...Segments<Tail>] : [S];
type WithoutQuery<S extends string> = S extends `${infer Base}?${string}` ? Base : S;

type SegmentMatches<Got extends string, Want extends string> = Want extends `{${string}}` ? true : string extends Got ? false : Got extends Want ? true : false;
type SegmentsMatch<Got extends string[], Want extends string[]> = Got extends [infer G extends string, ...infer GR extends string[]]
  ? Want extends [infer W extends string, ...infer WR extends string[]]
    ? SegmentMatches<G, W> extends true
      ? SegmentsMatch<GR, WR>
      : false
    : false
  : Want extends []
    ? true
    : false;

/** The schema paths `S` (a literal or template-literal path) can be. */
export type SchemaPathOf<S extends string> = {
  [P in keyof paths & string]: SegmentsMatch<Segments<WithoutQuery<S>>, Segments<P>> extends true ? P : never;
}[keyof paths & string];

type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : undefined;
type SuccessOf<Op> = Op extends { responses: infer R }
  ? 200 extends keyof R ? JsonOf<R[200]> : 201 extends keyof R ? JsonOf<R[201]> : 202 extends keyof R ? JsonOf<R[202]> : 204 extends keyof R ? undefined : any
  : any;

type OperationOf<P, M extends string> = P extends keyof paths ? (Lowercase<M> extends keyof paths[P] ? NonNullable<paths[P][Lowercase<M>]> : never) : never;

/** The success body `method path` answers with, or `any` where the schema has no such operation. */
export type BodyOf<M extends string, S extends string> = [SchemaPathOf<S>] extends [never]
  ? any
  : [OperationOf<SchemaPathOf<S>, M>] extends [never]
    ? any
    : SuccessOf<OperationOf<SchemaPathOf<S>, M>>;
