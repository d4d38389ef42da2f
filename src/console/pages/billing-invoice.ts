import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { isAppError } from '../../core/errors.js';
import { ownerPayer } from '../../services/payments/payer.js';
import type { PaymentView, PolygonInvoiceView } from '../../services/payments/views.js';
import { badge, notice, table, timeOf } from '../components.js';
import { ownerOf, type ConsoleDeps } from '../context.js';
import { html, type Html } from '../html.js';
import { renderPage } from '../layout.js';
import { qrCode } from '../qr.js';
import { requireSignedIn } from '../session.js';
import { dollars, purchaseOf } from './billing-text.js';

/** How often an open Polygon invoice's page reloads itself (a meta refresh: the console runs no script). */
const REFRESH_SECONDS = 20;
const OPEN = new Set(['pending', 'confirming']);

/** Where the payment stands, in a sentence: what the owner sees while it waits. */
const progress = (payment: PaymentView): string => {
  if (payment.status === 'applied')
    return `Paid: ${purchaseOf(payment)} ${payment.kind === 'mail_credits' ? 'added to your mailbox' : 'added to your hosting'}.`;
  if (payment.status === 'expired') return 'Expired unpaid: nothing was applied. Make a new purchase to pay now.';
  if (payment.status === 'underpaid') return 'Expired with less than the amount paid: nothing was applied; the operator refunds what arrived.';
  if (payment.status === 'canceled') return 'Canceled: what it was for is gone; the operator refunds any payment.';
  const chain = payment.invoice;
  if (!chain) return 'Waiting for the card payment.';
  if (payment.status === 'confirming') return `Paid, confirming: ${chain.confirmations ?? 0} of ${chain.confirmationsRequired} confirmations.`;
  return `Waiting for the transfer: 0 of ${chain.confirmationsRequired} confirmations.`;
};

/** The transfer that pays a Polygon invoice: the amount, the address and a QR code of the payment URI. */
const polygonSection = (payment: PaymentView, chain: PolygonInvoiceView, tz: string): Html => {
  const usdc = dollars(payment.amountCents).slice(1);
  const transfers = chain.transfers.map(
    (transfer) =>
      html`<tr><td><code>${transfer.txHash}</code></td><td class="num">${transfer.amount}</td><td>${badge(transfer.role)}</td><td>${timeOf(transfer.at, tz)}</td></tr>`,
  );
  const pay = OPEN.has(payment.status)
    ? html`<figure class="qr">${qrCode(chain.uri, `QR code of the payment: ${usdc} USDC to ${chain.address}`)}<figcaption><a href="${chain.uri}">Open in a wallet</a></figcaption></figure>`
    : '';
  return html`<section class="card"><h2>Pay with USDC on Polygon</h2>
<div class="pay">${pay}<dl class="facts">
<dt>Send exactly</dt><dd><strong>${usdc} USDC</strong> (${chain.amount} token units)</dd>
<dt>To</dt><dd><code>${chain.address}</code></dd>
<dt>Token</dt><dd>USDC, contract <code>${chain.contract}</code>, chain ${chain.chainId}</dd>
<dt>Confirmations</dt><dd>${payment.status === 'confirming' ? (chain.confirmations ?? 0) : payment.status === 'applied' ? chain.confirmationsRequired : 0} of ${chain.confirmationsRequired}</dd>
<dt>Paid so far</dt><dd>${chain.paid} token units</dd></dl></div>
<p class="muted">This address serves this invoice alone. A transfer counts once its block has ${chain.confirmationsRequired} confirmations; this page looks again every ${REFRESH_SECONDS} seconds while it waits.</p>
${transfers.length > 0 ? table(['Transfer', 'Units', 'Counted as', 'At'], transfers) : ''}</section>`;
};

/** What the card processor's return says, beside the invoice's own state. */
const returnNotice = (payment: PaymentView, checkout: unknown): Html => {
  if (checkout === 'canceled' && OPEN.has(payment.status))
    return notice('You left the checkout without paying: nothing was charged. Pay with the button below while the invoice is open.', 'bad');
  if (checkout === 'done' && OPEN.has(payment.status))
    return notice('Back from the checkout: the card processor has not confirmed the payment yet. Reload this page in a moment.');
  return html``;
};

/**
 * One of the owner's own invoices: what it buys, its state (checked now with the processor or
 * the chain, as GET /api/user/payment/status does), and how to pay it while open. A card
 * checkout comes back here with its outcome.
 */
export const invoicePages = (router: Router, deps: ConsoleDeps): void => {
  router.get('/billing/payments/:token', requireSignedIn, async (ctx: Context) => {
    const payer = ownerPayer(ownerOf(ctx));
    let payment: PaymentView;
    let top: Html = html``;
    try {
      payment = await deps.services.payments.status(payer, ctx.params.token);
    } catch (error) {
      // Paused funding or a processor or RPC that does not answer: the invoice as last recorded, and why.
      if (!isAppError(error) || (error.code !== 'unavailable' && error.code !== 'feature_paused')) throw error;
      payment = await deps.services.payments.recorded(payer, ctx.params.token);
      top = notice(`Not checked just now: ${error.message}.`, 'bad');
    }
    const tz = deps.timeZone;
    const card =
      payment.method === 'card' && payment.checkoutUrl && OPEN.has(payment.status)
        ? html`<p><a class="button" href="${payment.checkoutUrl}">Pay ${dollars(payment.amountCents)} by card</a></p>`
        : '';
    renderPage(deps, ctx, {
      title: `Invoice ${payment.token}`,
      active: 'billing',
      refreshSeconds: payment.method === 'polygon' && OPEN.has(payment.status) ? REFRESH_SECONDS : undefined,
      body: html`<p class="muted"><a href="/billing">Billing</a></p>${top}${returnNotice(payment, ctx.query.checkout)}
<section class="card"><p class="notice ${payment.status === 'applied' ? 'good' : OPEN.has(payment.status) ? 'info' : 'bad'}" role="status">${progress(payment)}</p>
<dl class="facts"><dt>For</dt><dd>${purchaseOf(payment)}</dd><dt>Amount</dt><dd>${dollars(payment.amountCents)}</dd>
<dt>State</dt><dd>${badge(payment.status)}</dd><dt>Method</dt><dd>${payment.method === 'card' ? 'card' : 'USDC on Polygon'}</dd>
<dt>Made</dt><dd>${timeOf(payment.createdAt, tz)}</dd><dt>${payment.appliedAt ? 'Applied' : 'Pay before'}</dt><dd>${timeOf(payment.appliedAt ?? payment.expiresAt, tz)}</dd></dl>
${card}</section>
${payment.invoice ? polygonSection(payment, payment.invoice, tz) : ''}`,
    });
  });
};
