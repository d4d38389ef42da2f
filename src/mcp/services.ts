import type { Services } from '../services/index.js';

/** The services the mcp adapter calls: it is handed these, not the whole set. */
export type McpServices = Pick<Services, 'accounts' | 'auth' | 'balance' | 'junkMarking' | 'mailWait' | 'mailbox' | 'replies' | 'sending' | 'threads'>;
