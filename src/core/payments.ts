/**
 * Payments: what an invoice is, and the two outside parts the payment services talk to
 * through injected ports (a card processor, a chain reader), so services never import an
 * HTTP client library. Every amount is integer cents or integer token units (bigint).
 */

export type InvoiceKind = 'mail_credits' | 'domain_hosting' | 'domain_addon';
export type InvoiceMethod = 'card' | 'polygon';
/** docs/design.md "Payment request": the invoice states. */
export type InvoiceStatus = 'pending' | 'confirming' | 'applied' | 'underpaid' | 'expired' | 'canceled';

/** Open states: the invoice can still be paid and applied. */
export const OPEN_STATUSES: readonly InvoiceStatus[] = ['pending', 'confirming'];

export interface Invoice {
  token: string;
  accountId: string;
  idempotencyKey: string;
  requestHash: string;
  kind: InvoiceKind;
  method: InvoiceMethod;
  status: InvoiceStatus;
  amountCents: number;
  credits: number | null;
  periods: number | null;
  domainId: string | null;
  expiresAt: number;
  createdAt: number;
  appliedAt: number | null;
  checkoutSession: string | null;
  checkoutUrl: string | null;
  addressIndex: number | null;
  address: string | null;
  tokenContract: string | null;
  /** Integer token units, as a decimal string. */
  tokenAmount: string | null;
  startBlock: number | null;
  /** The last block whose transfers are all recorded; null before the first final look. */
  scannedBlock: number | null;
  /** Confirmations of the paying transfer at the last look, while `confirming`. */
  confirmations: number | null;
}

/** Why a recorded transfer did or did not count (docs/operators/payments.md; shown in the status). */
export type TransferRole = 'payment' | 'late' | 'duplicate';

export interface RecordedTransfer {
  invoiceToken: string;
  txHash: string;
  logIndex: number;
  blockNumber: number;
  /** The block's timestamp, Unix ms. */
  blockTime: number;
  sender: string;
  /** Integer token units, as a decimal string. */
  amount: string;
  role: TransferRole;
  recordedAt: number;
}

/** A Stripe Checkout Session as the service needs it. */
export interface CheckoutSession {
  id: string;
  url: string | null;
  /** Our invoice token (client_reference_id). */
  reference: string | null;
  status: 'open' | 'complete' | 'expired';
  paid: boolean;
  amountCents: number | null;
  currency: string | null;
}

export interface CheckoutRequest {
  reference: string;
  amountCents: number;
  description: string;
  expiresAt: number;
  /**
   * A path of this service the buyer comes back to after the checkout (an owner: the
   * console's page of the invoice); null: the configured return URL (an agent's buyer).
   */
  returnPath: string | null;
}

/** A verified callback: its event id and type, and the session it carries (if any). */
export interface CardEvent {
  id: string;
  type: string;
  session: CheckoutSession | null;
}

/** The card processor (Stripe Checkout); src/net/stripe-card.ts. */
export interface CardProcessor {
  createCheckout(request: CheckoutRequest): Promise<CheckoutSession>;
  retrieveCheckout(sessionId: string): Promise<CheckoutSession>;
  /** Throws AppError invalid_input when the signature or its timestamp does not verify. */
  verifyCallback(rawBody: Buffer, signatureHeader: string): CardEvent;
}

/** One ERC-20 Transfer log to an invoice address. */
export interface TokenTransfer {
  txHash: string;
  logIndex: number;
  blockNumber: number;
  from: string;
  amount: bigint;
}

/** Reads the chain (viem over JSON-RPC); src/net/polygon-chain.ts. Errors mean the RPC is unusable. */
export interface ChainReader {
  headBlock(): Promise<number>;
  /** Transfer logs of the configured token to `address`, blocks `fromBlock..toBlock` inclusive. */
  transfersTo(address: string, fromBlock: number, toBlock: number): Promise<TokenTransfer[]>;
  /** The block's timestamp, Unix ms. */
  blockTime(blockNumber: number): Promise<number>;
}

/** The Polygon method's parts: a reader, and the invoice address of each derivation index. */
export interface PolygonPort {
  reader: ChainReader;
  /** The checksummed address of child `index` of the configured extended public key. */
  addressAt(index: number): string;
  tokenContract: string;
  tokenDecimals: number;
  confirmations: number;
}

/**
 * Hosting as payments extend it (the domains part owns it): per holder, and per domain for
 * an add-on. Each call runs inside the caller's transaction.
 */
export interface HostingLedger {
  extendHosting(holderId: string, days: number, reference: string): Promise<void>;
  extendAddon(domainId: string, days: number, reference: string): Promise<void>;
  /** The account holding the domain; null when there is no such (live) domain. */
  holderOf(domainId: string): Promise<string | null>;
  /**
   * Refuses an add-on the holder should not buy: not its domain (not_found), or a domain that
   * is not verified or is one the plan already includes (conflict).
   */
  checkAddon(holderId: string, domainId: string): Promise<void>;
  /** When the holder's hosting ends (Unix ms); null when it never had any. */
  hostingEndsAt(holderId: string): Promise<number | null>;
}
