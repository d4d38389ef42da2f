import type { PaymentView } from '../../services/payments/views.js';

/** Cents as dollars, by moving the decimal point in the digits: no floating point touches money. */
export const dollars = (cents: number): string => {
  const digits = String(cents).padStart(3, '0');
  return `$${digits.slice(0, -2)}.${digits.slice(-2)}`;
};

/** What an invoice buys, in words. */
export const purchaseOf = (payment: PaymentView): string => {
  if (payment.kind === 'mail_credits') return `${payment.credits} mail credits`;
  return `${payment.kind === 'domain_hosting' ? 'hosting' : 'domain add-on'}, ${payment.periods} × 30 days`;
};
