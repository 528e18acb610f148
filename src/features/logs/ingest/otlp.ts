/**
 * OTLP/HTTP logs (OpenTelemetry protocol 1.x): the ExportLogsServiceRequest in protobuf or JSON,
 * decoded and mapped to Loglane's log fields, and the ExportLogsServiceResponse back.
 *
 * Mapping: severityNumber (1–24, in the spec's six bands) or else severityText → level; body →
 * message (a structured body is written as JSON); resource attribute service.name → source;
 * timeUnixNano, else observedTimeUnixNano, else the time of receipt → timestamp; the log's
 * attributes at the top of metadata, with `resource` (its attributes), `scope` (name, version,
 * attributes), `traceId`, `spanId`, `severityText` and `eventName` beside them.
 */
import protobuf from 'protobufjs';
import { AppError } from '../../../errors.js';
import { parseLevel } from '../levels.js';
import { MAX_LOGS_PER_REQUEST, type BodyItem } from './body.js';
import { MAX_METADATA_BYTES, MAX_METADATA_DEPTH, TOO_BIG, TOO_DEEP } from './normalise.js';

/** The messages of opentelemetry/proto/collector/logs/v1 this receiver reads and writes. */
const PROTO = `
syntax = "proto3";
package otlp;
message AnyValue {
  oneof value {
    string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
    ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message LogRecord {
  fixed64 time_unix_nano = 1; fixed64 observed_time_unix_nano = 11; int32 severity_number = 2;
  string severity_text = 3; AnyValue body = 5; repeated KeyValue attributes = 6;
  uint32 dropped_attributes_count = 7; fixed32 flags = 8; bytes trace_id = 9; bytes span_id = 10;
  string event_name = 12;
}
message ScopeLogs { InstrumentationScope scope = 1; repeated LogRecord log_records = 2; string schema_url = 3; }
message ResourceLogs { Resource resource = 1; repeated ScopeLogs scope_logs = 2; string schema_url = 3; }
message ExportLogsServiceRequest { repeated ResourceLogs resource_logs = 1; }
message ExportLogsPartialSuccess { int64 rejected_log_records = 1; string error_message = 2; }
message ExportLogsServiceResponse { ExportLogsPartialSuccess partial_success = 1; }
`;

const root = protobuf.parse(PROTO, { keepCase: false }).root;
const RequestType = root.lookupType('otlp.ExportLogsServiceRequest');
const ResponseType = root.lookupType('otlp.ExportLogsServiceResponse');

export const PROTOBUF_TYPES = ['application/x-protobuf', 'application/protobuf'];

/** The request as plain objects, the same shape from protobuf and from JSON (camelCase keys). */
interface OtlpKeyValue {
  key?: string;
  value?: OtlpAnyValue;
}
interface OtlpAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number | string;
  arrayValue?: { values?: OtlpAnyValue[] };
  kvlistValue?: { values?: OtlpKeyValue[] };
  bytesValue?: string | Uint8Array;
}
interface OtlpLogRecord {
  timeUnixNano?: string | number;
  observedTimeUnixNano?: string | number;
  severityNumber?: number | string;
  severityText?: string;
  body?: OtlpAnyValue;
  attributes?: OtlpKeyValue[];
  droppedAttributesCount?: number;
  traceId?: string | Uint8Array;
  spanId?: string | Uint8Array;
  eventName?: string;
}
interface OtlpRequest {
  resourceLogs?: Array<{
    resource?: { attributes?: OtlpKeyValue[] };
    scopeLogs?: Array<{ scope?: { name?: string; version?: string; attributes?: OtlpKeyValue[] }; logRecords?: OtlpLogRecord[] }>;
  }>;
}

/** Decodes a protobuf ExportLogsServiceRequest; a body that is not one is a 400. */
export function decodeProtobuf(body: Buffer): OtlpRequest {
  try {
    const message = RequestType.decode(body);
    return RequestType.toObject(message, { longs: String, bytes: Array, defaults: false, oneofs: false }) as OtlpRequest;
  } catch (err) {
    throw new AppError('VALIDATION_ERROR', `The body is not a protobuf ExportLogsServiceRequest (${err instanceof Error ? err.message : 'undecodable'}).`);
  }
}

