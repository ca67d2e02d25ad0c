// a msgpack map becomes an object with the same keys under the same values,
// whatever the keys are and however many distinct keys came before (the codec keeps V8's own copy
// of the first 256 it sees, and passes the rest as they came): the decoded Map is the reference.
import fc from 'fast-check';
import { Packr, Unpackr } from 'msgpackr';
import { expect, it } from 'vitest';
import { normalizeMsgpackBody } from '../../src/codec/wire-body.js';

const packr = new Packr({ useRecords: false, mapsAsObjects: false });
const unpackr = new Unpackr({ mapsAsObjects: false, useRecords: false });

/** what the service's parser does: msgpackr's decode, then normalize */
const decode = (map: Map<string, number>) => normalizeMsgpackBody(unpackr.unpack(packr.pack(map))) as Record<string, unknown>;

// random keys, and field names beside their own prefixes (a table that confused them would show)
const someKey = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.constantFrom('input', 'inpu', 'inp', 'in', 'i', 'eps', 'ep', 'e', '__proto__', '__proto', 'constructor', '0', ''),
);

it('keys and values survive, before and after the kept keys are full', () => {
  fc.assert(fc.property(fc.uniqueArray(someKey, { maxLength: 12 }), (keys) => {
    const map = new Map(keys.map((key, i) => [key, i]));
    const object = decode(map);
    expect(Object.getPrototypeOf(object)).toBe(Object.prototype);
    expect(Object.keys(object).sort()).toEqual([...map.keys()].sort());
    for (const [key, value] of map) expect(Object.getOwnPropertyDescriptor(object, key)?.value).toBe(value);
  }), { numRuns: 400 }); // ~2,000 distinct keys: most of them arrive after the first 256 are kept
});
