import { isIP } from 'node:net';
import { acmeInUse } from '../config/acme.js';
import { secretsDirOf } from '../config/secrets.js';
import type { Config } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { AcmeFolder } from './acme-files.js';
import { AcmeClientIssuer, ChallengeBoard } from './acme-issuer.js';
import { AcmeRenewal, type ServedCertificates } from './acme-renewal.js';
import { readTrustAnchors } from './trust-anchors.js';

/** Certificates by ACME: the renewal, and the http-01 challenges its orders leave for the listener. */
export interface Acme {
  renewal: AcmeRenewal;
  challenges: ChallengeBoard;
}

export interface AcmeDeps {
  logger: Logger;
  clock: Clock;
  /** The MTA-STS policy hosts (`mta-sts.<domain>`) of verified domains that point here: the certificate covers them. */
  policyHosts: () => Promise<string[]>;
  /** acme-client's pause between looks at a pending order; tests shorten it. */
  pollMs?: number;
}

/** Null unless certificates come by ACME (`tls.acme` set, `tls.cert` not); reads `tls.acme.caFile` (a bad one stops the start). */
export const createAcme = (config: Config, certificates: ServedCertificates | null, deps: AcmeDeps): Acme | null => {
  const settings = acmeInUse(config);
  if (config.tls.acme && config.tls.cert) deps.logger.warn('tls.acme is not used: tls.cert is set, and its files are served');
  if (!settings || !certificates) return null;
  const folder = new AcmeFolder(secretsDirOf(config));
  const challenges = new ChallengeBoard();
  const issuer = new AcmeClientIssuer(
    {
      directoryUrl: settings.directoryUrl,
      email: settings.email,
      extraCa: settings.caFile ? readTrustAnchors(settings.caFile, 'tls.acme.caFile') : undefined,
      pollMs: deps.pollMs,
    },
    (make) => folder.accountKey(make),
    challenges,
  );
  const names = async () => settings.hostnames ?? defaultAcmeNames(config, await deps.policyHosts());
  const renewal = new AcmeRenewal({ directoryUrl: settings.directoryUrl, names, folder, issuer, certificates, clock: deps.clock, logger: deps.logger });
  return { renewal, challenges };
};

/**
 * `smtp.hostname` (the MX name senders check), the host of `baseUrl`, and the policy hosts
 * (`mta-sts.<domain>`, RFC 8461 section 3.3) of verified domains, leaving out what no CA
 * certifies by http-01: IP addresses and loopback names.
 */
export const defaultAcmeNames = (config: Config, policyHosts: string[]): string[] => {
  const base = config.baseUrl ? new URL(config.baseUrl).hostname : null;
  const names = [config.smtp.hostname, base, ...policyHosts]
    .filter((name): name is string => name !== null)
    .map((name) => name.toLowerCase().replace(/\.$/, ''));
  return [...new Set(names)].filter((name) => name.includes('.') && isIP(name) === 0 && !name.endsWith('.localhost'));
};
