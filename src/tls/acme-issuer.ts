import { Agent } from 'node:https';
import { rootCertificates } from 'node:tls';
import type { AcmeChallenges } from '../core/tls.js';

/** A certificate chain (leaf first) and its private key, PEM. */
export interface IssuedPair {
  certificate: string;
  key: string;
}

/** The CA's suggested renewal window for a certificate (ARI, RFC 9773 section 4.2), and when to ask again. */
export interface RenewalWindow {
  start: Date;
  end: Date;
  /** From the answer's Retry-After; null without one. */
  retryAfterMs: number | null;
}

/** What the renewal asks of a CA: AcmeClientIssuer, over acme-client. */
export interface AcmeIssuer {
  /** Orders a certificate for the names, answers the http-01 challenges, and downloads it. */
  issue(names: string[]): Promise<IssuedPair>;
  /** The CA's renewal window for the certificate; null when its directory offers no renewalInfo. */
  renewalWindow(certificate: string): Promise<RenewalWindow | null>;
}

/** The key authorizations of orders in progress, by token; the http-01 listener answers from it. */
export class ChallengeBoard implements AcmeChallenges {
  private readonly answers = new Map<string, string>();

  keyAuthorization(token: string): string | undefined {
    return this.answers.get(token);
  }

  set(token: string, keyAuthorization: string): void {
    this.answers.set(token, keyAuthorization);
  }

  delete(token: string): void {
    this.answers.delete(token);
  }
}

export interface IssuerSettings {
  directoryUrl: string;
  email?: string;
  /** PEM of CAs trusted beside Node's roots when talking to the CA (`tls.acme.caFile`). */
  extraCa?: string;
  /** How long acme-client waits between looks at a pending challenge or order (its backoffMin); default 5 s. */
  pollMs?: number;
}

type AcmeModule = typeof import('acme-client');

/**
 * The ACME protocol (RFC 8555) is acme-client's: account, order, http-01 challenges,
 * finalization, download. Loaded on first use, so a process without ACME never loads it.
 */
export class AcmeClientIssuer implements AcmeIssuer {
  private client: Promise<InstanceType<AcmeModule['Client']>> | null = null;

  constructor(
    private readonly settings: IssuerSettings,
    private readonly accountKey: (make: () => Promise<Buffer>) => Promise<Buffer>,
    private readonly challenges: ChallengeBoard,
  ) {}

  async issue(names: string[]): Promise<IssuedPair> {
    try {
      return await this.order(names);
    } catch (error) {
      // The next attempt starts from a new client: it registers again (RFC 8555 section 7.3.1
      // answers with the account the key already has) rather than keep a failed state.
      this.client = null;
      throw error;
    }
  }

  private async order(names: string[]): Promise<IssuedPair> {
    const acme = await loadAcme();
    const client = await (this.client ??= this.connect(acme));
    // ECDSA P-256: what Let's Encrypt and every current TLS stack serve first (docs/operators/tls.md).
    const [key, csr] = await acme.crypto.createCsr({ altNames: names }, await acme.crypto.createPrivateEcdsaKey());
    const certificate = await client.auto({
      csr,
      email: this.settings.email,
      // Setting tls.acme is agreeing to the CA's terms (docs/operators/tls.md says so).
      termsOfServiceAgreed: true,
      // The CA's own look is what counts; acme-client's would ask port 80 of the name from here.
      skipChallengeVerification: true,
      challengePriority: ['http-01'],
      challengeCreateFn: async (_authorization, challenge, keyAuthorization) => {
        if (challenge.type !== 'http-01') throw new Error(`the CA offers no http-01 challenge (only ${challenge.type})`);
        this.challenges.set(challenge.token, keyAuthorization);
      },
      challengeRemoveFn: async (_authorization, challenge) => this.challenges.delete(challenge.token),
    });
    return { certificate, key: key.toString('utf8') };
  }