export function parseJsonRequest(body: Buffer): OtlpRequest {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new AppError('VALIDATION_ERROR', 'The body is not valid JSON.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new AppError('VALIDATION_ERROR', 'The body must be an ExportLogsServiceRequest object with resourceLogs.');
  return value as OtlpRequest;
}

/** The response body, in the encoding of the request. */
export function encodeResponse(protobufRequest: boolean, rejected: number, errorMessage: string): Buffer | Record<string, unknown> {
  const partialSuccess = rejected > 0 ? { rejectedLogRecords: rejected, errorMessage } : undefined;
  if (protobufRequest) return Buffer.from(ResponseType.encode(ResponseType.fromObject(partialSuccess ? { partialSuccess } : {})).finish());
  return partialSuccess ? { partialSuccess: { rejectedLogRecords: String(rejected), errorMessage } } : {};
}

/** A repeated field: absent is empty; anything but an array is a 400 naming where. */
function list<T>(value: unknown, where: string): T[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new AppError('VALIDATION_ERROR', `${where} must be an array.`);
  return value as T[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const HEX = /^[0-9a-f]*$/i;

function idHex(value: unknown): string | undefined {
  if (typeof value === 'string') return value !== '' && value.length <= 64 && HEX.test(value) ? value.toLowerCase() : undefined;
  if (!(value instanceof Uint8Array) && !(Array.isArray(value) && value.every((b) => Number.isInteger(b) && b >= 0 && b < 256))) return undefined;
  const hex = Buffer.from(value as Uint8Array).toString('hex');
  return /^0*$/.test(hex) ? undefined : hex;
}

/**
 * An AnyValue nested past the metadata depth limit: the record holding it is refused (and the
 * recursion below stops there, whatever the body holds).
 */
class TooDeep extends Error {}

/** An AnyValue as plain JSON: int64 beyond 2^53 stays a string, bytes become base64. */
export function anyValue(v: OtlpAnyValue | undefined, depth = 0): unknown {
  if (!isObject(v)) return null;
  // Past this, the value sits deeper than MAX_METADATA_DEPTH in the record's metadata.
  if (depth > MAX_METADATA_DEPTH) throw new TooDeep();
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) {
    const n = Number(v.intValue);
    return Number.isSafeInteger(n) ? n : String(v.intValue);
  }
  if (v.doubleValue !== undefined) return Number(v.doubleValue);
  if (isObject(v.arrayValue)) return list<OtlpAnyValue>(v.arrayValue.values, 'arrayValue.values').map((x) => anyValue(x, depth + 1));
  if (isObject(v.kvlistValue)) return attributes(v.kvlistValue.values, depth + 1);
  if (v.bytesValue !== undefined) return typeof v.bytesValue === 'string' ? v.bytesValue : v.bytesValue instanceof Uint8Array ? Buffer.from(v.bytesValue).toString('base64') : null;
  return null;
}

function attributes(kvs: unknown, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list<OtlpKeyValue>(kvs, 'attributes')) {
    if (!isObject(kv) || typeof kv.key !== 'string' || kv.key === '') continue;
    // Plain data even for a key named __proto__.
    Object.defineProperty(out, kv.key, { value: anyValue(kv.value as OtlpAnyValue | undefined, depth), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Nanoseconds since the epoch (a decimal string or number) → milliseconds; undefined for 0 or nonsense. */
function nanosToMs(value: unknown): number | undefined {
  if (value === undefined || value === null || value === '' || value === 0 || value === '0') return undefined;
  if (typeof value !== 'string' && (typeof value !== 'number' || !Number.isFinite(value))) return undefined;
  try {
    const ns = BigInt(typeof value === 'number' ? Math.trunc(value) : value.trim());
    if (ns <= 0n) return undefined;
    return Number(ns / 1_000_000n);
  } catch {
    return undefined;
  }
}

const SEVERITY_BANDS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
/** A Map: a lookup by the client's text must not reach Object.prototype. */
const SEVERITY_ENUM: ReadonlyMap<string, number> = new Map(
  SEVERITY_BANDS.flatMap((band, i) => [1, 2, 3, 4].map((k) => [`SEVERITY_NUMBER_${band.toUpperCase()}${k === 1 ? '' : k}`, i * 4 + k] as const)),
);

/** The level of a record: its severityNumber's band, else its severityText, else info. */
export function otlpLevel(severityNumber: unknown, severityText: unknown): string {
  const n = typeof severityNumber === 'string' ? (SEVERITY_ENUM.get(severityNumber) ?? Number(severityNumber)) : severityNumber;
  if (typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 24) return SEVERITY_BANDS[Math.floor((n - 1) / 4)]!;
  if (typeof severityText === 'string' && severityText !== '') {
    const byText = parseLevel(severityText) ?? parseLevel(severityText.replace(/\d+$/, ''));
    if (byText !== undefined) return SEVERITY_BANDS[byText]!;
  }
  return 'info';
}

/** The records of a request as Loglane logs for the ingest path, in order. */
export function toLogItems(request: OtlpRequest): BodyItem[] {
  const items: BodyItem[] = [];
  for (const rl of list<OtlpRequest['resourceLogs'] & object>(request.resourceLogs, 'resourceLogs') as unknown[]) {
    if (!isObject(rl)) continue;
    // Resource and scope attributes too deep for metadata refuse every record that carries them.
    const resource = deepOr(() => attributes(isObject(rl.resource) ? rl.resource.attributes : undefined));
    const serviceName = resource !== undefined && typeof resource['service.name'] === 'string' ? (resource['service.name'] as string) : undefined;
    // Every record's metadata holds the resource (and its scope): sized once here, not per record.
    const resourceChars = resource === undefined || Object.keys(resource).length === 0 ? 0 : JSON.stringify(resource).length + '"resource":'.length;
    for (const sl of list<unknown>(rl.scopeLogs, 'scopeLogs')) {
      if (!isObject(sl)) continue;
      const s = isObject(sl.scope) ? sl.scope : undefined;
      const name = typeof s?.name === 'string' && s.name ? s.name : undefined;
      const version = typeof s?.version === 'string' && s.version ? s.version : undefined;
      const scopeAttributes = deepOr(() => attributes(s?.attributes));
      const scope = scopeAttributes !== undefined && (name || version) ? { name, version, ...(Object.keys(scopeAttributes).length ? { attributes: scopeAttributes } : {}) } : undefined;
      // Attributes shared by every record of this scope that alone pass the metadata limit refuse
      // each record at once, instead of each record's check walking them again.
      // A lower bound of each record's metadata text: {"resource":{…},"scope":{…}} at least.
      const scopeChars = scope ? JSON.stringify(scope).length + '"scope":'.length : 0;
      const sharedChars = resourceChars + scopeChars === 0 ? 0 : resourceChars + scopeChars + 2;
      const sharedTooBig = sharedChars > MAX_METADATA_BYTES;
      for (const record of list<unknown>(sl.logRecords, 'logRecords')) {
        if (items.length === MAX_LOGS_PER_REQUEST) {
          throw new AppError('PAYLOAD_TOO_LARGE', `A request carries at most ${MAX_LOGS_PER_REQUEST.toLocaleString('en')} log records; split the export into smaller batches.`);
        }
        if (!isObject(record)) items.push({ error: 'a log record must be an object' });
        else if (resource === undefined || scopeAttributes === undefined) items.push({ error: TOO_DEEP });
        else if (sharedTooBig) items.push({ error: TOO_BIG });
        else items.push(deepOr(() => toLogItem(record as OtlpLogRecord, resource, serviceName, scope, sharedChars)) ?? { error: TOO_DEEP });
      }
    }
  }
  return items;
}

/** What `make` returns, or undefined when it met an AnyValue nested too deep. */
function deepOr<T>(make: () => T): T | undefined {
  try {
    return make();
  } catch (err) {
    if (err instanceof TooDeep) return undefined;
    throw err;
  }
}

function toLogItem(r: OtlpLogRecord, resource: Record<string, unknown>, serviceName: string | undefined, scope: object | undefined, leastBytes: number): BodyItem {
  const body = anyValue(r.body);
  const eventName = typeof r.eventName === 'string' ? r.eventName : undefined;
  const message = typeof body === 'string' ? body : body === null ? (eventName ?? '') : JSON.stringify(body);
  const metadata: Record<string, unknown> = { ...attributes(r.attributes) };
  if (Object.keys(resource).length) metadata.resource = resource;
  if (scope) metadata.scope = scope;
  const traceId = idHex(r.traceId);
  const spanId = idHex(r.spanId);
  if (traceId) metadata.traceId = traceId;
  if (spanId) metadata.spanId = spanId;
  if (typeof r.severityText === 'string' && r.severityText) metadata.severityText = r.severityText;
  if (eventName) metadata.eventName = eventName;
  if (body !== null && typeof body === 'object') metadata.body = body;
  const timestamp = nanosToMs(r.timeUnixNano) ?? nanosToMs(r.observedTimeUnixNano);
  return {
    value: {
      message,
      level: otlpLevel(r.severityNumber, r.severityText),
      ...(timestamp !== undefined ? { timestamp } : {}),
      ...(serviceName ? { source: serviceName.slice(0, 200) } : {}),
      metadata,
    },
    leastBytes,
  };
}
