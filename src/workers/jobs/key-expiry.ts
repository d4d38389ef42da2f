import type { Services } from '../../services/index.js';

/**
 * Marks prepared replacement keys that passed their 30 minutes `expired` (DESIGN.md "key
 * rotation"); the original stays the only key. Authentication already refuses them by time,
 * so this keeps the stored state honest for GET /keys and the admin views.
 */
export const keyExpiryRunOnce = (services: Services): { replacementsExpired: number } => ({
  replacementsExpired: services.keyRotation.expireReplacements(),
});
