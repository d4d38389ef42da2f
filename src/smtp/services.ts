import type { Services } from '../services/index.js';

/** The services the smtp adapter calls: it is handed these, not the whole set. */
export type SmtpServices = Pick<Services, 'auth' | 'inbound' | 'sending'>;
