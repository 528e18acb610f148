/**
 * How deep a client's JSON value nests, found without recursion: JSON.parse reads any depth, but
 * JSON.stringify (and any recursive walk) overflows the stack somewhere past a few thousand levels,
 * which a shipper's labels, structured metadata or event could reach in a few kilobytes. The
 * shipper decoders check a value here before they serialise it, and refuse its item when it nests
 * deeper than logs' metadata may (MAX_METADATA_DEPTH), as POST /v1/logs does.
 */
import { MAX_METADATA_DEPTH } from './normalise.js';

/** Whether `value` nests objects or arrays more than `levels` deep (a scalar is level 0, `{}` level 1). One walk, stopping at the first too deep. */
export function nestsDeeperThan(value: unknown, levels: number = MAX_METADATA_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: { v: object; depth: number }[] = [{ v: value, depth: 1 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (depth > levels) return true;
    const members = Array.isArray(v) ? v : Object.values(v);
    for (const m of members) if (typeof m === 'object' && m !== null) stack.push({ v: m, depth: depth + 1 });
  }
  return false;
}

/** The JSON text of a value that nests at most MAX_METADATA_DEPTH levels, or undefined when it nests deeper. */
export function shallowJson(value: unknown): string | undefined {
  return nestsDeeperThan(value) ? undefined : JSON.stringify(value);
}

export const NESTED_TOO_DEEP = `nested more than ${MAX_METADATA_DEPTH} levels deep`;
