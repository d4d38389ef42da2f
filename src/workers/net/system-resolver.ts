import { lookup } from 'node:dns/promises';
import type { AddressResolver } from '../../core/address-resolver.js';

/** The operating system's resolver (getaddrinfo), used when no resolver is injected. */
export const systemAddressResolver: AddressResolver = {
  async resolveAddresses(hostname: string): Promise<string[]> {
    const answers = await lookup(hostname, { all: true, verbatim: true });
    return answers.map((answer) => answer.address);
  },
};
