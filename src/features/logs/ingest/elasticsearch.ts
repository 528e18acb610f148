/**
 * The Elasticsearch bulk API's body and answer (docs/integrations.md, "Elasticsearch bulk"), with
 * no HTTP and no storage: the routes (elasticsearch-routes.ts) split the body into its actions with
 * `splitBulk` (every action, whatever its kind, counts against the 10,000-item cap), charge them
 * to the plan's rate, read the documents with `readDocuments`, store them through the ingest path,
 * and answer with `bulkAnswer` (bounded per item, so never more than the cap allows).
 *
 * A bulk body is NDJSON: an action line (`{"index": {...}}`, `create`, `update`, `delete`), then
 * for every action but `delete` a document line. `index` and `create` store their document;
 * `update` and `delete` are refused for their item alone (Loglane's logs are not changed once
 * stored). A document Loglane cannot take fails its item; a body it cannot read as bulk lines at
 * all is a 400 for the request.
 */
import { AppError } from '../../../errors.js';
import { MAX_LOGS_PER_REQUEST } from './body.js';
import { readRecord, type LogObject } from './record.js';

export type BulkAction = 'index' | 'create' | 'update' | 'delete';

/** An item's failure, as Elasticsearch reports it. */
export interface ItemError {
  status: number;
  type: string;
  reason: string;
}

/** One action of a bulk body: its log to store, or why its item fails. */
export interface BulkItem {
  action: BulkAction;
  index: string;
  log?: LogObject;
  error?: ItemError;
  /** An `index` or `create` action's document line (and its line number), until it is read. */
  document?: { text: string; line: number };
}

const ACTIONS = new Set<string>(['index', 'create', 'update', 'delete']);
/** `{"index":{}}` or `{"create":{"_index":"<name without escapes>"}}`, spaces aside. */
const USUAL_ACTION = /^\s*\{\s*"(index|create)"\s*:\s*\{\s*(?:"_index"\s*:\s*"([^"\\]*)"\s*)?\}\s*\}\s*$/;

/** ECS's field for the service, before `source` (readRecord's sourceFields). */
const SOURCE_FIELDS = ['service.name'];

/** A request-level refusal in Elasticsearch's words (answered 400 with illegal_argument_exception). */
const malformed = (reason: string) => new AppError('VALIDATION_ERROR', reason);

/** Index names are echoed in the answer at most this long (Elasticsearch refuses longer names). */
const MAX_INDEX_CHARS = 255;
/** An item's reason is echoed at most this long. */
const MAX_REASON_CHARS = 512;

/**
 * The actions of a bulk body, in order. `pathIndex` is the index the URL names (`/es/<index>/_bulk`),
 * used by actions that name none. Every action counts against the request's cap (10,000), whatever
 * its kind, so no body holds more items than a request of documents may; the documents' lines are
 * kept as text, to be read (readDocuments) only once the items have been counted against the rate.
 */
export function splitBulk(text: string, pathIndex: string | undefined): BulkItem[] {
  const items: BulkItem[] = [];
  let at = 0;
  let line = 0;
  /** The next line that is not blank, or undefined at the end. */
  const next = (): string | undefined => {
    while (at < text.length) {
      const end = text.indexOf('\n', at);
      const raw = end < 0 ? text.slice(at) : text.slice(at, end);
      at = end < 0 ? text.length : end + 1;
      line++;
      if (raw.trim() !== '') return raw;
    }
    return undefined;
  };
  for (let actionLine = next(); actionLine !== undefined; actionLine = next()) {
    if (items.length === MAX_LOGS_PER_REQUEST) {
      throw new AppError('PAYLOAD_TOO_LARGE', `A bulk request carries at most ${MAX_LOGS_PER_REQUEST.toLocaleString('en')} actions (documents, deletes and updates alike). Send smaller batches (Filebeat: bulk_max_size; Logstash: pipeline.batch.size).`);
    }
    // The usual action line, `{"create":{"_index":"logs"}}`, read without a parse.
    const usual = USUAL_ACTION.exec(actionLine);
    let parsed: unknown;
    if (usual) parsed = { [usual[1]!]: usual[2] === undefined ? {} : { _index: usual[2] } };
    else {
      try {
        parsed = JSON.parse(actionLine);
      } catch {
        throw malformed(`Malformed action/metadata line [${line}]: not a JSON object.`);
      }
    }
    const names = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? Object.keys(parsed) : [];
    const action = names[0];
    if (names.length !== 1 || !ACTIONS.has(action!)) {
      throw malformed(`Malformed action/metadata line [${line}]: expected one of [create, delete, index, update] as its only key.`);
    }
    const meta = (parsed as Record<string, unknown>)[action!];
    const metaIndex = typeof meta === 'object' && meta !== null && typeof (meta as { _index?: unknown })._index === 'string' ? (meta as { _index: string })._index : undefined;
    const item: BulkItem = { action: action as BulkAction, index: metaIndex ?? pathIndex ?? '' };
    items.push(item);
    if (action === 'delete') {
      item.error = { status: 400, type: 'illegal_argument_exception', reason: 'Loglane does not delete single logs: logs leave by retention, or with their project.' };
      continue;
    }
    const docLine = next();
    if (docLine === undefined) throw malformed(`The ${action} action on line [${line}] has no document line after it.`);
    if (action === 'update') {
      item.error = { status: 400, type: 'illegal_argument_exception', reason: 'Loglane does not update stored logs; send them with index or create.' };
      continue;
    }
    item.document = { text: docLine, line };
  }
  if (items.length === 0) throw malformed('The bulk request holds no actions.');
  return items;
}

/** Reads the document line of each `index` and `create` item into its log, or its item's failure; the lines are let go. */
export function readDocuments(items: BulkItem[]): BulkItem[] {
  for (const item of items) {
    const document = item.document;
    if (document === undefined) continue;
    item.document = undefined;
    let doc: unknown;
    try {
      doc = JSON.parse(document.text);
    } catch {
      item.error = { status: 400, type: 'mapper_parsing_exception', reason: `failed to parse: the document on line [${document.line}] is not valid JSON` };
      continue;
    }
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
      item.error = { status: 400, type: 'mapper_parsing_exception', reason: `failed to parse: the document on line [${document.line}] is not a JSON object` };
      continue;
    }
    item.log = readRecord(doc as Record<string, unknown>, { sourceFields: SOURCE_FIELDS, defaultSource: item.index || undefined });
  }
  return items;
}

