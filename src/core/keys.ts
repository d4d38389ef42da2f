import { randomHex, sha256Hex } from './ids.js';

/** Key formats: docs/design.md "keys", docs/agents/keys.md. */
export const FULL_KEY_PREFIX = 'svc_';
export const ACCESS_KEY_PREFIX = 'svc_access_';

export const FULL_KEY_PATTERN = /^svc_[0-9a-f]{64}$/;
export const ACCESS_KEY_PATTERN = /^svc_access_[0-9a-f]{64}$/;

export type KeyKind = 'full' | 'access';

export const newFullKey = (): string => FULL_KEY_PREFIX + randomHex(32);
export const newAccessKey = (): string => ACCESS_KEY_PREFIX + randomHex(32);

/** Keys are stored only as SHA-256 hashes (docs/design.md "Durability and correctness"). */
export const hashKey = (secret: string): string => sha256Hex(secret);

export const keyKindOf = (secret: string): KeyKind | null => {
  if (ACCESS_KEY_PATTERN.test(secret)) return 'access';
  if (FULL_KEY_PATTERN.test(secret)) return 'full';
  return null;
};