  /**
   * ARI is not acme-client's: the directory's `renewalInfo` and an unauthenticated GET of
   * `<renewalInfo>/<certificate id>` through acme-client's HTTP client (its CA trust included).
   */
  async renewalWindow(certificate: string): Promise<RenewalWindow | null> {
    const acme = await this.prepared();
    const directory = (await acme.axios.get<{ renewalInfo?: string }>(this.settings.directoryUrl)).data;
    if (typeof directory.renewalInfo !== 'string') return null;
    const answer = await acme.axios.get<{ suggestedWindow?: { start?: string; end?: string } }>(
      `${directory.renewalInfo.replace(/\/$/, '')}/${await certificateId(certificate)}`,
    );
    const start = new Date(answer.data.suggestedWindow?.start ?? Number.NaN);
    const end = new Date(answer.data.suggestedWindow?.end ?? Number.NaN);
    if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime()) || end < start) throw new Error('the renewal information has no valid suggestedWindow');
    return { start, end, retryAfterMs: retryAfterMs(answer.headers['retry-after']) };
  }

  private async prepared(): Promise<AcmeModule> {
    const acme = await loadAcme();
    if (this.settings.extraCa) trustExtraCa(acme, this.settings.extraCa);
    return acme;
  }

  private async connect(acme: AcmeModule) {
    const { directoryUrl, pollMs = 5000 } = this.settings;
    await this.prepared();
    const accountKey = await this.accountKey(() => acme.crypto.createPrivateEcdsaKey());
    return new acme.Client({ directoryUrl, accountKey, backoffMin: pollMs, backoffMax: Math.max(pollMs, 30_000) });
  }
}

let loaded: Promise<AcmeModule> | null = null;

/**
 * acme-client, with its HTTP client's process-wide settings: a request that gets no answer in
 * 30 s fails (axios waits forever by default), and failed requests are not retried inside an
 * attempt (up to 75 s on a refused connection): the renewal retries whole attempts with its
 * own backoff and reports each failure.
 */
const loadAcme = (): Promise<AcmeModule> =>
  (loaded ??= import('acme-client').then((module) => {
    const acme = (module as AcmeModule & { default?: AcmeModule }).default ?? module;
    acme.axios.defaults.timeout = 30_000;
    // acme-client's own setting on its axios instance, not in its types (`acmeSettings`).
    (acme.axios.defaults as unknown as { acmeSettings: { retryMaxAttempts: number } }).acmeSettings.retryMaxAttempts = 0;
    reportNetworkErrors(acme);
    return acme;
  }));

/**
 * acme-client's response interceptor (its validateStatus) reads `response.config` of an error
 * that has no response (a refused connection, a timeout) and throws a TypeError in its place
 * ("Cannot read properties of undefined"). One put before it hands such an error on as what
 * it is, so the operator reads why the CA could not be reached (docs/contributing/dependencies.md).
 */
const reportNetworkErrors = (acme: AcmeModule): void => {
  const responses = acme.axios.interceptors.response;
  responses.use(undefined, (error: { response?: unknown; message?: string; config?: { method?: string; url?: string } }) => {
    if (error.response) return Promise.reject(error);
    const request = error.config ? `${error.config.method?.toUpperCase() ?? 'GET'} ${error.config.url}: ` : '';
    return Promise.reject(new Error(`${request}${error.message ?? String(error)}`));
  });
  const ours = responses.handlers?.pop();
  if (ours) responses.handlers?.unshift(ours);
};

/** The CAs of `tls.acme.caFile`s given in this process. */
const extraCas = new Set<string>();

/**
 * acme-client talks through one axios instance for the whole process, and a CA's directory
 * may send it to other hosts of the CA: every ACME request trusts Node's roots and each
 * `tls.acme.caFile` given.
 */
const trustExtraCa = (acme: AcmeModule, extraCa: string): void => {
  if (extraCas.has(extraCa)) return;
  extraCas.add(extraCa);
  acme.axios.defaults.httpsAgent = new Agent({ ca: [...rootCertificates, ...extraCas] });
};

/**
 * RFC 9773 section 4.1: base64url of the certificate's Authority Key Identifier, a dot, and
 * base64url of its serial number's DER content octets (@peculiar/x509 reads both; acme-client
 * depends on it).
 */
const certificateId = async (certificate: string): Promise<string> => {
  const x509 = await import('@peculiar/x509');
  const parsed = new x509.X509Certificate(certificate);
  const keyId = parsed.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId;
  if (!keyId) throw new Error('the certificate has no Authority Key Identifier');
  // @peculiar/x509 drops the sign octet of a serial whose first bit is set; DER keeps it (RFC 9773's example: 0x87654321 is "AIdlQyE").
  const serial = Buffer.from(parsed.serialNumber, 'hex');
  const octets = serial[0] >= 0x80 ? Buffer.concat([Buffer.from([0]), serial]) : serial;
  return `${Buffer.from(keyId, 'hex').toString('base64url')}.${octets.toString('base64url')}`;
};

/** Retry-After in seconds or as an HTTP date (RFC 9110 section 10.2.3). */
const retryAfterMs = (value: unknown): number | null => {
  if (typeof value !== 'string' || value.trim() === '') return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
};
