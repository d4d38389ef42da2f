/**
 * The console's cookies (RFC 6265bis). Shared by the REST adapter, which sets the session
 * cookie on POST /api/user/session, and the console, which reads it, so they live in core like
 * bearer.ts.
 *
 * HttpOnly (no script reads them), SameSite=Lax (no cross-site POST carries them), Path=/.
 * With an https baseUrl they are Secure and named with the __Host- prefix (RFC 6265bis
 * section 4.1.3.2: Secure, Path=/ and no Domain, so no sibling host can set or shadow them).
 */
export const SESSION_COOKIE = 'agentpost_session';
/** The console's anonymous visitor token, which form tokens bind to before sign-in. */
export const VISITOR_COOKIE = 'agentpost_visitor';

export const cookieName = (base: string, secure: boolean): string => (secure ? `__Host-${base}` : base);

const attributes = (secure: boolean): string => `Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;

/** A Set-Cookie value; without `expiresAt` the cookie lasts the browser session. */
export const setCookie = (base: string, value: string, secure: boolean, expiresAt?: number): string =>
  `${cookieName(base, secure)}=${value}; ${attributes(secure)}${expiresAt === undefined ? '' : `; Expires=${new Date(expiresAt).toUTCString()}`}`;

export const clearCookie = (base: string, secure: boolean): string => `${cookieName(base, secure)}=; ${attributes(secure)}; Max-Age=0`;

export const sessionCookie = (value: string, expiresAt: number, secure: boolean): string => setCookie(SESSION_COOKIE, value, secure, expiresAt);

export const clearedSessionCookie = (secure: boolean): string => clearCookie(SESSION_COOKIE, secure);

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
