// WireReader.name() keeps the names it read lately (grpc/wire.ts): whatever it keeps, every read gives
// the text that was sent. Reference: the strings the bytes were made from. Many names of one length
// and first letter share its 256 slots, so kept names are met by others that differ only later on.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { WireReader } from '../../src/grpc/wire.js';

/** length-delimited fields, one a name, back to back */
const fields = (names: string[]) => Buffer.concat(names.map((name) => {
  const text = Buffer.from(name, 'utf8');
  if (text.length > 127) throw new Error('one-byte lengths only here');
  return Buffer.concat([Buffer.from([text.length]), text]);
}));

const readAll = (bytes: Buffer) => {
  const reader = new WireReader(bytes);
  const names: string[] = [];
  while (!reader.done) names.push(reader.name());
  return names;
};

it('every name reads back as sent, kept or not', () => {
  // 'ma'..'mz' × 'a'..'z': 676 three-letter names that share their first letter and length
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  const near = [...letters].flatMap((b) => [...letters].map((c) => `m${b}${c}`));
  const name = fc.oneof(fc.constantFrom(...near), fc.string({ maxLength: 20 }), fc.string({ maxLength: 20, unit: 'grapheme' }));
  fc.assert(fc.property(fc.array(name, { minLength: 1, maxLength: 40 }), (names) => {
    expect(readAll(fields(names))).toEqual(names);
    expect(readAll(fields(names))).toEqual(names); // again, now that they are kept
  }), { numRuns: 500 });
});
