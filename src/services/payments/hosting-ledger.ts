import type { HostingLedger } from '../../core/payments.js';
import type { Store } from '../../store/index.js';
import type { HostingService } from '../domains/hosting.js';

/**
 * Payments extend hosting through the domains part's one place for it (HostingService), each
 * extension recorded with the invoice token as its reference.
 */
export const hostingLedger = (store: Store, hosting: HostingService): HostingLedger => ({
  extendHosting: (holderId, days, reference) => void hosting.extendHosting(holderId, days, { source: 'payment', reference }),
  extendAddon: (domainId, days, reference) => void hosting.extendAddon(domainId, days, { source: 'payment', reference }),
  holderOf: (domainId) => store.domains.byId(domainId)?.holderId ?? null,
  hostingEndsAt: (holderId) => store.hosting.expiresAt(holderId),
});
