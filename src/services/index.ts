import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Store } from '../store/index.js';
import { AccountService } from './accounts.js';
import { AuthService } from './auth.js';
import { InboundService } from './inbound.js';
import { MailboxService } from './mailbox.js';
import { RateLimiter } from './rate-limiter.js';

/** The settings services need; main.ts derives them from the validated config. */
export interface ServicesConfig {
  mailDomain: string;
  smtpHostname: string;
  registrationsPerIpPerHour: number;
  readMaxBytes: number;
}

export interface ServiceDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  config: ServicesConfig;
}

export interface Services {
  accounts: AccountService;
  auth: AuthService;
  mailbox: MailboxService;
  inbound: InboundService;
  rateLimiter: RateLimiter;
}

export const createServices = ({ store, clock, config }: ServiceDeps): Services => {
  const rateLimiter = new RateLimiter(store, clock);
  const mailbox = new MailboxService(store, clock, config.readMaxBytes);
  const accounts = new AccountService(store, clock, rateLimiter, mailbox, {
    mailDomain: config.mailDomain,
    registrationsPerIpPerHour: config.registrationsPerIpPerHour,
  });
  return {
    accounts,
    auth: new AuthService(store, clock),
    mailbox,
    inbound: new InboundService(store, clock, mailbox, config.smtpHostname),
    rateLimiter,
  };
};
