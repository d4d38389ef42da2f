import { isNoRecords, reverseName, type DnsResolver } from '../../core/dns.js';
import { plainAddress } from '../mail/authentication.js';
import type { BlocklistAnswer } from '../../core/junk.js';

export type { BlocklistAnswer } from '../../core/junk.js';

export const NOT_LISTED: BlocklistAnswer = { listed: [], unanswered: [] };

/**
 * DNS blocklists of the connecting address (RFC 5782): the address's reversed octets (or
 * nibbles for IPv6) under each configured zone; an A record in 127.0.0.0/8 means listed.
 * Answers in 127.255.255.0/24 are a list's refusal to answer (Spamhaus uses them for queries
 * through public resolvers), not a listing, and count as unanswered. Every lookup goes through
 * the service's resolver (`dns.servers`).
 */
export class Blocklists {
  constructor(
    private readonly dns: DnsResolver,
    private readonly zones: readonly string[],
  ) {}

  get enabled(): boolean {
    return this.zones.length > 0;
  }

  async lookup(clientAddress: string): Promise<BlocklistAnswer> {
    const address = plainAddress(clientAddress);
    if (this.zones.length === 0 || address === '0.0.0.0') return NOT_LISTED;
    const prefix = reverseName(address).replace(/\.(in-addr|ip6)\.arpa$/, '');
    const answers = await Promise.all(this.zones.map(async (zone) => ({ zone, state: await this.ask(`${prefix}.${zone}`) })));
    return {
      listed: answers.filter((answer) => answer.state === 'listed').map((answer) => answer.zone),
      unanswered: answers.filter((answer) => answer.state === 'unanswered').map((answer) => answer.zone),
    };
  }

  private async ask(name: string): Promise<'listed' | 'clean' | 'unanswered'> {
    try {
      const addresses = await this.dns.resolve4(name);
      if (addresses.some((value) => value.startsWith('127.255.255.'))) return 'unanswered';
      return addresses.some((value) => value.startsWith('127.')) ? 'listed' : 'clean';
    } catch (error) {
      return isNoRecords(error) ? 'clean' : 'unanswered';
    }
  }
}
