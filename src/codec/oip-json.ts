// the JSON of an Open Inference Protocol request: strict JSON, except that numbers may be the bare
// tokens NaN, Infinity and -Infinity (as Python's json and rapidjson write them). No kept JSON parser
// takes exactly that (JSON5 takes far more: comments, quotes, trailing commas), so a small linear
// pass turns those tokens, outside strings only, into the strings "NaN", "Infinity", "-Infinity",
// which the tensor reader takes as the same values, and JSON.parse does the rest.
import { serviceError } from '../errors.js';

const TOKENS = ['NaN', 'Infinity', '-Infinity'];

/** `headerLength`: the Inference-Header-Content-Length that cut the text, named when it is not JSON */
export function parseOipJson(text: string, headerLength: number | null = null): unknown {
  const parsed = tryParseOipJson(text);
  if ('error' in parsed) throw oipJsonError(parsed.error, headerLength);
  return parsed.value;
}

/** the value, or JSON.parse's message (on a worker, where errors lose their fields crossing threads) */
export function tryParseOipJson(text: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    if (!/NaN|Infinity/.test(text)) return { error: (err as Error).message };
  }
  try {
    return { value: JSON.parse(quoteBareTokens(text)) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

export function oipJsonError(message: string, headerLength: number | null): Error {
  return headerLength === null
    ? serviceError('bodyInvalid', message)
    : serviceError('fieldInvalid', `Inference-Header-Content-Length ${headerLength}`, `the body's first ${headerLength} bytes are not one JSON object (${message})`);
}

/**
 * the text with every bare NaN / Infinity / -Infinity in a value's place quoted; one pass. A stack of
 * open containers tells a value's place from a key's, so `{NaN: 1}` stays malformed.
 */
export function quoteBareTokens(text: string): string {
  const parts: string[] = [];
  const objects: boolean[] = []; // per open container: is it an object
  let expectKey = false;
  let copied = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b) { objects.push(true); expectKey = true; } // {
    else if (c === 0x5b) { objects.push(false); expectKey = false; } // [
    else if (c === 0x7d || c === 0x5d) objects.pop(); // } ]
    else if (c === 0x3a) expectKey = false; // :
    else if (c === 0x2c) expectKey = objects[objects.length - 1] === true; // ,
    else if ((c === 0x4e || c === 0x49 || c === 0x2d) && !expectKey) { // N, I, -
      const token = TOKENS.find((t) => text.startsWith(t, i));
      if (token === undefined) continue;
      parts.push(text.slice(copied, i), `"${token}"`);
      i += token.length - 1;
      copied = i + 1;
    }
  }
  if (copied === 0) return text;
  parts.push(text.slice(copied));
  return parts.join('');
}
