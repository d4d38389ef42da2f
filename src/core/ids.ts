import { createHash, randomBytes, randomInt, randomUUID } from 'node:crypto';

export const newUuid = (): string => randomUUID();

export const randomHex = (bytes: number): string => randomBytes(bytes).toString('hex');

const LOWER_ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';

export const randomLowerAlnum = (length: number): string => {
  let out = '';
  for (let i = 0; i < length; i += 1) out += LOWER_ALNUM[randomInt(LOWER_ALNUM.length)];
  return out;
};

export const sha256Hex = (value: string | Buffer): string => createHash('sha256').update(value).digest('hex');

/** IMAP UIDVALIDITY is a nonzero 32-bit unsigned number (RFC 3501 section 2.3.1.1). */
export const newUidValidity = (): number => randomInt(1, 0xffffffff);
