import type { Config } from './types.js';

/** The embedded defaults: `npm start` on a fresh machine runs with exactly these. */
export const defaultConfig = (): Config => ({
  dataDir: './data',
  mailDomain: 'agents.localhost',
  timeZone: 'UTC',
  http: { host: '127.0.0.1', port: 8080, trustProxy: false, maxBodyBytes: 16 * 1024 * 1024 },
  smtp: { host: '127.0.0.1', port: 2525, hostname: 'localhost', maxMessageBytes: 25 * 1024 * 1024 },
  limits: {
    registrationsPerIpPerHour: 5,
    readMaxBytes: 10 * 1024 * 1024,
    keyRotationMutationsPer15Minutes: 12,
    keyReplacementMinutes: 30,
    factorAttemptsPer15Minutes: 10,
  },
  log: { level: 'info' },
});
