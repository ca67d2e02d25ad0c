// which bodies the service reads and writes, and the Accept negotiation between them (§4).
import type { Encoding } from '../codec/write-tensor.js';

export const JSON_TYPE = 'application/json';
export const MSGPACK_TYPES = ['application/msgpack', 'application/x-msgpack', 'application/vnd.msgpack'] as const;

/** the media type without parameters, lower-cased: `application/json; charset=utf-8` → `application/json` */
export function essence(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const semi = header.indexOf(';');
  return (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
}

export function encodingOf(mediaType: string | undefined): Encoding | undefined {
  if (mediaType === JSON_TYPE) return 'json';
  if ((MSGPACK_TYPES as readonly string[]).includes(mediaType ?? '')) return 'msgpack';
  return undefined;
}

interface AcceptRange { type: string; subtype: string; q: number }

function parseAccept(header: string): AcceptRange[] {
  const ranges: AcceptRange[] = [];
  for (const part of header.split(',')) {
    const [range, ...params] = part.split(';');
    const [type, subtype] = range.trim().toLowerCase().split('/');
    if (!type || subtype === undefined) continue;
    let q = 1;
    for (const param of params) {
      const [name, value] = param.split('=').map((s) => s.trim());
      if (name.toLowerCase() === 'q') {
        const parsed = Number(value);
        q = Number.isFinite(parsed) ? Math.min(Math.max(parsed, 0), 1) : 0;
      }
    }
    ranges.push({ type, subtype: subtype.trim(), q });
  }
  return ranges;
}

/** RFC 9110: a media type takes the q of the most specific range that matches it */
function quality(ranges: AcceptRange[], mediaType: string): number {
  const [type, subtype] = mediaType.split('/');
  let best = -1;
  let q = 0;
  for (const r of ranges) {
    const specificity = r.type === type && r.subtype === subtype ? 2 : r.type === type && r.subtype === '*' ? 1 : r.type === '*' && r.subtype === '*' ? 0 : -1;
    if (specificity > best) {
      best = specificity;
      q = r.q;
    }
  }
  return q;
}

/**
 * the response media type for a request of `requestType`, or undefined when Accept allows neither
 * encoding. A tie in q keeps the request's encoding; a msgpack answer is labelled with the msgpack
 * type that Accept named (highest q), else the request's, else application/msgpack.
 */
export function negotiate(accept: string | undefined, requestType: string): string | undefined {
  if (accept === undefined || accept.trim() === '') return requestType;
  const ranges = parseAccept(accept);
  const jsonQ = quality(ranges, JSON_TYPE);
  let msgpackQ = 0;
  let msgpackLabel: string = encodingOf(requestType) === 'msgpack' ? requestType : MSGPACK_TYPES[0];
  let namedQ = 0;
  for (const t of MSGPACK_TYPES) {
    const q = quality(ranges, t);
    msgpackQ = Math.max(msgpackQ, q);
    const named = ranges.some((r) => `${r.type}/${r.subtype}` === t);
    if (named && q > namedQ) {
      namedQ = q;
      msgpackLabel = t;
    }
  }
  if (namedQ === 0 && quality(ranges, msgpackLabel) <= 0) {
    // the fallback label was refused with q=0 while a wildcard allows another msgpack type: use that one
    msgpackLabel = MSGPACK_TYPES.find((t) => quality(ranges, t) === msgpackQ) ?? msgpackLabel;
  }
  if (jsonQ <= 0 && msgpackQ <= 0) return undefined;
  if (jsonQ === msgpackQ) return encodingOf(requestType) === 'json' ? JSON_TYPE : msgpackLabel;
  return jsonQ > msgpackQ ? JSON_TYPE : msgpackLabel;
}
