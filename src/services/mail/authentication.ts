import { isIP } from 'node:net';
import type { arc, AuthStatus, DKIMVerifyOptions, DKIMVerifyResult, SPFResult } from 'mailauth';
import {
  bestDkim,
  internalVerdict,
  judge,
  type ArcResult,
  type AuthenticateMail,
  type AuthenticationVerdict,
  type CheckedMessage,
  type DkimResult,
  type DmarcResult,
  type SmtpEnvelope,
  type SpfResult,
} from '../../core/authentication.js';
import { resolveByType, withAnswerCache, type DnsResolver } from '../../core/dns.js';
import { authenticationResultsField } from '../../mime/authentication-results.js';

/**
 * `smtp.authenticationChecks` off (a relay in front judged the mail): no verdict, and our field
 * says so (RFC 8601 section 2.2, `none`: no method was applied).
 */
export const uncheckedMail = (authservId: string): AuthenticateMail => {
  const field = authenticationResultsField(authservId, []);
  return async () => ({ verdict: null, field });
};

let mailauth: Promise<typeof import('mailauth')> | undefined;
/**
 * mailauth, loaded when the first message is judged (or the first deployment check runs): it
 * and the data it carries (public suffixes) take megabytes of RSS (docs/contributing/benchmarks.md,
 * "Libraries loaded when first needed"), which a server that has received nothing yet, and every
 * admin command, do without.
 */
export const loadMailauth = () => (mailauth ??= import('mailauth'));

/**
 * Judges received mail: SPF for the client and envelope, DKIM signatures, ARC chain and DMARC
 * for the From domain (mailauth), every lookup through the service's resolver. `authservId`
 * is `smtp.hostname`, the name our Authentication-Results fields carry.
 */
/**
 * How long the checks reuse a DNS answer (src/core/dns.ts withAnswerCache): long enough that a
 * burst from one sender asks each of its records once, short enough that a published change
 * (a rotated DKIM key, a new SPF policy) counts within seconds.
 */
const ANSWER_CACHE = { ttlMs: 30_000, maxEntries: 10_000 };

/**
 * The DKIM signatures tried per message, the first ones of the header (RFC 6376 section 6.1
 * lets a verifier limit them): each costs a lookup and, with its own l= or canonicalization,
 * a pass over the body, and the sender decides how many there are. Real mail has one to four
 * (an author's domain, an ESP, a list). `maxSignatures` is our patch to mailauth
 * (patches/README.md), typed here so this compiles against an unpatched copy too.
 */
const MAX_DKIM_SIGNATURES = 10;

export class MessageAuthenticator {
  private readonly resolver: (name: string, type: string) => Promise<unknown>;

  constructor(
    dns: DnsResolver,
    private readonly authservId: string,
    /** Lookups still running after this long are recorded as temperror, so the client gets its answer. */
    private readonly timeoutMs: number,
  ) {
    this.resolver = withAnswerCache(resolveByType(dns), { ...ANSWER_CACHE, now: () => performance.now() });
  }

