import { randomBytes } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import { sha256Hex } from '../../core/ids.js';
import type { Store } from '../../store/index.js';
import type { OwnerSessionRecord } from '../../store/owners.js';
import type { TwoFactorService } from '../access/two-factor.js';
import type { RateLimiter } from '../access/rate-limiter.js';
import { PASSWORD_MAX_LENGTH, type Passwords } from './passwords.js';
import type { SessionTokens } from '../access/session-tokens.js';

/** A signed-in owner, as the adapters resolve it from a bearer JWT or the console cookie. */
export interface OwnerSession {
  ownerId: string;
  sessionId: string;
}

/** The answer of a sign-in: the bearer JWT for scripts and the cookie secret for a browser. */
export interface SignedIn {
  token: string;
  expiresAt: string;
  owner: { id: string; email: string };
  /** The console cookie's value and when the session ends; the adapter sets the cookie. */
  cookie: { value: string; expiresAt: number };
  sessionId: string;
}

export interface SignInInput {
  email: string;
  password: string;
  factorCode?: string;
}

export interface SessionsConfig {
  sessionHours: number;
  signInAttemptsPerAccountPer15Minutes: number;
  signInAttemptsPerIpPer15Minutes: number;
}

const FIFTEEN_MINUTES_MS = 15 * 60 * 1000;
/** One answer for an unknown email, a missing password and a wrong one: nothing says which. */
const WRONG = 'wrong email or password';

export const normalizeLogin = (email: string): string => email.trim().toLowerCase();

/**
 * Owner sign-in and sessions. A session is a store row: the JWT names it (`sid`) and the
 * cookie's secret hashes to it, so ending the row (sign-out, password change) refuses both
 * at once, whatever time a JWT has left.
 */
export class OwnerSessionService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly rateLimiter: RateLimiter,
    private readonly passwords: Passwords,
    private readonly twoFactor: TwoFactorService,
    readonly tokens: SessionTokens,
    private readonly config: SessionsConfig,
  ) {}

  /**
   * Every attempt counts, per login name and per client address, before the password is
   * checked, so parallel guesses cannot outrun the limit; unknown names are limited alike.
   */
  async signIn(input: SignInInput, clientIp: string): Promise<SignedIn> {
    const loginEmail = normalizeLogin(input.email);
    await this.rateLimiter.take(
      {
        bucket: 'owner-sign-in-ip',
        limit: this.config.signInAttemptsPerIpPer15Minutes,
        windowMs: FIFTEEN_MINUTES_MS,
        message: 'too many sign-in attempts from this address; try again later',
      },
      clientIp,
    );
    await this.rateLimiter.take(
      {
        bucket: 'owner-sign-in',
        limit: this.config.signInAttemptsPerAccountPer15Minutes,
        windowMs: FIFTEEN_MINUTES_MS,
        message: 'too many sign-in attempts for this account; try again later',
      },
      loginEmail,
    );
    const login = await this.store.owners.loginByEmail(loginEmail);
    const tooLong = input.password.length > PASSWORD_MAX_LENGTH;
    const matches = await this.passwords.verify(tooLong ? null : (login?.passwordHash ?? null), tooLong ? '' : input.password);
    if (!login || !matches) throw new AppError('unauthorized', WRONG);
    const account = await this.store.accounts.byId(login.accountId);
    if (!account) throw new AppError('unauthorized', WRONG);
    if (account.status !== 'active') throw new AppError('forbidden', 'this account is suspended');
    await this.checkFactor(account.id, input.factorCode);
    return this.open(account.id);
  }

  /** Opens a session for an owner whose credentials were just checked. */
  async open(ownerId: string): Promise<SignedIn> {
    const now = this.clock.now().getTime();
    const sessionId = randomBytes(16).toString('hex');
    const cookie = randomBytes(32).toString('base64url');
    const expiresAt = now + this.config.sessionHours * 60 * 60 * 1000;
    await this.store.transaction(() =>
      this.store.owners.insertSession({ id: sessionId, accountId: ownerId, cookieHash: sha256Hex(cookie), createdAt: now, expiresAt }),
    );
    const signed = await this.tokens.sign({ ownerId, sessionId });
    const login = await this.store.owners.loginOf(ownerId);
    return {
      token: signed.token,
      // The JWT never outlives its session.
      expiresAt: new Date(Math.min(signed.expiresAt, expiresAt)).toISOString(),
      owner: { id: ownerId, email: login?.loginEmail ?? '' },
      cookie: { value: cookie, expiresAt },
      sessionId,
    };
  }

  /** The owner of a bearer JWT whose session is still open; null for anything else. */
  async fromBearer(token: string): Promise<OwnerSession | null> {
    const claims = await this.tokens.verify(token);
    if (!claims) return null;
    const session = await this.store.owners.sessionById(claims.sessionId);
    return session && session.accountId === claims.ownerId && (await this.isOpen(session)) ? { ownerId: session.accountId, sessionId: session.id } : null;
  }

  async fromCookie(value: string): Promise<OwnerSession | null> {
    const session = await this.store.owners.sessionByCookie(sha256Hex(value));
    return session && (await this.isOpen(session)) ? { ownerId: session.accountId, sessionId: session.id } : null;
  }

  async signOut(session: OwnerSession): Promise<void> {
    await this.store.transaction(() => this.store.owners.endSession(session.sessionId, this.clock.now().getTime()));
  }

  /** Drops sessions, links and claim codes that ended or expired a day ago or more. */
  async sweep(): Promise<number> {
    return await this.store.transaction(() => this.store.owners.sweep(this.clock.now().getTime() - 24 * 60 * 60 * 1000));
  }

  private async isOpen(session: OwnerSessionRecord): Promise<boolean> {
    if (session.endedAt !== null || session.expiresAt <= this.clock.now().getTime()) return false;
    return (await this.store.accounts.byId(session.accountId))?.status === 'active';
  }

  /** With two-factor on, a right password alone does not sign in (RFC 6238 code, one use). */
  private async checkFactor(ownerId: string, factorCode: string | undefined): Promise<void> {
    if (!(await this.twoFactor.isEnabled(ownerId))) return;
    if (factorCode === undefined || factorCode === '')
      throw new AppError('unauthorized', 'this account has two-factor on: factorCode is required', { field: 'factorCode' });
    try {
      await this.twoFactor.requireFactorIfEnabled(ownerId, factorCode);
    } catch (error) {
      if (error instanceof AppError && error.code === 'forbidden') throw new AppError('unauthorized', error.message, { field: 'factorCode' });
      throw error;
    }
  }
}
