import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { CardEvent, CardProcessor, CheckoutSession, Invoice } from '../../core/payments.js';
import type { Store } from '../../store/index.js';
import type { InvoiceApplier } from './apply.js';

/** What a verified callback did; answered to the processor and kept per event id. */
export type CallbackOutcome = 'applied' | 'already_applied' | 'expired' | 'replay' | 'unknown_session' | 'mismatch' | 'not_paid' | 'ignored';

/** Stripe's events about a Checkout Session that can settle an invoice. */
const PAID_EVENTS = new Set(['checkout.session.completed', 'checkout.session.async_payment_succeeded']);
const EXPIRED_EVENTS = new Set(['checkout.session.expired', 'checkout.session.async_payment_failed']);

const DESCRIPTION: Record<Invoice['kind'], (invoice: Invoice) => string> = {
  mail_credits: (invoice) => `${invoice.credits} mail credits`,
  domain_hosting: (invoice) => `Hosting, ${invoice.periods} x 30 days`,
  domain_addon: (invoice) => `Domain add-on, ${invoice.periods} x 30 days`,
};

/**
 * Card purchases through Stripe Checkout, confirmed by Stripe's verified callbacks
 * (docs/operators/payments.md, Card); the status call also asks the processor about
 * an open checkout, so a lost callback delays nothing. Either way the invoice is applied once.
 */
export class CardPayments {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly processor: CardProcessor,
    private readonly applier: InvoiceApplier,
  ) {}

  /**
   * Opens the invoice's Checkout Session, once: the processor's own idempotency key is the
   * invoice token, so a retried request gets the same session.
   */
  async start(invoice: Invoice, returnPath: string | null): Promise<void> {
    if (invoice.checkoutSession !== null) return;
    let session: CheckoutSession;
    try {
      session = await this.processor.createCheckout({
        reference: invoice.token,
        amountCents: invoice.amountCents,
        description: DESCRIPTION[invoice.kind](invoice),
        expiresAt: invoice.expiresAt,
        returnPath,
      });
    } catch (error) {
      this.logger.warn('card checkout failed', { token: invoice.token, error: (error as Error).message });
      throw new AppError('unavailable', 'the card processor did not open a checkout; retry with the same Idempotency-Key');
    }
    await this.store.transaction(() => this.store.invoices.setCheckout(invoice.token, session.id, session.url));
  }

  /** The status call: asks the processor about an open invoice's session and settles it. */
  async check(invoice: Invoice): Promise<void> {
    if (invoice.checkoutSession === null) return;
    let session: CheckoutSession;
    try {
      session = await this.processor.retrieveCheckout(invoice.checkoutSession);
    } catch (error) {
      this.logger.warn('card checkout lookup failed', { token: invoice.token, error: (error as Error).message });
      throw new AppError('unavailable', 'the card processor did not answer; nothing was applied, try again later');
    }
    await this.settle(invoice, session);
  }

  /**
   * A callback: verified (raw body, signature, 5-minute tolerance) before anything is read,
   * then handled once per event id in one transaction with what it settles.
   */
  async callback(rawBody: Buffer, signature: string): Promise<CallbackOutcome> {
    const event = this.processor.verifyCallback(rawBody, signature);
    return await this.store.transaction(async () => {
      const receivedAt = this.clock.now().getTime();
      if (
        !(await this.store.invoices.recordCardEvent({
          eventId: event.id,
          type: event.type,
          sessionId: event.session?.id ?? null,
          outcome: 'received',
          receivedAt,
        }))
      ) {
        return 'replay';
      }
      const outcome = await this.outcomeOf(event);
      await this.store.invoices.setCardEventOutcome(event.id, outcome);
      return outcome;
    });
  }

  private async outcomeOf(event: CardEvent): Promise<CallbackOutcome> {
    if (!event.session || (!PAID_EVENTS.has(event.type) && !EXPIRED_EVENTS.has(event.type))) return 'ignored';
    const invoice = await this.store.invoices.bySession(event.session.id);
    if (!invoice || invoice.token !== event.session.reference) return 'unknown_session';
    return await this.settle(invoice, event.session);
  }

  private async settle(invoice: Invoice, session: CheckoutSession): Promise<CallbackOutcome> {
    if (session.paid && session.status === 'complete') {
      // A session is ours only with our amount in dollars; anything else is logged and left alone.
      if (session.amountCents !== invoice.amountCents || session.currency !== 'usd') {
        this.logger.error('card checkout amount differs from its invoice', { token: invoice.token, session: session.id });
        return 'mismatch';
      }
      return (await this.applier.apply(invoice.token)) ? 'applied' : 'already_applied';
    }
    if (session.status === 'expired') return (await this.applier.close(invoice.token, 'expired')) ? 'expired' : 'ignored';
    return 'not_paid';
  }
}
