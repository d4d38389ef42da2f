import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { SCHEMAS } from '../../schema/index.js';
import { isValidAddress } from './addresses.js';
import { inputErrorOf } from './input-errors.js';

const build = (coerceTypes: boolean): Ajv2020 => {
  const ajv = new Ajv2020({ allErrors: false, strict: false, useDefaults: true, coerceTypes });
  addFormats.default(ajv);
  // JSON Schema's idn-email (RFC 6531 addresses), which ajv-formats lacks: our own address rule.
  ajv.addFormat('idn-email', isValidAddress);
  for (const schema of SCHEMAS) ajv.addSchema(schema);
  return ajv;
};

/** Bodies are validated as sent; query strings are coerced ("50" to 50, "false" to false). */
const strictAjv = build(false);
const coercingAjv = build(true);

const compiled = new Map<string, ValidateFunction>();

const validatorFor = (schemaId: string, coerce: boolean): ValidateFunction => {
  const key = `${coerce ? 'coerce' : 'strict'}:${schemaId}`;
  let validator = compiled.get(key);
  if (!validator) {
    const ajv = coerce ? coercingAjv : strictAjv;
    validator = ajv.getSchema(schemaId);
    if (!validator) throw new Error(`no schema ${schemaId}`);
    compiled.set(key, validator);
  }
  return validator;
};

/**
 * Validates input against its schema file; defaults from the schema are filled in.
 * A violation is `invalid_input` with a message that names the field and the rule.
 */
export const validateInput = <T>(schemaId: string, value: unknown, options: { coerce?: boolean } = {}): T => {
  const validator = validatorFor(schemaId, options.coerce ?? false);
  if (!validator(value)) throw inputErrorOf(validator.errors);
  return value as T;
};
