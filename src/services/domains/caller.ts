import { AppError } from '../../core/errors.js';
import type { Permission, Principal } from '../../core/types.js';

/**
 * Who calls a domain endpoint, and for which holder (docs/design.md "Domain holder"): the
 * signed-in owner's account for an owner session, the key's account for an API key with
 * domains:* permissions. Every domain, alias and mailbox belongs to one holder.
 */
export interface DomainCaller {
  holderId: string;
  /** domains:read for GET; domains:write for changes and verification (docs/agents/keys.md). */
  permissions: readonly Permission[];
}

/** A key's caller; a key without the permission is refused at the first use (403). */
export const callerOfKey = (principal: Principal): DomainCaller => ({ holderId: principal.accountId, permissions: principal.permissions });

/** A signed-in owner may do everything on its own domains. */
export const callerOfOwner = (ownerAccountId: string): DomainCaller => ({ holderId: ownerAccountId, permissions: ['domains:read', 'domains:write'] });

const requireDomainPermission = (caller: DomainCaller, permission: 'domains:read' | 'domains:write'): void => {
  if (caller.permissions.includes(permission)) return;
  // A mail key cannot manage domains: only kind `domain` has domains:* (docs/agents/keys.md).
  const mailOnly = !caller.permissions.some((held) => held.startsWith('domains:'));
  throw new AppError(
    'forbidden',
    mailOnly ? 'mail keys cannot manage domains; use a key with domains:read or domains:write' : `this key lacks the ${permission} permission`,
  );
};

export const requireDomainRead = (caller: DomainCaller): void => requireDomainPermission(caller, 'domains:read');
export const requireDomainWrite = (caller: DomainCaller): void => requireDomainPermission(caller, 'domains:write');
