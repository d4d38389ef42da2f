import type { Clock } from '../../core/clock.js';
import { checkIdempotencyKeyHeader } from '../../core/idempotency-key.js';
import { AppError, invalidInput } from '../../core/errors.js';
import { randomHex, sha256Hex } from '../../core/ids.js';
import { CENTS_PER_PERIOD, creditsForCents } from '../../core/money.js';
import { OPEN_STATUSES, type HostingLedger, type Invoice, type InvoiceKind, type InvoiceMethod } from '../../core/payments.js';
import type { Store } from '../../store/index.js';
import type { CallbackOutcome, CardPayments } from './card.js';
import { consoleInvoicePath, type Payer } from './payer.js';
import type { PolygonPayments, PolygonTerms } from './polygon.js';
import { paymentView, type PaymentView, type PolygonChain } from './views.js';

/** schema/payment-request.json. */
export interface PaymentRequest {
  kind: InvoiceKind;
  method: InvoiceMethod;
  amountCents?: number;
  periods?: number;
  domainId?: string;
}

export interface PaymentsConfig {
  /** funding.paused: every payment endpoint answers 503 feature_paused. */
  paused: boolean;
  invoiceMs: number;
  /** How long after its expiry an invoice address is still read (late and duplicate transfers). */
  lateWatchMs: number;
  /** config `limits.idempotencyKeyMaxChars`, as for sending. */
  idempotencyKeyMaxChars: number;
  /** What a Polygon invoice shows: its chain's id (payment URIs) and the confirmations a payment needs. */
  chain: PolygonChain;
}

const LIST_LIMIT = 100;
const PAUSED = 'funding is paused on this server: credits and hosting cannot be bought now (the operator grants them)';

/**
 * POST payment and GET payment/status/{token} (docs/agents/payments.md): invoices for credits and
 * hosting, paid by card or by USDC on Polygon, each applied once. A method that is not
 * configured answers 503 `unavailable`; paused funding answers 503 `feature_paused`.
 */
