import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { SCHEMAS, type JsonSchema } from '../../schema/index.js';
import { isValidAddress } from './addresses.js';
import { inputErrorOf } from './input-errors.js';

/** Checks input against one set of schemas (the files, or copies with an app's limits). */
export interface Validator {
  /**
   * Validates input against its schema; defaults from the schema are filled in. A violation
   * is `invalid_input` with a message that names the field and the rule. Bodies are validated
   * as sent; query strings are coerced ("50" to 50, "false" to false).
   */
  validate<T>(schemaId: string, value: unknown, options?: { coerce?: boolean }): T;
  /** The schema as this validator uses it (MCP inputSchema, the OpenAPI document). */
  schema(schemaId: string): JsonSchema;
}

const build = (schemas: readonly JsonSchema[], coerceTypes: boolean): Ajv2020 => {
  const ajv = new Ajv2020({ allErrors: false, strict: false, useDefaults: true, coerceTypes });
  addFormats.default(ajv);
  // JSON Schema's idn-email (RFC 6531 addresses), which ajv-formats lacks: our own address rule.
  ajv.addFormat('idn-email', isValidAddress);
  for (const schema of schemas) ajv.addSchema(schema);
  return ajv;
};

/** One validator per set of schemas: apps with the same limits share its compiled functions. */
const validators = new WeakMap<readonly JsonSchema[], Validator>();

export const createValidator = (schemas: readonly JsonSchema[]): Validator => {
  const known = validators.get(schemas);
  if (known) return known;
  const validator = buildValidator(schemas);
  validators.set(schemas, validator);
  return validator;
};

const buildValidator = (schemas: readonly JsonSchema[]): Validator => {
  // Each schema is compiled on first use, so an app pays only for what it validates.
  const ajvs = { strict: build(schemas, false), coerce: build(schemas, true) };
  const compiled = new Map<string, ValidateFunction>();
  const validatorFor = (schemaId: string, coerce: boolean): ValidateFunction => {
    const key = `${coerce ? 'coerce' : 'strict'}:${schemaId}`;
    let validator = compiled.get(key);
    if (!validator) {
      validator = (coerce ? ajvs.coerce : ajvs.strict).getSchema(schemaId);
      if (!validator) throw new Error(`no schema ${schemaId}`);
      compiled.set(key, validator);
    }
    return validator;
  };
  return {
    validate: <T>(schemaId: string, value: unknown, options: { coerce?: boolean } = {}): T => {
      const validator = validatorFor(schemaId, options.coerce ?? false);
      if (!validator(value)) throw inputErrorOf(validator.errors);
      return value as T;
    },
    schema: (schemaId) => {
      const schema = schemas.find((candidate) => candidate.$id === schemaId);
      if (!schema) throw new Error(`no schema ${schemaId}`);
      return schema;
    },
  };
};

/** The schema files as they are, with the default limits: for code that has no app config. */
const fileValidator = createValidator(SCHEMAS);

export const validateInput = fileValidator.validate;
