import fc from 'fast-check';
import t from 'tap';
import { jsonChunks, textLength } from '../src/core/json-chunks.js';

/**
 * jsonChunks writes long strings slice by slice (src/core/json-chunks.ts); joined, its pieces
 * must be JSON.stringify's text exactly, for any slice size, including slices that would cut a
 * surrogate pair and strings with lone surrogates (escaped as JSON.stringify escapes them).
 */

// Every UTF-16 code unit, lone surrogates included, and characters JSON escapes.
const anyText = fc.string({
  unit: fc.oneof(fc.constantFrom('"', '\\', '\n', '\u0000', '\u2028', '😀', '\ud83d', '\ude00', 'é'), fc.string({ unit: 'binary', maxLength: 1 })),
});
const documents = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    anyText,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.date({ noInvalidDate: true }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(anyText, tie('value'), { maxKeys: 4 }),
  ),
})).value;

t.test('joined, the pieces are JSON.stringify of the value, for every slice size', async (t) => {
  fc.assert(
    fc.property(documents, fc.integer({ min: 1, max: 9 }), (value, slice) => [...jsonChunks(value, slice)].join('') === (JSON.stringify(value) ?? 'null')),
    { seed: 20261127, numRuns: 3000 },
  );
  t.pass('3,000 documents');
});

t.test('a long string is written in slices, never splitting a surrogate pair', async (t) => {
  const text = `${'a'.repeat(5)}😀${'b'.repeat(5)}`;
  const pieces = [...jsonChunks({ html: text }, 6)];
  t.same(pieces, ['{', '"html":', '"', 'aaaaa😀', 'bbbbb', '"', '}'], 'the slice ending on the first half of the pair takes the second too');
  t.equal(pieces.join(''), JSON.stringify({ html: text }));
});

t.test('textLength counts the characters of keys and strings', async (t) => {
  t.equal(textLength({ ab: 'xyz', list: ['1', 2, { c: 'd' }], n: null }), 2 + 3 + 4 + 1 + 1 + 1 + 1);
});
