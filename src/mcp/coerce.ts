import type { JsonSchema } from '../../schema/index.js';

/**
 * MCP clients are looser than REST callers: the Inspector sends `get_email {id: 8}` for the
 * string id, and models send `limit: "5"`. Tool arguments (top-level properties only) are
 * therefore eased before the schema sees them, and only where the meaning is unambiguous:
 * - a safe integer becomes its decimal text where the property is a numeric string: its
 *   `pattern` admits no letters (`id`, `uidValidity`; not `agentId`), and the pattern then
 *   judges the text as it judges any text;
 * - a string of decimal digits becomes a number where the property is an integer.
 * Anything else is left alone, so the schema still refuses it with its own message. REST
 * bodies stay strict; REST query strings are coerced by ajv already.
 */
interface PropertySchema {
  type?: string;
  pattern?: string;
}

const DECIMAL_INTEGER = /^-?(0|[1-9][0-9]*)$/;

/** Probes, not a parse of the regex: a pattern that refuses a letter anywhere is numeric. */
const LETTER_PROBES = ['a', '1a', 'a1', '1a1'];

const isNumericString = (schema: PropertySchema): boolean => {
  if (schema.type !== 'string' || schema.pattern === undefined) return false;
  const pattern = new RegExp(schema.pattern, 'u');
  return LETTER_PROBES.every((probe) => !pattern.test(probe));
};

const eased = (schema: PropertySchema | undefined, value: unknown): unknown => {
  if (schema && isNumericString(schema) && Number.isSafeInteger(value)) return String(value);
  if (schema?.type === 'integer' && typeof value === 'string' && DECIMAL_INTEGER.test(value)) {
    const number = Number(value);
    return Number.isSafeInteger(number) ? number : value;
  }
  return value;
};

export const easeToolArguments = (schema: JsonSchema, args: Record<string, unknown> | undefined): Record<string, unknown> => {
  const properties = (schema as { properties?: Record<string, PropertySchema> }).properties ?? {};
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args ?? {})) out[name] = eased(properties[name], value);
  return out;
};
