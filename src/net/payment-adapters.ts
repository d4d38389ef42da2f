import type { Config } from '../config/types.js';
import { AppError } from '../core/errors.js';
import type { CardProcessor, PolygonPort } from '../core/payments.js';

export interface PaymentAdapters {
  /** Present when `payments.card` is configured (card payments answer 503 without it). */
  cardProcessor?: CardProcessor;
  /** Present when `payments.polygon` is configured. */
  polygon?: PolygonPort;
  /** Loads the configured adapters' libraries; the app's start() awaits it before listening. */
  load(): Promise<void>;
}

/**
 * The payment adapters with their libraries (stripe and viem, a large share of an idle server's
 * heap: docs/contributing/benchmarks.md) loaded only when the operator configured them, and only
 * at start: a server that sells nothing never carries them. Until load() has run, a call through
 * an adapter is 503 `unavailable`.
 */
export const paymentAdapters = (config: Config, baseUrl: () => string): PaymentAdapters => {
  const { card, polygon } = config.payments;
  const cardSlot = card.secretKey && card.webhookSecret ? deferred<CardProcessor>('card') : undefined;
  const polygonSlot = polygon.rpcUrl && polygon.xpub ? deferred<PolygonPort>('polygon') : undefined;
  return {
    cardProcessor: cardSlot?.port,
    polygon: polygonSlot?.port,
    async load() {
      if (cardSlot && card.secretKey && card.webhookSecret) {
        const { StripeCardProcessor } = await import('./stripe-card.js');
        cardSlot.fill(
          new StripeCardProcessor({
            secretKey: card.secretKey,
            webhookSecret: card.webhookSecret,
            apiUrl: card.apiUrl,
            returnUrl: () => card.returnUrl ?? `${baseUrl()}/`,
            serviceUrl: (path) => `${baseUrl()}${path}`,
          }),
        );
      }
      if (polygonSlot && polygon.rpcUrl && polygon.xpub) {
        const { polygonPort } = await import('./polygon-chain.js');
        polygonSlot.fill(polygonPort({ ...polygon, rpcUrl: polygon.rpcUrl, xpub: polygon.xpub }));
      }
    },
  };
};

/** A stand-in whose properties are those of the adapter filled in later. */
const deferred = <T extends object>(name: string): { port: T; fill(target: T): void } => {
  let target: T | undefined;
  const port = new Proxy({} as T, {
    get: (_, property) => {
      if (!target) throw new AppError('unavailable', `the ${name} payment adapter is still loading; try again`);
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    port,
    fill: (filled) => {
      target = filled;
    },
  };
};
