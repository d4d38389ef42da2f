import type { Context } from 'koa';
import type { BodyLimits } from '../core/body-budget.js';
import type { Logger } from '../core/logger.js';
import type { ConsoleServices } from './services.js';
import type { OwnerSession } from '../services/owners/sessions.js';

/** What every console page file receives (src/app/adapters.ts builds it). */
export interface ConsoleDeps {
  services: ConsoleServices;
  logger: Logger;
  trustProxy: boolean;
  /** The HTTP listener's body limits: forms are small, a message written in the console may be a send's size. */
  body: BodyLimits;
  /** IANA zone the console shows times in (config timeZone, the zone of daily limits). */
  timeZone: string;
  /** The service's public URL (known once listening): https makes cookies Secure. */
  baseUrl: () => string;
}

export interface ConsoleState {
  /** The signed-in owner, or null for a visitor. */
  owner: OwnerSession | null;
  /** What this visitor's form tokens bind to: the session id, or the visitor cookie. */
  binding: string;
}

export const stateOf = (ctx: Context): ConsoleState => ctx.state as ConsoleState;

/** Pages behind requireSignedIn have an owner. */
export const ownerOf = (ctx: Context): OwnerSession => stateOf(ctx).owner as OwnerSession;
