import { randomBytes } from 'node:crypto';
import type { Argon2Loader, Argon2Options } from '../../core/passwords.js';
import { invalidInput } from '../../core/errors.js';

/**
 * Argon2id with the parameters of the OWASP Password Storage Cheat Sheet (19 MiB, 2 passes,
 * 1 lane; RFC 9106 section 4 names Argon2id the one to use). The PHC string stores them, so
 * stronger settings later still verify older hashes.
 */
export const ARGON2_OPTIONS: Argon2Options = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export const PASSWORD_MIN_LENGTH = 12;
/** A bound on the work one request can ask of the KDF. */
export const PASSWORD_MAX_LENGTH = 1024;

/** Minimum 12 characters (counted as code points), at most 1024. */
export const checkPasswordPolicy = (password: string, field = 'password'): void => {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) throw invalidInput(field, `the password needs at least ${PASSWORD_MIN_LENGTH} characters`);
  if (length > PASSWORD_MAX_LENGTH) throw invalidInput(field, `the password may have at most ${PASSWORD_MAX_LENGTH} characters`);
};

export class Passwords {
  /** Verified against when there is no hash to check, so a missing login costs what a wrong password does. */
  private decoy: Promise<string> | null = null;

  constructor(private readonly load: Argon2Loader) {}

  async hash(password: string): Promise<string> {
    return (await this.load()).hash(password, ARGON2_OPTIONS);
  }

  /** False for a null hash too, after the same work as a real check. */
  async verify(hash: string | null, password: string): Promise<boolean> {
    const argon2 = await this.load();
    if (hash !== null) return argon2.verify(hash, password);
    this.decoy ??= argon2.hash(randomBytes(16).toString('hex'), ARGON2_OPTIONS);
    await argon2.verify(await this.decoy, password);
    return false;
  }
}
