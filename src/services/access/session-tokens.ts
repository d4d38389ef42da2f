import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../core/clock.js';

/** The bearer JWT of an owner session: 15 minutes (docs/design.md "Owner sessions"). */
export const SESSION_TOKEN_SECONDS = 15 * 60;

const ALGORITHM = 'HS256';
const ISSUER = 'agentpost';
/** Names where the token is accepted: /api/user/* only, never /api/v1/agent/*. */
const AUDIENCE = 'agentpost:/api/user';

/**
 * jose, loaded at the first sign-in or owner request: a server whose owners never sign in
 * does not carry it (docs/contributing/benchmarks.md, "Libraries loaded when first needed").
 */
let jose: Promise<typeof import('jose')> | undefined;
const loadJose = () => (jose ??= import('jose'));

export interface TokenClaims {
  ownerId: string;
  sessionId: string;
}

/**
 * Signs and checks owner JWTs (RFC 7519) with jose. The algorithm is pinned (RFC 8725
 * section 3.1: never taken from the token's own header), and exp, iss and aud are required
 * and checked against the injected clock. The key is the service's session.key (in secretsDir).
 */
export class SessionTokens {
  private readonly formKey: Buffer;

  constructor(
    private readonly key: Uint8Array,
    private readonly clock: Clock,
  ) {
    // A key of its own for form tokens, derived so one secret is not used for two purposes.
    this.formKey = createHmac('sha256', key).update('agentpost form tokens').digest();
  }

  async sign(claims: TokenClaims): Promise<{ token: string; expiresAt: number }> {
    const issuedAt = Math.floor(this.clock.now().getTime() / 1000);
    const expiresAt = issuedAt + SESSION_TOKEN_SECONDS;
    const { SignJWT } = await loadJose();
    const token = await new SignJWT({ sid: claims.sessionId })
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(claims.ownerId)
      .setIssuedAt(issuedAt)
      .setExpirationTime(expiresAt)
      .sign(this.key);
    return { token, expiresAt: expiresAt * 1000 };
  }

  /** The claims of a token this service signed and that has not expired; null for anything else. */
  async verify(token: string): Promise<TokenClaims | null> {
    const { jwtVerify } = await loadJose();
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: [ALGORITHM],
        issuer: ISSUER,
        audience: AUDIENCE,
        currentDate: this.clock.now(),
        requiredClaims: ['exp', 'iat', 'sub', 'sid'],
      });
      if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string') return null;
      return { ownerId: payload.sub, sessionId: payload.sid };
    } catch {
      return null;
    }
  }

  /** A CSRF token bound to `binding` (a session id, or an anonymous visitor's cookie). */
  formToken(binding: string): string {
    return createHmac('sha256', this.formKey).update(binding).digest('base64url');
  }

  checkFormToken(binding: string, token: string | undefined): boolean {
    if (typeof token !== 'string') return false;
    const expected = Buffer.from(this.formToken(binding));
    const given = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

/** Whether a bearer value has the shape of a JWS compact serialization (RFC 7515 section 7.1). */
export const looksLikeJwt = (value: string): boolean => /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(value);
