import type { Services } from '../services/index.js';

/** The services the imap adapter calls: it is handed these, not the whole set. */
export type ImapServices = Pick<Services, 'imap' | 'imapMail'>;
