// the one-pass reader of OIP's JSON (bare NaN / Infinity / -Infinity tokens), fuzzed.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isServiceError } from '../../src/errors.js';
import { parseOipJson } from '../../src/codec/oip-json.js';

const NAMES = new Map([[NaN, 'NaN'], [Infinity, 'Infinity'], [-Infinity, '-Infinity']]);

/** JSON as Python's json module writes it: non-finite numbers as bare tokens */
function pythonJson(value: unknown): string {
  if (Object.is(value, -0)) return '-0.0';
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : [...NAMES].find(([v]) => Object.is(v, value) || (Number.isNaN(v) && Number.isNaN(value)))![1];
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${pythonJson(v)}`).join(',')}}`;
  return JSON.stringify(value);
}

/** what the reader gives back: each non-finite number as its string */
function expected(value: unknown): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
  if (Array.isArray(value)) return value.map(expected);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expected(v)]));
  return value;
}

const number = fc.oneof(fc.double(), fc.constantFrom(NaN, Infinity, -Infinity));
// keys and strings that look like the tokens must stay as they are
const text = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('NaN', 'Infinity', '-Infinity', 'a"NaN', 'x\\', '\\"NaN'));
const value = fc.letrec((tie) => ({
  any: fc.oneof({ depthSize: 'small' }, number, text, fc.boolean(), fc.constant(null), tie('list'), tie('map')),
  list: fc.array(tie('any'), { maxLength: 5 }),
  map: fc.dictionary(text, tie('any'), { maxKeys: 4 }),
})).any;

describe('parseOipJson', () => {
  it('any value written as Python writes it reads back, non-finite numbers as their names', () => {
    fc.assert(fc.property(value, (v) => {
      expect(parseOipJson(pythonJson(v))).toEqual(expected(v));
    }), { numRuns: 500 });
  });

  it('any text: a value or a coded 400, never another exception', () => {
    fc.assert(fc.property(fc.oneof(fc.string({ maxLength: 60 }), value.map(pythonJson).map((s) => s.slice(0, Math.floor(s.length / 2)))), (s) => {
      try {
        parseOipJson(s);
      } catch (err) {
        expect(isServiceError(err) && err.statusCode === 400, String(err)).toBe(true);
      }
    }), { numRuns: 1000 });
  });

  it.each([
    ['a token where a key goes', '{NaN: 1}'],
    ['a token after a comma in an object', '{"a": 1, Infinity: 2}'],
    ['a token glued to a word', '[NaNa]'],
    ['a number beyond float64 stays a number (the tensor reader refuses it)', '[1e400]'],
  ])('%s', (_name, text) => {
    if (text === '[1e400]') expect(parseOipJson(text)).toEqual([Infinity]);
    else expect(() => parseOipJson(text)).toThrow(/^body: /);
  });
});
