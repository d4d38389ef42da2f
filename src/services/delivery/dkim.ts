import { generateKeyPairSync } from 'node:crypto';
import { normalizeDomainName } from '../../core/domain-name.js';
import { invalidInput } from '../../core/errors.js';
import type { Clock } from '../../core/clock.js';
import type { DkimKey } from '../../core/outbound.js';
import { unseal } from '../../core/seal.js';
import type { Store } from '../../store/index.js';

export interface GeneratedDkimKey {
  domain: string;
  selector: string;
  /** `<selector>._domainkey.<domain>` */
  recordName: string;
  /** The TXT value, `v=DKIM1; k=rsa; p=<base64 SubjectPublicKeyInfo>` (RFC 6376 section 3.6.1). */
  recordValue: string;
  /** A zone-file line; the value split into strings of at most 255 octets (RFC 1035 section 3.3.14). */
  zoneLine: string;
}

const SELECTOR = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
export const DEFAULT_SELECTOR = 'agentpost';

/**
 * DKIM keys per sending domain, used when mail from that domain leaves: the operator's (for
 * `mailDomain`, generated with `agentpost dkim generate`), and each custom domain's own key,
 * made when the domain was added and used once its ownership is proven.
 */
export class DkimService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /** The service's secret key (secretsDir, src/config/secrets.ts), which seals custom domains' private keys. */
    private readonly secretKey: Buffer,
  ) {}

  /** `agentpost dkim generate <domain>`: a new RSA 2048 key replaces the domain's old one. */
  async generate(domainInput: string, selectorInput = DEFAULT_SELECTOR): Promise<GeneratedDkimKey> {
    const domain = normalizeDomainName(domainInput);
    const selector = selectorInput.trim().toLowerCase();
    if (domain === null) throw invalidInput('domain', `"${domainInput}" is not a domain name`);
    if (!SELECTOR.test(selector)) throw invalidInput('selector', `"${selectorInput}" is not a valid selector`);
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const publicKeyB64 = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    await this.store.transaction(() =>
      this.store.dkimKeys.put({
        domain,
        selector,
        publicKeyB64,
        createdAt: this.clock.now().getTime(),
        privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      }),
    );
    return describe(domain, selector, publicKeyB64);
  }

  /** The published record of the domain's current key, or null when it has none. */
  async record(domain: string): Promise<GeneratedDkimKey | null> {
    const custom = await this.store.domains.provenByName(domain.toLowerCase());
    if (custom) return describe(custom.domain, custom.dkimSelector, custom.dkimPublicKey);
    const key = await this.store.dkimKeys.byDomain(domain.toLowerCase());
    return key ? describe(key.domain, key.selector, key.publicKeyB64) : null;
  }

  /**
   * The signing key for mail whose From address is on `domain`: a custom domain's own key
   * once its ownership was proven (an address on it exists only then), else the operator's.
   */
  async keyFor(domain: string): Promise<DkimKey | null> {
    const custom = await this.store.domains.provenByName(domain.toLowerCase());
    if (custom) return { domain: custom.domain, selector: custom.dkimSelector, privateKeyPem: unseal(this.secretKey, custom.dkimPrivateKey) };
    const key = await this.store.dkimKeys.byDomain(domain.toLowerCase());
    return key ? { domain: key.domain, selector: key.selector, privateKeyPem: key.privateKeyPem } : null;
  }
}

const describe = (domain: string, selector: string, publicKeyB64: string): GeneratedDkimKey => {
  const recordName = `${selector}._domainkey.${domain}`;
  const recordValue = `v=DKIM1; k=rsa; p=${publicKeyB64}`;
  const strings: string[] = [];
  for (let at = 0; at < recordValue.length; at += 255) strings.push(`"${recordValue.slice(at, at + 255)}"`);
  return { domain, selector, recordName, recordValue, zoneLine: `${recordName} IN TXT ${strings.join(' ')}` };
};
