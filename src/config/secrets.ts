import type { Config } from './types.js';

/**
 * The folder of the service's secret keys (`secret.key`, `session.key`, `acme/`): `secretsDir`,
 * or the data folder. Several processes on one data folder are one service only when they read
 * the same keys (docs/design.md, "Several processes on one store").
 */
export const secretsDirOf = (config: Pick<Config, 'dataDir' | 'secretsDir'>): string => config.secretsDir ?? config.dataDir;
