import { isValidAddress } from '../../core/addresses.js';
import { AppError, invalidInput } from '../../core/errors.js';
import type { Store } from '../../store/index.js';

/**
 * A new address on a custom domain from a local part: lowercase (ours compare
 * case-insensitively), a dot-atom (RFC 5322 section 3.4.1) of at most 64 octets (RFC 5321
 * section 4.5.3.1.1).
 */
export const newAddressOn = (localPartInput: string, domain: string): string => {
  const localPart = localPartInput.trim().toLowerCase();
  const address = `${localPart}@${domain}`;
  if (localPart === '' || localPart.includes('@') || !isValidAddress(address)) {
    throw invalidInput('localPart', `"${localPartInput}" is not a valid local part (letters, digits and !#$%&'*+/=?^_\`{|}~- with single dots between)`);
  }
  return address;
};

/** An address names one thing: an alias, or a mailbox (open, or deleted: its address is never given again, so mail for it never reaches someone else). */
export const requireFreeAddress = async (store: Store, address: string): Promise<void> => {
  if ((await store.accounts.addressTaken(address)) || (await store.domainAddresses.aliasExists(address))) {
    throw new AppError('conflict', `${address} is already in use (a mailbox, a deleted mailbox, whose address is never given again, or an alias)`);
  }
};
