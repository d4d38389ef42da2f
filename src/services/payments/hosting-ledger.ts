import type { HostingLedger } from '../../core/payments.js';
import type { Store } from '../../store/index.js';
import type { HostingService } from '../domains/hosting.js';
import type { DomainPlan } from '../domains/plan.js';

/**
 * Payments extend hosting through the domains part's one place for it (HostingService), each
 * extension recorded with the invoice token as its reference; which domain an add-on may be
 * sold for is the plan's rule (DomainPlan.checkAddon).
 */
export const hostingLedger = (store: Store, hosting: HostingService, plan: DomainPlan): HostingLedger => ({
  extendHosting: async (holderId, days, reference) => {
    await hosting.extendHosting(holderId, days, { source: 'payment', reference });
  },
  extendAddon: async (domainId, days, reference) => {
    await hosting.extendAddon(domainId, days, { source: 'payment', reference });
  },
  holderOf: async (domainId) => (await store.domains.byId(domainId))?.holderId ?? null,
  checkAddon: (holderId, domainId) => plan.checkAddon(holderId, domainId),
  hostingEndsAt: (holderId) => store.hosting.expiresAt(holderId),
});
