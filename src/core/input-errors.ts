import type { ErrorObject } from 'ajv';
import { AppError } from './errors.js';

/**
 * Turns ajv's errors into one message that names the rule the caller broke. A field that takes
 * several forms (`to`: a string or an array) fails every branch of its `anyOf`, and the first
 * branch's "must be string" hides the real rule ("too many items"); so the error that got
 * furthest into the value wins: the deepest path, then a rule other than the type.
 */
const COMBINATORS = new Set(['anyOf', 'oneOf', 'allOf', 'if', 'not']);

const depthOf = (error: ErrorObject): number => (error.instancePath === '' ? 0 : error.instancePath.split('/').length - 1);

const rank = (error: ErrorObject): number => depthOf(error) * 2 + (error.keyword === 'type' ? 0 : 1);

const fieldOf = (error: ErrorObject): string => {
  const path = error.instancePath.replace(/^\//, '').replaceAll('/', '.');
  const params = error.params as Record<string, unknown>;
  return [path, params.missingProperty ?? params.additionalProperty].filter(Boolean).join('.') || 'body';
};

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  array: 'an array',
  object: 'an object',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  null: 'null',
};

const typeNames = (errors: ErrorObject[], path: string): string => {
  const types = errors
    .filter((error) => error.keyword === 'type' && error.instancePath === path)
    .flatMap((error) => String((error.params as { type: string }).type).split(','));
  return [...new Set(types)].map((type) => TYPE_NAMES[type] ?? type).join(' or ');
};

const ruleOf = (error: ErrorObject, errors: ErrorObject[]): string => {
  const { limit, allowedValues } = error.params as { limit?: number; allowedValues?: unknown[] };
  switch (error.keyword) {
    case 'type':
      return `must be ${typeNames(errors, error.instancePath)}`;
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'maxItems':
      return `has too many items: at most ${limit}`;
    case 'minItems':
      return limit === 1 ? 'must not be an empty list' : `has too few items: at least ${limit}`;
    case 'maxLength':
      return `is too long: at most ${limit} characters`;
    case 'minLength':
      return limit === 1 ? 'must not be empty' : `is too short: at least ${limit} characters`;
    case 'maxProperties':
      return `has too many fields: at most ${limit}`;
    case 'maximum':
      return `must be at most ${limit}`;
    case 'minimum':
      return `must be at least ${limit}`;
    case 'enum':
      return `must be one of ${allowedValues?.map((value) => JSON.stringify(value)).join(', ')}`;
    default:
      return error.message ?? 'is invalid';
  }
};

export const inputErrorOf = (errors: ErrorObject[] | null | undefined): AppError => {
  const candidates = (errors ?? []).filter((error) => !COMBINATORS.has(error.keyword));
  if (candidates.length === 0) return new AppError('invalid_input', 'invalid request');
  const chosen = candidates.reduce((best, error) => (rank(error) > rank(best) ? error : best));
  const field = fieldOf(chosen);
  return new AppError('invalid_input', `${field} ${ruleOf(chosen, candidates)}`, { field });
};
