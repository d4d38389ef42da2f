import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import configSchema from '../../schema/config.json' with { type: 'json' };
import { defaultConfig } from './defaults.js';
import { CONFIG_FILE_ENV, CONFIG_FILE_FLAG, SETTING_SOURCES, type SettingSource } from './settings.js';
import type { Config, ConfigLayer } from './types.js';

/** An invalid setting: the CLI prints it and exits with code 2. */
export class ConfigError extends Error {
  constructor(readonly setting: string, message: string) {
    super(`invalid setting ${setting}: ${message}`);
    this.name = 'ConfigError';
  }
}

export interface ConfigInputs {
  env?: NodeJS.ProcessEnv;
  /** Flags without their leading dashes, e.g. { 'http-port': '0' }. */
  flags?: Record<string, string | true>;
  /** Programmatic overrides applied last (tests build whole apps with these). */
  overrides?: ConfigLayer;
}

/** Defaults, then the JSON file, then the environment, then flags, then overrides. */
export const loadConfig = (inputs: ConfigInputs = {}): Config => {
  const env = inputs.env ?? {};
  const flags = inputs.flags ?? {};
  let merged: ConfigLayer = defaultConfig() as unknown as ConfigLayer;
  const file = flags[CONFIG_FILE_FLAG] ?? env[CONFIG_FILE_ENV];
  if (typeof file === 'string' && file !== '') merged = deepMerge(merged, readConfigFile(file));
  merged = deepMerge(merged, layerFrom(SETTING_SOURCES, (s) => env[s.env], (s) => s.env));
  merged = deepMerge(merged, layerFrom(SETTING_SOURCES, (s) => flags[s.flag], (s) => `--${s.flag}`));
  if (inputs.overrides) merged = deepMerge(merged, inputs.overrides);
  return validate(merged);
};

const readConfigFile = (file: string): ConfigLayer => {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(CONFIG_FILE_FLAG, `cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (!isPlainObject(parsed)) throw new Error('the top level must be an object');
    return parsed;
  } catch (error) {
    throw new ConfigError(CONFIG_FILE_FLAG, `${file} is not a JSON object: ${(error as Error).message}`);
  }
};

const layerFrom = (
  sources: readonly SettingSource[],
  valueOf: (source: SettingSource) => string | true | undefined,
  nameOf: (source: SettingSource) => string,
): ConfigLayer => {
  const layer: ConfigLayer = {};
  for (const source of sources) {
    const value = valueOf(source);
    if (value === undefined) continue;
    setPath(layer, source.path, convert(source, value, nameOf(source)));
  }
  return layer;
};

const convert = (source: SettingSource, value: string | true, name: string): unknown => {
  if (source.type === 'boolean') {
    if (value === true || value === 'true' || value === '1') return true;
    if (value === 'false' || value === '0') return false;
    throw new ConfigError(name, 'expected true or false');
  }
  if (value === true) throw new ConfigError(name, 'a value is required');
  if (source.type === 'integer') {
    if (!/^\d+$/.test(value)) throw new ConfigError(name, `expected a whole number, got "${value}"`);
    return Number(value);
  }
  return value;
};

const ajv = new Ajv({ allErrors: false, strict: true });
const validateSchema = ajv.compile<Config>(configSchema);

const validate = (candidate: ConfigLayer): Config => {
  if (!validateSchema(candidate)) {
    const error = validateSchema.errors?.[0];
    const path = (error?.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.');
    const extra = error?.params && 'additionalProperty' in error.params ? String(error.params.additionalProperty) : '';
    const setting = [path, extra].filter(Boolean).join('.') || '(root)';
    throw new ConfigError(setting, error?.message ?? 'invalid');
  }
  assertTimeZone(candidate.timeZone);
  return candidate;
};

const assertTimeZone = (timeZone: string): void => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
  } catch {
    throw new ConfigError('timeZone', `unknown time zone "${timeZone}"`);
  }
};

const isPlainObject = (value: unknown): value is ConfigLayer =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const deepMerge = (base: ConfigLayer, over: ConfigLayer): ConfigLayer => {
  const out: ConfigLayer = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isPlainObject(current) && isPlainObject(value) ? deepMerge(current, value) : value;
  }
  return out;
};

const setPath = (target: ConfigLayer, path: string, value: unknown): void => {
  const parts = path.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    if (!isPlainObject(node[part])) node[part] = {};
    node = node[part] as ConfigLayer;
  }
  node[parts[parts.length - 1]] = value;
};
