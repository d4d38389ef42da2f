import fc, { type Arbitrary } from 'fast-check';

/** A JSON Schema node as the OpenAPI document holds it (refs point into components.schemas). */
type Schema = Record<string, any> | boolean;

export interface SchemaArbitraryOptions {
  /** The document the refs point into (`#/components/schemas/...`). */
  root: Record<string, any>;
  /** Strings the server knows (own address, ids of real objects): mixed into every string. */
  known: () => string[];
}

const STRING_NOISE = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('', ' ', '\r\n', '\u0000', '../../etc/passwd', 'a'.repeat(300), '%00', '{{x}}', '<script>', "' OR 1=1 --", 'null', '-1', '1e309', 'NaN'),
  fc.emailAddress(),
  fc.uuid(),
  fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
);

/** Any JSON value, shallow: what a field of the wrong type gets. */
const WRONG = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  STRING_NOISE,
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
);

const resolve = (schema: Schema, root: Record<string, any>): Schema => {
  if (typeof schema !== 'object' || typeof schema.$ref !== 'string') return schema;
  const path = schema.$ref.replace(/^#\//, '').split('/');
  return resolve(path.reduce((node: any, key: string) => node?.[key], root) as Schema, root);
};

/**
 * Values for a JSON Schema, mostly close to valid (so requests get past validation and reach
 * the services) and sometimes not (wrong types, missing required fields, unknown fields,
 * strings from a hostile list). Covers what schema/ uses: $ref, type (or a list), enum, const,
 * anyOf/oneOf, objects, arrays, lengths, bounds, patterns and formats.
 */
export const schemaArbitrary = (schema: Schema, options: SchemaArbitraryOptions, depth = 0): Arbitrary<unknown> => {
  const node = resolve(schema, options.root);
  if (node === true || node === undefined) return WRONG;
  if (node === false) return fc.constant(null);
  const valid = validArbitrary(node, options, depth);
  return depth > 4 ? valid : fc.oneof({ arbitrary: valid, weight: 8 }, { arbitrary: WRONG, weight: 1 });
};

const validArbitrary = (node: Record<string, any>, options: SchemaArbitraryOptions, depth: number): Arbitrary<unknown> => {
  if ('const' in node) return fc.constant(node.const);
  if (Array.isArray(node.enum)) return fc.constantFrom(...node.enum);
  const branches = node.anyOf ?? node.oneOf;
  if (Array.isArray(branches)) return fc.oneof(...branches.map((branch: Schema) => schemaArbitrary(branch, options, depth + 1)));
  const types: string[] = Array.isArray(node.type) ? node.type : node.type ? [node.type] : node.properties ? ['object'] : [];
  if (types.length === 0) return WRONG;
  return fc.oneof(...types.map((type) => typed(type, node, options, depth)));
};

const typed = (type: string, node: Record<string, any>, options: SchemaArbitraryOptions, depth: number): Arbitrary<unknown> => {
  switch (type) {
    case 'string':
      return stringArbitrary(node, options);
    case 'integer':
      return fc.integer({ min: node.minimum ?? -1_000, max: node.maximum ?? 1_000_000 });
    case 'number':
      return fc.double({ min: node.minimum ?? -1e6, max: node.maximum ?? 1e6, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(schemaArbitrary(node.items ?? true, options, depth + 1), {
        minLength: node.minItems ?? 0,
        maxLength: Math.min(node.maxItems ?? 5, 5) + (node.maxItems && node.maxItems < 5 ? 1 : 0),
      });
    case 'object':
      return objectArbitrary(node, options, depth);
    default:
      return WRONG;
  }
};

const stringArbitrary = (node: Record<string, any>, options: SchemaArbitraryOptions): Arbitrary<string> => {
  const shaped: Arbitrary<string>[] = [fc.string({ minLength: node.minLength ?? 0, maxLength: Math.min(node.maxLength ?? 30, 60) })];
  if (typeof node.pattern === 'string') shaped.push(fc.stringMatching(new RegExp(node.pattern)).filter((s) => s.length <= (node.maxLength ?? 1_000)));
  if (node.format === 'uuid') shaped.push(fc.uuid());
  if (node.format === 'email') shaped.push(fc.emailAddress());
  if (node.format === 'date-time') shaped.push(fc.date({ noInvalidDate: true }).map((date) => date.toISOString()));
  const known = fc.constant(null).chain(() => {
    const values = options.known();
    return values.length > 0 ? fc.constantFrom(...values) : fc.string();
  });
  return fc.oneof({ arbitrary: fc.oneof(...shaped), weight: 4 }, { arbitrary: known, weight: 3 }, { arbitrary: STRING_NOISE, weight: 1 });
};

const objectArbitrary = (node: Record<string, any>, options: SchemaArbitraryOptions, depth: number): Arbitrary<unknown> => {
  const properties: Record<string, Schema> = node.properties ?? {};
  const required = new Set<string>(node.required ?? []);
  const model = Object.fromEntries(Object.entries(properties).map(([name, value]) => [name, schemaArbitrary(value, options, depth + 1)]));
  const record = fc.record(model, { requiredKeys: [...required].filter((name) => name in model) });
  const extras =
    node.additionalProperties === false
      ? fc.oneof(
          { arbitrary: fc.constant({}), weight: 9 },
          { arbitrary: fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), WRONG, { maxKeys: 2 }), weight: 1 },
        )
      : fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), schemaArbitrary(node.additionalProperties ?? true, options, depth + 1), { maxKeys: 2 });
  // Sometimes a required field goes missing.
  const dropped =
    required.size === 0 ? fc.constant(null) : fc.oneof({ arbitrary: fc.constant(null), weight: 9 }, { arbitrary: fc.constantFrom(...required), weight: 1 });
  return fc.tuple(record, extras, dropped).map(([value, extra, drop]) => {
    const out: Record<string, unknown> = { ...extra, ...(value as Record<string, unknown>) };
    if (drop !== null) delete out[drop];
    return out;
  });
};
