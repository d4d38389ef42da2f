import { Agent } from 'node:https';
import { rootCertificates } from 'node:tls';
import type { AcmeChallenges } from '../core/tls.js';

/** A certificate chain (leaf first) and its private key, PEM. */
export interface IssuedPair {
  certificate: string;
  key: string;
}

/** What the renewal asks of a CA: AcmeClientIssuer, over acme-client. */
export interface AcmeIssuer {
  /** Orders a certificate for the names, answers the http-01 challenges, and downloads it. */
  issue(names: string[]): Promise<IssuedPair>;
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
  /** PEM of CAs trusted beside Node's roots on the directory's origin (`tls.acme.caFile`). */
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

  private async connect(acme: AcmeModule) {
    const { directoryUrl, extraCa, pollMs = 5000 } = this.settings;
    if (extraCa) trustOnOrigin(acme, directoryUrl, extraCa);
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
    // acme-client's own setting on its axios instance (src/axios.js there), not in its types.
    (acme.axios.defaults as unknown as { acmeSettings: { retryMaxAttempts: number } }).acmeSettings.retryMaxAttempts = 0;
    reportNetworkErrors(acme);
    return acme;
  }));

/**
 * acme-client's response interceptor (src/axios.js there) reads `response.config` of an error
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

/** HTTPS agents of directories with their own CAs (`tls.acme.caFile`), by origin. */
const trustedOrigins = new Map<string, Agent>();

/**
 * acme-client talks through one axios instance for the whole process: a request to an origin
 * with its own CAs gets an agent that trusts them beside Node's roots, any other the default.
 */
const trustOnOrigin = (acme: AcmeModule, directoryUrl: string, extraCa: string): void => {
  const first = trustedOrigins.size === 0;
  trustedOrigins.set(new URL(directoryUrl).origin, new Agent({ ca: [...rootCertificates, extraCa] }));
  if (!first) return;
  acme.axios.interceptors.request.use((config) => {
    const agent = config.url ? trustedOrigins.get(new URL(config.url).origin) : undefined;
    if (agent) config.httpsAgent = agent;
    return config;
  });
};
