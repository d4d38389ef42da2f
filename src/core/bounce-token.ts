import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * docs/design.md "bounce ingestion": the envelope sender of outgoing mail is
 * bounces+<token>@<mailDomain>, token = <recipient row id>-<mac>, where mac is the first 16
 * hex digits (64 bits) of HMAC-SHA256(secret, "bounce:" + id). Lower-case hex only, because
 * some servers fold the case of local parts when they return a DSN.
 */
export const BOUNCE_PREFIX = 'bounces+';
const MAC_HEX = 16;
const TOKEN = /^([0-9a-z][0-9a-z-]{0,40})-([0-9a-f]{16})$/;

const macOf = (secret: Buffer, id: string): string => createHmac('sha256', secret).update(`bounce:${id}`).digest('hex').slice(0, MAC_HEX);

export const bounceToken = (secret: Buffer, recipientId: string | number): string => {
  const id = String(recipientId).toLowerCase();
  return `${id}-${macOf(secret, id)}`;
};

export const bounceAddress = (secret: Buffer, recipientId: string | number, mailDomain: string): string =>
  `${BOUNCE_PREFIX}${bounceToken(secret, recipientId)}@${mailDomain.toLowerCase()}`;

/** True when the address has the bounce shape for our domain, whether or not its token verifies. */
export const isBounceShaped = (address: string, mailDomain: string): boolean => {
  const lower = address.trim().toLowerCase();
  return lower.startsWith(BOUNCE_PREFIX) && lower.endsWith(`@${mailDomain.toLowerCase()}`);
};

/** The recipient row id the address names, or null when it is not ours or the MAC is wrong. */
export const verifyBounceAddress = (secret: Buffer, address: string, mailDomain: string): string | null => {
  if (!isBounceShaped(address, mailDomain)) return null;
  const lower = address.trim().toLowerCase();
  const token = lower.slice(BOUNCE_PREFIX.length, lower.lastIndexOf('@'));
  const match = TOKEN.exec(token);
  if (!match) return null;
  const expected = Buffer.from(macOf(secret, match[1]), 'utf8');
  const given = Buffer.from(match[2], 'utf8');
  // Constant-time comparison, so the MAC cannot be guessed byte by byte from timing.
  return expected.length === given.length && timingSafeEqual(expected, given) ? match[1] : null;
};
