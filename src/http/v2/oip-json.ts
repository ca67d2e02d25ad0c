// the JSON of an Open Inference Protocol request: strict JSON, except that numbers may be the bare
// tokens NaN, Infinity and -Infinity (as Python's json and rapidjson write them). No kept JSON parser
// takes exactly that (JSON5 takes far more: comments, quotes, trailing commas), so a small linear
// pass turns those tokens, outside strings only, into the strings "NaN", "Infinity", "-Infinity",
// which the tensor reader takes as the same values, and JSON.parse does the rest.
import { serviceError } from '../../errors.js';

const TOKENS = ['NaN', 'Infinity', '-Infinity'];

export function parseOipJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    if (!/NaN|Infinity/.test(text)) throw serviceError('bodyInvalid', (err as Error).message);
  }
  try {
    return JSON.parse(quoteBareTokens(text));
  } catch (err) {
    throw serviceError('bodyInvalid', (err as Error).message);
  }
}

/** the text with every bare NaN / Infinity / -Infinity outside a string quoted; one pass */
export function quoteBareTokens(text: string): string {
  const parts: string[] = [];
  let copied = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) {
      inString = true;
      continue;
    }
    if (c !== 0x4e && c !== 0x49 && c !== 0x2d) continue; // N, I, -
    const token = TOKENS.find((t) => text.startsWith(t, i));
    if (token === undefined) continue;
    parts.push(text.slice(copied, i), `"${token}"`);
    i += token.length - 1;
    copied = i + 1;
  }
  if (copied === 0) return text;
  parts.push(text.slice(copied));
  return parts.join('');
}
