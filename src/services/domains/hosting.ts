import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import type { Store } from '../../store/index.js';
import type { HostingSource } from '../../store/hosting.js';

/** A holder's paid access: `active` while `expiresAt` is in the future. */
export interface Hosting {
  active: boolean;
  expiresAt: string | null;
}

export interface Extension {
  source: HostingSource;
  /** The invoice token of a payment, or who granted it. */
  reference?: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** Ten years at once is more than any plan sells; a larger number is a typo. */
const MAX_DAYS = 3650;

/**
 * The one place hosting state lives (per domain holder, with an expiry): operator grants and
 * payments extend it, the domain services read it. Extensions add to the later of now and the
 * current end, so buying early loses nothing. Each runs in the caller's transaction when there
 * is one (a payment applies its invoice and the hosting together).
 */
export class HostingService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  async hostingOf(holderId: string): Promise<Hosting> {
    const expiresAt = await this.store.hosting.expiresAt(holderId);
    return { active: expiresAt !== null && expiresAt > this.now(), expiresAt: expiresAt === null ? null : new Date(expiresAt).toISOString() };
  }

  async isActive(holderId: string): Promise<boolean> {
    return (await this.hostingOf(holderId)).active;
  }

  async extendHosting(holderId: string, days: number, extension: Extension): Promise<Hosting> {
    checkDays(days);
    const now = this.now();
    const expiresAt = await this.store.transaction(async () => {
      if (!(await this.store.accounts.byId(holderId))) throw new AppError('not_found', 'no such account');
      const end = await this.store.hosting.extend(holderId, now, days * DAY_MS);
      await this.store.hosting.record({
        holderId,
        domainId: null,
        days,
        source: extension.source,
        reference: extension.reference ?? null,
        expiresAt: end,
        createdAt: now,
      });
      return end;
    });
    return { active: true, expiresAt: new Date(expiresAt).toISOString() };
  }

  /**
   * `agentpost hosting grant <email> <days>`: the operator's grant, while payments are paused
   * the only source of hosting. The email names the holder: an owner's login email, or an
   * account's mailbox address.
   */
  async grant(email: string, days: number): Promise<{ holder: string; hosting: Hosting }> {
    const wanted = email.trim().toLowerCase();
    const login = await this.store.owners.loginByEmail(wanted);
    const account = login ? await this.store.accounts.byId(login.accountId) : await this.store.accounts.byEmail(wanted);
    if (!account) throw new AppError('not_found', `no owner login or account address ${email}`);
    return { holder: account.email, hosting: await this.extendHosting(account.id, days, { source: 'grant', reference: 'operator' }) };
  }

  /**
   * A domain add-on: an extra domain beyond the plan's, paid for `days` (the payments part
   * sells it per domain). Returns the add-on's new end.
   */
  async extendAddon(domainId: string, days: number, extension: Extension): Promise<string> {
    checkDays(days);
    const now = this.now();
    return await this.store.transaction(async () => {
      const domain = await this.store.domains.byId(domainId);
      if (!domain) throw new AppError('not_found', 'no such domain');
      const end = (await this.store.domains.extendAddon(domainId, now, days * DAY_MS)) as number;
      await this.store.hosting.record({
        holderId: domain.holderId,
        domainId,
        days,
        source: extension.source,
        reference: extension.reference ?? null,
        expiresAt: end,
        createdAt: now,
      });
      return new Date(end).toISOString();
    });
  }

  private now(): number {
    return this.clock.now().getTime();
  }
}

const checkDays = (days: number): void => {
  if (!Number.isSafeInteger(days) || days < 1 || days > MAX_DAYS) throw new AppError('invalid_input', `days must be a whole number from 1 to ${MAX_DAYS}`);
};
