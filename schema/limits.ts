import { SCHEMAS, type JsonSchema } from './index.js';

/**
 * The `limits.*` settings that the request schemas themselves carry
 * (docs/operators/configuration.md, "The contract's limits"). The files hold the defaults; an app
 * whose `limits.*` differ validates with, lists as MCP inputSchema and serves in its OpenAPI
 * document copies with its own numbers. Each place: [schema file, JSON pointer, the `limits.*`
 * setting].
 */
const PLACES = [
  ['send-request.json', '/$defs/addressField/anyOf/1/maxItems', 'recipientsPerAddressList'],
  ['send-request.json', '/properties/subject/maxLength', 'subjectMaxChars'],
  ['send-request.json', '/properties/idempotencyKey/maxLength', 'idempotencyKeyMaxChars'],
  ['send-request.json', '/properties/attachments/maxItems', 'attachmentsPerMessage'],
  ['send-request.json', '/properties/attachments/items/properties/filename/maxLength', 'attachmentFilenameMaxChars'],
  ['inbox-query.json', '/properties/limit/maximum', 'inboxPageMax'],
  ['inbox-query.json', '/properties/limit/default', 'inboxPageDefault'],
  ['inbox-query.json', '/properties/search/maxLength', 'searchMaxChars'],
] as const;

export type SchemaLimits = Record<(typeof PLACES)[number][2], number>;

/** The object holding the limit and its key. */
const placeOf = (schema: Record<string, unknown>, pointer: string): [Record<string, unknown>, string] => {
  const keys = pointer.split('/').slice(1);
  let node = schema;
  for (const key of keys.slice(0, -1)) node = node[key] as Record<string, unknown>;
  const last = keys[keys.length - 1];
  if (typeof node?.[last] !== 'number') throw new Error(`schema limit ${pointer} is missing`);
  return [node, last];
};

const setAt = (schema: Record<string, unknown>, pointer: string, value: number): void => {
  const [node, key] = placeOf(schema, pointer);
  node[key] = value;
};

const fileValue = (id: string, pointer: string): unknown => {
  const [node, key] = placeOf(SCHEMAS.find((schema) => schema.$id === id) as JsonSchema, pointer);
  return node[key];
};

/**
 * Every schema, those with limits copied and set; the others shared as they are. Limits equal
 * to the files' (the defaults) give back the files' own list, so apps share one validator.
 */
export const schemasWithLimits = (limits: SchemaLimits): readonly JsonSchema[] => {
  if (PLACES.every(([id, pointer, name]) => fileValue(id, pointer) === limits[name])) return SCHEMAS;
  return SCHEMAS.map((schema) => {
    const places = PLACES.filter(([id]) => id === schema.$id);
    if (places.length === 0) return schema;
    const copy = structuredClone(schema);
    for (const [, pointer, name] of places) setAt(copy, pointer, limits[name]);
    return copy;
  });
};
