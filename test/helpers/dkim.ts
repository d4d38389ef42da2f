import { createHash, verify as verifySignature, type KeyObject } from 'node:crypto';

/**
 * A small RFC 6376 verifier for relaxed/relaxed, enough to check our own signatures
 * independently of the signer. `key` is a public KeyObject or PEM.
 */
export const verifyDkim = (message: string, key: KeyObject | string): boolean => {
  const [head, ...rest] = message.split('\r\n\r\n');
  const body = rest.join('\r\n\r\n');
  const fields = head
    .replace(/\r\n[ \t]/g, (m) => `\u0000${m.slice(2)}`)
    .split('\r\n')
    .map((f) => f.replaceAll('\u0000', '\r\n '));
  const signatureField = fields.find((f) => /^dkim-signature:/i.test(f)) as string;
  const tags = new Map(
    signatureField
      .slice(signatureField.indexOf(':') + 1)
      .split(';')
      .map((p) => p.trim())
      .filter(Boolean)
      .map((p) => [p.slice(0, p.indexOf('=')).trim(), p.slice(p.indexOf('=') + 1).replace(/\s+/g, '')]),
  );
  const relaxHeader = (f: string) => {
    const colon = f.indexOf(':');
    return `${f.slice(0, colon).toLowerCase().trim()}:${f
      .slice(colon + 1)
      .replace(/\r\n/g, '')
      .replace(/[ \t]+/g, ' ')
      .trim()}`;
  };
  const relaxedBody = body
    .split('\r\n')
    .map((l) => l.replace(/[ \t]+/g, ' ').replace(/ $/, ''))
    .join('\r\n')
    .replace(/(\r\n)*$/, '\r\n');
  if (createHash('sha256').update(relaxedBody).digest('base64') !== tags.get('bh')) return false;
  const signed = (tags.get('h') as string)
    .split(':')
    .map((name) => fields.find((f) => f.toLowerCase().startsWith(`${name.toLowerCase()}:`)))
    .filter(Boolean) as string[];
  const unsignedSelf = relaxHeader(signatureField)
    .replace(/b=[^;]*$/, 'b=')
    .replace(/(;\s*b=)[^;]*/, '$1');
  const data = signed.map((f) => `${relaxHeader(f)}\r\n`).join('') + unsignedSelf;
  return verifySignature('sha256', Buffer.from(data), key, Buffer.from(tags.get('b') as string, 'base64'));
};
