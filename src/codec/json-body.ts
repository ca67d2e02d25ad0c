// JSON request bodies: /v1's strict JSON, or the OIP's with bare NaN tokens. A short body is parsed
// where it is; a long one on a worker, so the event loop never holds while millions of numbers are
// read (JSON.parse reads ~150 MB/s: 64 KiB in 0.3 ms, a 20 MB body in 120 ms, measured). Each tensor's `data` list of at least LONG_LIST items, all numbers (or the contract's strings
// "NaN", "Infinity", "-Infinity"), comes back as a Float64Array moved between the threads, not
// copied, and stands in the body as a ParsedNumbers: an empty array to the schema's walk (nothing to
// check item by item: the worker did), its `numbers` to the tensor reader. Any other list, nested
// data or one with an item that is not such a number (or overflowed, like 1e400), comes back as
// parsed, so the usual checks name the item.
import secureJsonParse from 'secure-json-parse';
import type { ParsedList, ParseTask } from '../pool/protocol.js';
import { tryParseOipJson } from './oip-json.js';

/** bodies up to this many bytes are parsed on the main thread: less than a hop to a worker costs */
export const PARSE_INLINE_BYTES = 64 * 1024;

// fastify's own JSON parser's settings (app.getDefaultJsonParser('error', 'error'))
const POISONING = { protoAction: 'error', constructorAction: 'error' } as const;

/** the body, or the parser's message */
export function parseBodyText(text: string, dialect: ParseTask['dialect']): { ok: true; body: unknown } | { ok: false; message: string } {
  if (dialect === 'oip') {
    const parsed = tryParseOipJson(text);
    return 'error' in parsed ? { ok: false, message: parsed.error } : { ok: true, body: parsed.value };
  }
  try {
    return { ok: true, body: secureJsonParse.parse(text, undefined, POISONING) };
  } catch (err) {
    return { ok: false, message: (err as Error).message };
  }
}

/** below this, a list crosses the threads as it is */
export const LONG_LIST = 256;

export class ParsedNumbers extends Array<unknown> {
  numbers: Float64Array = new Float64Array(0);

  static holding(numbers: Float64Array): ParsedNumbers {
    const list = new ParsedNumbers();
    list.numbers = numbers;
    return list;
  }
}

const TOKENS: Readonly<Record<string, number>> = { NaN: NaN, Infinity: Infinity, '-Infinity': -Infinity };

/** the list's items as float64, or null when one is not a finite number or a token */
function numbersOf(list: unknown[]): Float64Array | null {
  const values = new Float64Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (typeof item === 'number') {
      if (item - item !== 0) return null; // overflowed: the reader names it
      values[i] = item;
    } else if (typeof item === 'string' && Object.hasOwn(TOKENS, item)) {
      values[i] = TOKENS[item];
    } else {
      return null;
    }
  }
  return values;
}

/** deeper than any valid body (a batch item's nested OIP data is about a dozen levels) */
export const MAX_DEPTH = 32;

/**
 * on the worker: takes each long `data` list out of the parsed body (left as []) with the path to it,
 * and cuts the body at MAX_DEPTH (what lies deeper becomes null): no check looks that deep, and
 * sending a 100,000-level body back to the main thread would exhaust the stack of the structured clone
 */
export function takeLongLists(body: unknown): ParsedList[] {
  const lists: ParsedList[] = [];
  // a stack, not recursion: JSON may nest deeper than the call stack goes
  const pending: { node: object; path: (string | number)[] }[] = typeof body === 'object' && body !== null ? [{ node: body, path: [] }] : [];
  while (pending.length > 0) {
    const { node, path } = pending.pop()!;
    const container = node as Record<string | number, unknown>;
    for (const key of Array.isArray(node) ? node.keys() : Object.keys(node)) {
      const value = container[key];
      if (typeof value !== 'object' || value === null) continue;
      const values = key === 'data' && Array.isArray(value) && value.length >= LONG_LIST ? numbersOf(value) : null;
      if (values !== null) {
        container[key] = [];
        lists.push({ path: [...path, key], values });
      } else if (path.length + 1 >= MAX_DEPTH) {
        container[key] = null;
      } else {
        pending.push({ node: value, path: [...path, key] });
      }
    }
  }
  return lists;
}

/** on the main thread: each list back in its place, as a ParsedNumbers */
export function putBackLists(body: unknown, lists: ParsedList[]): unknown {
  for (const { path, values } of lists) {
    let parent = body as Record<string | number, unknown>;
    for (let i = 0; i < path.length - 1; i++) parent = parent[path[i]] as Record<string | number, unknown>;
    parent[path[path.length - 1]] = ParsedNumbers.holding(values);
  }
  return body;
}
