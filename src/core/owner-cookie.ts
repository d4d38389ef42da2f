/**
 * The console's session cookie (RFC 6265bis). Shared by the REST adapter, which sets it on
 * POST /api/user/session, and the console, which reads it, so it lives in core like bearer.ts.
 *
 * HttpOnly (no script reads it), SameSite=Lax (no cross-site POST carries it), Path=/.
 * With an https baseUrl it is Secure and named with the __Host- prefix (RFC 6265bis
 * section 4.1.3.2: Secure, Path=/ and no Domain, so no sibling host can set or shadow it).
 */
const PLAIN_NAME = 'agentpost_session';
const HOST_NAME = '__Host-agentpost_session';

export const sessionCookieName = (secure: boolean): string => (secure ? HOST_NAME : PLAIN_NAME);

const attributes = (secure: boolean): string => `Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;

export const sessionCookie = (value: string, expiresAt: number, secure: boolean): string =>
  `${sessionCookieName(secure)}=${value}; ${attributes(secure)}; Expires=${new Date(expiresAt).toUTCString()}`;

export const clearedSessionCookie = (secure: boolean): string =>
  `${sessionCookieName(secure)}=; ${attributes(secure)}; Max-Age=0`;

/** The value of cookie `name` in a Cookie header (RFC 6265 section 5.4), or null. */
export const readCookie = (header: string | undefined, name: string): string | null => {
  for (const pair of (header ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return null;
};

/** Whether cookies get Secure: when the service is reached over https (config baseUrl). */
export const isSecureBase = (baseUrl: string): boolean => baseUrl.startsWith('https://');