  /** An AuthenticateMail; `now` judges signature expiry (RFC 6376 section 3.5 x=). */
  readonly check = async (raw: Buffer, envelope: SmtpEnvelope, now: Date): Promise<CheckedMessage> => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), this.timeoutMs);
    });
    try {
      const checked = await Promise.race([this.evaluate(raw, envelope, now), timedOut]);
      return checked ?? uncheckedResult(this.authservId, `lookups took longer than ${this.timeoutMs} ms`);
    } catch (error) {
      // A message the verifier cannot handle is stored unjudged rather than refused over and over.
      return uncheckedResult(this.authservId, `the checks failed: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  };

  /** Our verdict field on mail a mailbox of this service sent, authenticated by its key (RFC 8601 `auth`). */
  internalField(sender: string): string {
    return authenticationResultsField(this.authservId, [`auth=pass smtp.auth=${sender}`]);
  }

  internalVerdict(): AuthenticationVerdict {
    return internalVerdict();
  }

  private async evaluate(raw: Buffer, envelope: SmtpEnvelope, now: Date): Promise<CheckedMessage> {
    const { arc, dkimVerify, dmarc, spf } = await loadMailauth();
    const resolver = this.resolver as never;
    const ip = plainAddress(envelope.clientAddress);
    const helo = envelope.helo || `[${ip}]`;
    const dkimOptions: DKIMVerifyOptions & { maxSignatures: number } = {
      resolver,
      sender: envelope.mailFrom || undefined,
      curTime: now,
      maxSignatures: MAX_DKIM_SIGNATURES,
    };
    // SPF needs only the envelope, DKIM only the message: both at once; ARC and DMARC need DKIM's parse.
    const [dkimResult, spfResult] = await Promise.all([
      dkimVerify(raw, dkimOptions),
      // RFC 7208 section 2.4: with a null reverse-path, SPF checks postmaster@<HELO name>.
      spf({ ip, helo, sender: envelope.mailFrom || `postmaster@${helo}`, mta: this.authservId, resolver }),
    ]);
    const arcResult = await arc(arcData(dkimResult), { resolver });
    const spfPassDomain = spfResult.status.result === 'pass' ? [spfResult.domain] : [];
    const dmarcResult =
      dkimResult.headerFrom.length === 0
        ? null
        : await dmarc({
            headerFrom: dkimResult.headerFrom,
            spfDomains: spfPassDomain,
            dkimDomains: dkimResult.results
              .filter((row) => row.status.result === 'pass')
              // As mailauth's own authenticate() passes them (underSized is a byte count despite its typing).
              .map((row) => ({ id: row.id, domain: row.signingDomain, aligned: row.status.aligned, underSized: row.status.underSized })),
            arcResult,
            resolver,
          });
    const results = {
      spf: spfOf(spfResult),
      dkim: bestDkim(dkimResult.results.map((row) => dkimOf(row.status))),
      // RFC 7489 section 6.6.1 wants exactly one From author; mailauth answers false for several.
      dmarc: dkimResult.headerFrom.length === 0 ? 'none' : dmarcResult ? dmarcOf(dmarcResult.status) : 'permerror',
      arc: arcOf(arcResult.status),
    } as const;
    const rows = [
      ...dkimResult.results.map((row) => row.info),
      spfResult.info,
      arcResult.info ?? `arc=${results.arc}`,
      dmarcResult ? dmarcResult.info : `dmarc=${results.dmarc}`,
    ];
    return { verdict: judge(results, fromDomain(dkimResult)), field: authenticationResultsField(this.authservId, rows) };
  }
}

/**
 * The checks did not finish (timed out, stopped or failed): every result temperror, the
 * message is stored, and its sender counts as unverified. `why` is said in the verdict's
 * reason and in our Authentication-Results field.
 */
export const uncheckedResult = (authservId: string, why: string): CheckedMessage => {
  const results = { spf: 'temperror', dkim: 'temperror', dmarc: 'temperror', arc: 'temperror' } as const;
  const comment = `(${why.replace(/[()\\]/g, ' ')})`;
  return {
    verdict: { ...judge(results, null), reason: `the sender could not be checked: ${why}` },
    field: authenticationResultsField(authservId, [`spf=temperror ${comment}`, `dkim=temperror ${comment}`, `dmarc=temperror ${comment}`]),
  };
};

/** The socket reports IPv4 clients of a dual-stack listener as ::ffff:a.b.c.d; 0.0.0.0 for what is no address. */
export const plainAddress = (address: string): string => {
  const mapped = address.match(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i);
  const plain = mapped ? mapped[1] : address;
  return isIP(plain) ? plain : '0.0.0.0';
};

/** mailauth keeps the ARC chain it parsed on a hidden property of the DKIM result. */
const arcData = (result: DKIMVerifyResult) => (result.arc ?? { chain: [] }) as Parameters<typeof arc>[0];

const fromDomain = (result: DKIMVerifyResult): string | null => {
  const [address] = result.headerFrom;
  return address ? address.slice(address.lastIndexOf('@') + 1).toLowerCase() : null;
};

const oneOf = <T extends string>(allowed: readonly T[], value: string, otherwise: T): T =>
  (allowed as readonly string[]).includes(value) ? (value as T) : otherwise;

const spfOf = (result: SPFResult): SpfResult =>
  oneOf(['none', 'neutral', 'pass', 'fail', 'softfail', 'temperror', 'permerror'], result.status.result, 'temperror');
const dkimOf = (status: AuthStatus): DkimResult =>
  oneOf(['none', 'pass', 'fail', 'policy', 'neutral', 'temperror', 'permerror'], status.result === 'temperr' ? 'temperror' : status.result, 'neutral');
const dmarcOf = (status: AuthStatus): DmarcResult => oneOf(['none', 'pass', 'fail', 'temperror', 'permerror'], status.result, 'none');
const arcOf = (status: AuthStatus): ArcResult => oneOf(['none', 'pass', 'fail'], status.result, 'fail');
