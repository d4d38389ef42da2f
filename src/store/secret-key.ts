import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The service's 32-byte secret key (`secret.key`, mode 0600, hex) in the secrets folder
 * (config `secretsDir`, default the data folder; every process of the service reads the same),
 * created on first start. It seals secrets the service must read back (TOTP seeds, DKIM private
 * keys) so that a copy of the database alone does not reveal them. Losing it invalidates
 * enrolled second factors.
 */
export const loadSecretKey = (secretsDir: string): Buffer => loadKeyFile(secretsDir, 'secret.key');

/**
 * The service's 32-byte key that signs owner session JWTs (`session.key`, beside
 * `secret.key`, same format). Replacing the file signs every owner out.
 */
export const loadSessionKey = (secretsDir: string): Buffer => loadKeyFile(secretsDir, 'session.key');

const loadKeyFile = (secretsDir: string, name: string): Buffer => {
  const file = join(secretsDir, name);
  try {
    return parse(readFileSync(file, 'utf8'), file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(secretsDir, { recursive: true });
  // Written whole under a name of its own, then linked into place: a process starting beside
  // this one finds no file or the whole key, never a file still empty (link fails if one exists).
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(draft, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(draft, file);
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(draft);
  }
  return parse(readFileSync(file, 'utf8'), file);
};

const parse = (text: string, file: string): Buffer => {
  const hex = text.trim();
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`${file} is not 64 hex characters`);
  return Buffer.from(hex, 'hex');
};
