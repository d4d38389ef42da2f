import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import { validate as isCronExpression } from 'node-cron';
import configSchema from '../../schema/config.json' with { type: 'json' };
import { dnsServerProblem } from '../core/dns.js';
import { acmeDefaults, defaultConfig } from './defaults.js';
import { CONFIG_FILE_ENV, CONFIG_FILE_FLAG, SETTING_SOURCES, type SettingSource } from './settings.js';
import type { Config, ConfigLayer } from './types.js';

/** An invalid setting: the CLI prints it and exits with code 2. */
export class ConfigError extends Error {
  /**
   * @param setting the setting's key in the config (`http.port`), or the config file's own flag/variable
   * @param origin where the bad value came from (`--http-port`, `AGENTPOST_HTTP_PORT`, `file cfg.json`)
   */
  constructor(
    readonly setting: string,
    message: string,
    readonly origin?: string,
  ) {
    super(`invalid setting ${setting}${origin ? ` (from ${origin})` : ''}: ${message}`);
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

/** Which layer set each setting path last, so an error can say where a bad value came from. */
type Origins = Map<string, string>;

/** Defaults, then the JSON file, then the environment, then flags, then overrides. */
export const loadConfig = (inputs: ConfigInputs = {}): Config => {
  const env = inputs.env ?? {};
  const flags = inputs.flags ?? {};
  const origins: Origins = new Map();
  let merged: ConfigLayer = defaultConfig() as unknown as ConfigLayer;
  const apply = (layer: ConfigLayer, originOf: (path: string) => string) => {
    for (const path of leafPaths(layer)) origins.set(path, originOf(path));
    merged = deepMerge(merged, layer);
  };
  const file = configFileOf(env, flags);
  if (file) apply(readConfigFile(file.path, file.origin), () => `file ${file.path}`);
  apply(
    layerFrom(
      SETTING_SOURCES,
      (s) => env[s.env],
      (s) => s.env,
    ),
    (path) => sourceAt(path).env,
  );
  apply(
    layerFrom(
      SETTING_SOURCES,
      (s) => flags[s.flag],
      (s) => `--${s.flag}`,
    ),
    (path) => `--${sourceAt(path).flag}`,
  );
  if (inputs.overrides) apply(inputs.overrides, () => 'overrides');
  return validate(withAcmeDefaults(merged), origins);
};

const configFileOf = (env: NodeJS.ProcessEnv, flags: Record<string, string | true>): { path: string; origin: string } | undefined => {
  const flag = flags[CONFIG_FILE_FLAG];
  if (flag === true) throw new ConfigError(`--${CONFIG_FILE_FLAG}`, 'a file name is required');
  if (flag !== undefined) return { path: flag, origin: `--${CONFIG_FILE_FLAG}` };
  const fromEnv = env[CONFIG_FILE_ENV];
  return fromEnv ? { path: fromEnv, origin: CONFIG_FILE_ENV } : undefined;
};

const readConfigFile = (file: string, origin: string): ConfigLayer => {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(origin, `cannot read ${file}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(origin, `${file} is not valid JSON: ${(error as Error).message}`);
  }
  if (!isPlainObject(parsed)) throw new ConfigError(origin, `${file} must hold a JSON object`);
  return parsed;
};

const sourceAt = (path: string): SettingSource => SETTING_SOURCES.find((source) => source.path === path) as SettingSource;

const layerFrom = (
  sources: readonly SettingSource[],
  readValue: (source: SettingSource) => string | true | undefined,
  nameOf: (source: SettingSource) => string,
): ConfigLayer => {
  const layer: ConfigLayer = {};
  for (const source of sources) {
    const value = readValue(source);
    if (value === undefined) continue;
    setPath(layer, source.path, convert(source, value, nameOf(source)));
  }
  return layer;
};

const convert = (source: SettingSource, value: string | true, origin: string): unknown => {
  if (source.type === 'boolean') {
    if (value === true || value === 'true' || value === '1') return true;
    if (value === 'false' || value === '0') return false;
    throw new ConfigError(source.path, `expected true or false, got "${value}"`, origin);
  }
  if (value === true) throw new ConfigError(source.path, 'a value is required', origin);
  if (source.type === 'list')
    return value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
  if (source.type === 'integer') {
    if (!/^\d+$/.test(value)) throw new ConfigError(source.path, `expected a whole number, got "${value}"`, origin);
    return Number(value);
  }
  return value;
};

const ajv = new Ajv({ allErrors: false, strict: true, verbose: true });
const validateSchema = ajv.compile<Config>(configSchema);

/** What a pattern means, for settings whose pattern alone would be a poor error message. */
const PATTERN_HINTS: Record<string, string> = {
  mailDomain: 'a lowercase domain name with at least two labels, e.g. agents.example.com',
  baseUrl: 'an http:// or https:// URL, e.g. https://mail.example.com',
};

const validate = (candidate: ConfigLayer, origins: Origins): Config => {
  if (!validateSchema(candidate)) {
    const error = validateSchema.errors?.[0] as ErrorObject;
    const path = error.instancePath.replace(/^\//, '').replaceAll('/', '.');
    if (error.keyword === 'additionalProperties') {
      const setting = [path, String(error.params.additionalProperty)].filter(Boolean).join('.');
      throw new ConfigError(setting, 'unknown setting', originFor(origins, setting));
    }
    throw new ConfigError(path || '(root)', describe(error, path), originFor(origins, path));
  }
  assertTimeZone(candidate.timeZone, originFor(origins, 'timeZone'));
  assertDnsServers(candidate.dns.servers, originFor(origins, 'dns.servers'));
  if (!isCronExpression(candidate.domains.recheckSchedule)) {
    throw new ConfigError(
      'domains.recheckSchedule',
      `"${candidate.domains.recheckSchedule}" is not a cron expression (seconds first, e.g. "0 17 3 * * *")`,
      originFor(origins, 'domains.recheckSchedule'),
    );
  }
  if (!isCronExpression(candidate.payments.polygon.watchSchedule)) {
    throw new ConfigError(
      'payments.polygon.watchSchedule',
      `"${candidate.payments.polygon.watchSchedule}" is not a cron expression (seconds first, e.g. "*/20 * * * * *")`,
      originFor(origins, 'payments.polygon.watchSchedule'),
    );
  }
  // A body the budget could never hold would be refused with 503 forever.
  if (candidate.http.maxBufferedBodyBytes < candidate.http.maxBodyBytes) {
    throw new ConfigError(
      'http.maxBufferedBodyBytes',
      `must be at least http.maxBodyBytes (${candidate.http.maxBodyBytes})`,
      originFor(origins, 'http.maxBufferedBodyBytes'),
    );
  }
  if (candidate.http.tls && candidate.tls.cert === undefined && candidate.tls.acme === undefined) {
    throw new ConfigError('http.tls', 'HTTPS needs a certificate: set tls.cert and tls.key, or tls.acme', originFor(origins, 'http.tls'));
  }
  // The CA asks for http-01 in plain HTTP (RFC 8555 section 8.3): an HTTPS listener cannot answer it.
  const acme = candidate.tls.acme;
  if (acme && candidate.tls.cert === undefined && candidate.http.tls && acme.httpPort === candidate.http.port) {
    throw new ConfigError(
      'tls.acme.httpPort',
      `the http-01 challenge needs plain HTTP, and port ${acme.httpPort} is the HTTPS listener (http.tls)`,
      originFor(origins, 'tls.acme.httpPort'),
    );
  }
  assertLimits(candidate.limits, origins);
  return candidate;
};

/** What the schema cannot say about limits: one against another, an order. */
const assertLimits = (limits: Config['limits'], origins: Origins): void => {
  const fail = (path: string, message: string) => {
    throw new ConfigError(`limits.${path}`, message, originFor(origins, `limits.${path}`));
  };
  if (limits.inboxPageDefault > limits.inboxPageMax) {
    fail('inboxPageDefault', `must be at most limits.inboxPageMax (${limits.inboxPageMax}), got ${limits.inboxPageDefault}`);
  }
  const schedule = limits.webhookRetrySeconds;
  if (schedule[0] !== 0) fail('webhookRetrySeconds', `the first attempt is at the event: must start with 0, got ${schedule[0]}`);
  if (schedule.some((seconds, index) => index > 0 && seconds < schedule[index - 1])) fail('webhookRetrySeconds', 'must not decrease');
};

const describe = (error: ErrorObject, path: string): string => {
  const got = error.data !== null && typeof error.data === 'object' ? '' : `, got ${JSON.stringify(error.data)}`;
  if (error.keyword === 'pattern' && PATTERN_HINTS[path]) return `expected ${PATTERN_HINTS[path]}${got}`;
  return `${error.message ?? 'invalid'}${got}`;
};

/** The layer that set this path, or one under it; undefined for a default. */
const originFor = (origins: Origins, path: string): string | undefined => {
  if (origins.has(path)) return origins.get(path);
  for (const [key, origin] of origins) if (key.startsWith(`${path}.`) || path.startsWith(`${key}.`)) return origin;
  return undefined;
};

const assertTimeZone = (timeZone: string, origin: string | undefined): void => {
  if (timeZone === 'UTC') return; // always known; asking Intl would load its time zone data
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
  } catch {
    throw new ConfigError('timeZone', `unknown time zone "${timeZone}"`, origin);
  }
};

const assertDnsServers = (servers: string[], origin: string | undefined): void => {
  for (const server of servers) {
    const problem = dnsServerProblem(server);
    if (problem) throw new ConfigError('dns.servers', problem, origin);
  }
};

/** Any `tls.acme` setting turns ACME on; what it leaves out comes from acmeDefaults. */
const withAcmeDefaults = (merged: ConfigLayer): ConfigLayer => {
  const tls = merged.tls;
  if (!isPlainObject(tls) || !isPlainObject(tls.acme)) return merged;
  return { ...merged, tls: { ...tls, acme: { ...acmeDefaults(), ...tls.acme } } };
};

const isPlainObject = (value: unknown): value is ConfigLayer => typeof value === 'object' && value !== null && !Array.isArray(value);

const leafPaths = (layer: ConfigLayer, prefix = ''): string[] =>
  Object.entries(layer).flatMap(([key, value]) =>
    isPlainObject(value) && Object.keys(value).length > 0 ? leafPaths(value, `${prefix}${key}.`) : [`${prefix}${key}`],
  );

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