export class PaymentService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly config: PaymentsConfig,
    private readonly methods: { card: CardPayments | null; polygon: PolygonPayments | null },
    private readonly hosting: HostingLedger,
  ) {}

  /**
   * One invoice per (payer, Idempotency-Key): the same key and body answer the same invoice,
   * another body 409. The payer's account holds it and receives what it buys.
   */
  async create(payer: Payer, idempotencyKey: string | undefined, request: PaymentRequest): Promise<PaymentView> {
    this.gate();
    const key = requiredIdempotencyKey(idempotencyKey, this.config.idempotencyKeyMaxChars);
    const terms = await this.terms(payer.accountId, request);
    const requestHash = sha256Hex(JSON.stringify([request.kind, request.method, terms.amountCents, terms.periods, request.domainId ?? null]));
    const existing = await this.replay(payer.accountId, key, requestHash);
    if (existing) return this.finishCreate(payer, existing);
    const polygon = request.method === 'polygon' ? this.polygon() : null;
    const startBlock = polygon ? await polygon.startBlock() : null;
    if (request.method === 'card') this.card();
    const invoice = await this.store.transaction(async () => {
      const raced = await this.replay(payer.accountId, key, requestHash);
      if (raced) return raced;
      const now = this.clock.now().getTime();
      const chain: PolygonTerms | null = polygon ? await polygon.terms(terms.amountCents, startBlock as number) : null;
      const row = {
        token: `pay_${randomHex(16)}`,
        accountId: payer.accountId,
        idempotencyKey: key,
        requestHash,
        kind: request.kind,
        method: request.method,
        status: 'pending' as const,
        amountCents: terms.amountCents,
        credits: terms.credits,
        periods: terms.periods,
        domainId: request.domainId ?? null,
        expiresAt: now + this.config.invoiceMs,
        createdAt: now,
        addressIndex: chain?.addressIndex ?? null,
        address: chain?.address ?? null,
        tokenContract: chain?.tokenContract ?? null,
        tokenAmount: chain?.tokenAmount ?? null,
        startBlock: chain?.startBlock ?? null,
      };
      await this.store.invoices.insert(row);
      return (await this.store.invoices.byToken(row.token)) as Invoice;
    });
    return this.finishCreate(payer, invoice);
  }

  /**
   * A card invoice answers with its checkout: opened now, or on the retry after a failure. An
   * owner comes back from it to the console's page of the invoice.
   */
  private async finishCreate(payer: Payer, invoice: Invoice): Promise<PaymentView> {
    if (invoice.method === 'card' && invoice.checkoutSession === null) {
      await this.card().start(invoice, payer.kind === 'owner' ? consoleInvoicePath(invoice.token) : null);
    }
    return await this.view(invoice.token);
  }

  /** Checks an owned invoice and applies credits or hosting once (docs/agents/payments.md). Another account's token is 404. */
  async status(payer: Payer, token: string): Promise<PaymentView> {
    this.gate();
    const invoice = await this.owned(payer, token);
    await this.check(invoice, { mustAnswer: OPEN_STATUSES.includes(invoice.status) });
    return await this.view(token);
  }

  /** The invoice as last recorded, without asking the processor or the chain (the console, when they do not answer). */
  async recorded(payer: Payer, token: string): Promise<PaymentView> {
    return await this.viewOf(await this.owned(payer, token));
  }

  async list(payer: Payer): Promise<{ payments: PaymentView[] }> {
    this.gate();
    return {
      payments: await Promise.all(
        await Promise.all((await this.store.invoices.listForAccount(payer.accountId, LIST_LIMIT)).map((invoice) => this.viewOf(invoice))),
      ),
    };
  }

  /** What can be bought now: nothing while funding is paused (with the reason), else the methods configured. */
  offer(): { paused: boolean; reason?: string; methods: InvoiceMethod[] } {
    if (this.config.paused) return { paused: true, reason: PAUSED, methods: [] };
    return { paused: false, methods: (['card', 'polygon'] as const).filter((method) => this.methods[method] !== null) };
  }

  private async owned(payer: Payer, token: string): Promise<Invoice> {
    const invoice = await this.store.invoices.byToken(token);
    if (!invoice || invoice.accountId !== payer.accountId) throw new AppError('not_found', 'no such payment for this account');
    return invoice;
  }

  /**
   * The watcher's run: every Polygon invoice still read (open, or expired within the late
   * window). Runs while funding is paused too: money already sent is still applied.
   */
  async watchPolygon(): Promise<{ checked: number; failed: number }> {
    const now = this.clock.now().getTime();
    let checked = 0;
    let failed = 0;
    for (const invoice of await this.store.invoices.polygonToWatch(now - this.config.lateWatchMs)) {
      try {
        await this.check(invoice, { mustAnswer: true });
        checked += 1;
      } catch {
        failed += 1;
      }
    }
    return { checked, failed };
  }

  /**
   * The card processor's callback. Not behind funding.paused: a buyer already charged is
   * served even after the operator pauses sales.
   */
  async cardCallback(rawBody: Buffer, signature: string): Promise<CallbackOutcome> {
    return await this.card().callback(rawBody, signature);
  }

  /** An account's invoices, newest first, and when its hosting ends (the owner console). */
  async billingOf(accountId: string): Promise<{ invoices: PaymentView[]; hosting: { active: boolean; expiresAt: string | null } }> {
    const ends = await this.hosting.hostingEndsAt(accountId);
    return {
      invoices: await Promise.all(await Promise.all((await this.store.invoices.listForAccount(accountId, LIST_LIMIT)).map((invoice) => this.viewOf(invoice)))),
      hosting: { active: ends !== null && ends > this.clock.now().getTime(), expiresAt: ends === null ? null : new Date(ends).toISOString() },
    };
  }

  /**
   * Open invoices are settled now, and an RPC or processor failure is 503. A closed Polygon
   * invoice is still read (late and duplicate transfers are recorded), but a failure then
   * only leaves the stored view.
   */
  private async check(invoice: Invoice, { mustAnswer }: { mustAnswer: boolean }): Promise<void> {
    const methods = this.methods;
    try {
      if (invoice.method === 'card' && mustAnswer && methods.card) await methods.card.check(invoice);
      if (invoice.method === 'polygon' && methods.polygon) await methods.polygon.check(invoice);
    } catch (error) {
      if (mustAnswer) throw error;
    }
    if (mustAnswer && !(invoice.method === 'card' ? methods.card : methods.polygon)) {
      throw new AppError('unavailable', `${invoice.method} payments are not configured on this server; the invoice cannot be checked`);
    }
  }

  private async view(token: string): Promise<PaymentView> {
    return await this.viewOf((await this.store.invoices.byToken(token)) as Invoice);
  }

  private async viewOf(invoice: Invoice): Promise<PaymentView> {
    return paymentView(invoice, invoice.method === 'polygon' ? await this.store.invoices.transfersOf(invoice.token) : [], this.config.chain);
  }

  /** Paused funding: every payment endpoint, agent's and owner's, answers 503 feature_paused with the reason. */
  private gate(): void {
    if (this.config.paused) throw new AppError('feature_paused', PAUSED);
  }

  private async replay(accountId: string, key: string, requestHash: string): Promise<Invoice | null> {
    const existing = await this.store.invoices.byIdempotencyKey(accountId, key);
    if (existing && existing.requestHash !== requestHash) {
      throw new AppError('conflict', 'this Idempotency-Key was used for another payment request');
    }
    return existing;
  }

  private async terms(accountId: string, request: PaymentRequest): Promise<{ amountCents: number; credits: number | null; periods: number | null }> {
    if (request.kind === 'mail_credits') {
      if (request.amountCents === undefined) throw invalidInput('amountCents', 'mail_credits needs amountCents (whole dollars)');
      if (request.periods !== undefined || request.domainId !== undefined) throw invalidInput('periods', 'mail_credits takes amountCents only');
      return { amountCents: request.amountCents, credits: creditsForCents(request.amountCents), periods: null };
    }
    if (request.periods === undefined) throw invalidInput('periods', `${request.kind} needs periods (1 to 12)`);
    const amountCents = request.periods * CENTS_PER_PERIOD;
    if (request.amountCents !== undefined && request.amountCents !== amountCents) {
      throw invalidInput('amountCents', `${request.periods} periods cost ${amountCents} cents`);
    }
    await this.checkHostingTarget(accountId, request);
    return { amountCents, credits: null, periods: request.periods };
  }

  private async checkHostingTarget(accountId: string, request: PaymentRequest): Promise<void> {
    if (request.kind === 'domain_hosting' && request.domainId !== undefined) throw invalidInput('domainId', 'domainId is for domain_addon only');
    if (request.kind === 'domain_addon') {
      if (request.domainId === undefined) throw invalidInput('domainId', 'domain_addon needs domainId');
      await this.hosting.checkAddon(accountId, request.domainId);
    }
  }

  private card(): CardPayments {
    if (!this.methods.card) throw new AppError('unavailable', 'card payments are not configured on this server');
    return this.methods.card;
  }

  private polygon(): PolygonPayments {
    if (!this.methods.polygon) throw new AppError('unavailable', 'Polygon payments are not configured on this server');
    return this.methods.polygon;
  }
}

/** A payment request must carry an Idempotency-Key: a retried request must not open a second invoice. */
const requiredIdempotencyKey = (header: string | undefined, maxChars: number): string => {
  const key = checkIdempotencyKeyHeader(header, maxChars);
  if (key === undefined) throw invalidInput('Idempotency-Key', 'the Idempotency-Key header is required');
  return key;
};