/** The actions of a bulk body with their documents read (splitBulk, then readDocuments). */
export function parseBulk(text: string, pathIndex: string | undefined): BulkItem[] {
  return readDocuments(splitBulk(text, pathIndex));
}

/** What became of an item that was sent to be stored: its log's id, or its failure. */
export type ItemOutcome = { id: string } | ItemError;

/**
 * The bulk answer as JSON text, its items in the order of the actions. Written as text: a thousand
 * items made as objects and then serialised cost more than the documents' own reading. A stored
 * item says what clients read of it (`_index`, `_id`, `status`, `result`), not Elasticsearch's
 * shard bookkeeping, which has no meaning here and would double the answer's size.
 */
export function bulkAnswer(items: BulkItem[], outcomes: Map<BulkItem, ItemOutcome>, tookMs: number): string {
  let errors = false;
  const answered = items.map((item) => {
    const outcome = outcomes.get(item) ?? item.error;
    // An item's answer is bounded whatever its action named: the index and the reason are cut, so
    // the answer is at most the item cap times a few hundred bytes.
    const head = `{"${item.action}":{"_index":${JSON.stringify(item.index.length > MAX_INDEX_CHARS ? item.index.slice(0, MAX_INDEX_CHARS) : item.index)},`;
    if (outcome === undefined || !('id' in outcome)) {
      errors = true;
      const e = outcome ?? { status: 500, type: 'exception', reason: 'the document was not stored' };
      const reason = e.reason.length > MAX_REASON_CHARS ? `${e.reason.slice(0, MAX_REASON_CHARS)}…` : e.reason;
      return `${head}"status":${e.status},"error":{"type":${JSON.stringify(e.type)},"reason":${JSON.stringify(reason)}}}}`;
    }
    return `${head}"_id":"${outcome.id}","status":201,"result":"created"}}`;
  });
  return `{"took":${tookMs},"errors":${errors},"items":[${answered.join(',')}]}`;
}

/** A cluster's answer to `GET /` as an Elasticsearch 8 cluster gives it: what Filebeat, Logstash and the clients check. */
export function clusterInfo() {
  return {
    name: 'loglane',
    cluster_name: 'loglane',
    cluster_uuid: 'loglane',
    version: {
      number: '8.17.0',
      build_flavor: 'default',
      build_type: 'docker',
      build_hash: 'loglane',
      build_date: '2024-12-11T12:08:05.663969764Z',
      build_snapshot: false,
      lucene_version: '9.12.0',
      minimum_wire_compatibility_version: '7.17.0',
      minimum_index_compatibility_version: '7.0.0',
    },
    tagline: 'You Know, for Search',
  };
}

/** The Elasticsearch error type for a Loglane error code (the answers under /es speak Elasticsearch). */
export function errorType(code: string): string {
  switch (code) {
    case 'INVALID_API_KEY':
    case 'UNAUTHORIZED':
      return 'security_exception';
    case 'RATE_LIMITED':
    case 'OVERLOADED':
      return 'es_rejected_execution_exception';
    case 'PAYLOAD_TOO_LARGE':
      return 'content_too_long_exception';
    case 'UNSUPPORTED_MEDIA_TYPE':
      return 'media_type_header_exception';
    case 'NOT_FOUND':
      return 'resource_not_found_exception';
    case 'VALIDATION_ERROR':
      return 'illegal_argument_exception';
    default:
      return 'exception';
  }
}
