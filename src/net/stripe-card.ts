import Stripe from 'stripe';
import { AppError } from '../core/errors.js';
import type { CardEvent, CardProcessor, CheckoutRequest, CheckoutSession } from '../core/payments.js';

export interface StripeCardOptions {
  secretKey: string;
  webhookSecret: string;
  /** Replaces https://api.stripe.com (local development and tests). */
  apiUrl?: string;
  /** Where an agent's buyer lands after paying or giving up. */
  returnUrl: () => string;
  /** The absolute URL of a path of this service (an owner returns to the console's page of its invoice). */
  serviceUrl: (path: string) => string;
  timeoutMs?: number;
}

/** Stripe's signature tolerance: a callback signed more than 5 minutes ago is refused. */
const CALLBACK_TOLERANCE_SECONDS = 300;

/**
 * Card payments through the official `stripe` package: two API calls (create and retrieve a
 * Checkout Session) and the package's own callback signature check over the raw body.
 */
export class StripeCardProcessor implements CardProcessor {
  private readonly stripe: Stripe;

  constructor(private readonly options: StripeCardOptions) {
    this.stripe = new Stripe(options.secretKey, { ...apiTarget(options.apiUrl), maxNetworkRetries: 1, timeout: options.timeoutMs ?? 20_000, telemetry: false });
  }

  async createCheckout(request: CheckoutRequest): Promise<CheckoutSession> {
    // The console tells a finished checkout from one given up by the query it comes back with.
    const back = request.returnPath === null ? null : this.options.serviceUrl(request.returnPath);
    const returnUrl = this.options.returnUrl();
    const session = await this.stripe.checkout.sessions.create(
      {
        mode: 'payment',
        client_reference_id: request.reference,
        metadata: { token: request.reference },
        line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: request.amountCents, product_data: { name: request.description } } }],
        success_url: back ? `${back}?checkout=done` : returnUrl,
        cancel_url: back ? `${back}?checkout=canceled` : returnUrl,
        expires_at: Math.floor(request.expiresAt / 1000),
      },
      { idempotencyKey: `checkout-${request.reference}` },
    );
    return sessionOf(session);
  }

  async retrieveCheckout(sessionId: string): Promise<CheckoutSession> {
    return sessionOf(await this.stripe.checkout.sessions.retrieve(sessionId));
  }

  verifyCallback(rawBody: Buffer, signatureHeader: string): CardEvent {
    let event: Stripe.Event;
    try {
      event = this.stripe.webhooks.constructEvent(rawBody, signatureHeader, this.options.webhookSecret, CALLBACK_TOLERANCE_SECONDS);
    } catch {
      throw new AppError('invalid_input', 'the Stripe-Signature header does not verify (wrong signature, or signed more than 5 minutes ago)', {
        field: 'Stripe-Signature',
      });
    }
    const object = event.data.object as { object?: string };
    return { id: event.id, type: event.type, session: object.object === 'checkout.session' ? sessionOf(object as Stripe.Checkout.Session) : null };
  }
}

const sessionOf = (session: Stripe.Checkout.Session): CheckoutSession => ({
  id: session.id,
  url: session.url,
  reference: session.client_reference_id,
  status: session.status === 'complete' ? 'complete' : session.status === 'expired' ? 'expired' : 'open',
  paid: session.payment_status === 'paid',
  amountCents: session.amount_total,
  currency: session.currency,
});

const apiTarget = (apiUrl: string | undefined): { host?: string; port?: number; protocol?: 'http' | 'https' } => {
  if (!apiUrl) return {};
  const url = new URL(apiUrl);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return { host: url.hostname, port: Number(url.port || (protocol === 'http' ? 80 : 443)), protocol };
};
