import type { Services } from '../services/index.js';

/** The services the console adapter calls: it is handed these, not the whole set. */
export type ConsoleServices = Pick<
  Services,
  | 'aliases'
  | 'approvals'
  | 'doctor'
  | 'domainMailboxes'
  | 'domainVerification'
  | 'domains'
  | 'ownerSessions'
  | 'ownerViews'
  | 'owners'
  | 'ownership'
  | 'payments'
>;
