import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { HTTP_STATUS_OF, isAppError, type ErrorCode } from '../../core/errors.js';
import { ownerPayer } from '../../services/payments/payer.js';
import type { PaymentView } from '../../services/payments/views.js';
import { badge, empty, notice, table, timeOf } from '../components.js';
import { ownerOf, type ConsoleDeps } from '../context.js';
import { readForm } from '../forms.js';
import { html, segment, type Html } from '../html.js';
import { renderPage } from '../layout.js';
import { requireSignedIn } from '../session.js';
import { buySection, requestOf } from './billing-forms.js';
import { dollars, purchaseOf } from './billing-text.js';

interface Holder {
  label: string;
  email: string;
  /** The owner's own account: its invoices have a page here. */
  own: boolean;
  invoices: PaymentView[];
  hosting: { active: boolean; expiresAt: string | null };
}

/** What a buy form may fail with and still show the page, the reason on top. */
const SHOWN: readonly ErrorCode[] = ['invalid_input', 'conflict', 'not_found', 'unavailable', 'feature_paused'];

/**
 * The owner's billing: buying hosting, an add-on or credits for itself, hosting expiry, and
 * the invoices of its own account and of each of its agents.
 */
export const billingPages = (router: Router, deps: ConsoleDeps): void => {
  const { services } = deps;

  const holders = async (ctx: Context): Promise<Holder[]> => {
    const owner = ownerOf(ctx);
    const me = await services.owners.me(owner);
    const accounts = [
      { id: me.id, label: 'You', email: me.address, own: true },
      ...(await services.ownership.list(owner)).agents.map((agent) => ({ id: agent.id, label: agent.agentId, email: agent.email, own: false })),
    ];
    return await Promise.all(
      accounts.map(async (account) => ({ label: account.label, email: account.email, own: account.own, ...(await services.payments.billingOf(account.id)) })),
    );
  };

  const hostingRow = ({ label, email, hosting }: Holder): Html => html`<tr><td>${label}<br><span class="muted">${email}</span></td>
<td>${badge(hosting.expiresAt === null ? 'none' : hosting.active ? 'active' : 'expired')}</td><td>${timeOf(hosting.expiresAt, deps.timeZone)}</td></tr>`;

  const invoiceRow = (holder: Holder, payment: PaymentView): Html => html`<tr><td>${holder.label}</td>
<td>${holder.own ? html`<a href="/billing/payments/${segment(payment.token)}"><code>${payment.token}</code></a>` : html`<code>${payment.token}</code>`}</td><td>${purchaseOf(payment)}</td><td>${payment.method}</td><td class="num">${dollars(payment.amountCents)}</td>
<td>${badge(payment.status)}</td><td>${timeOf(payment.createdAt, deps.timeZone)}</td>
<td>${payment.appliedAt ? timeOf(payment.appliedAt, deps.timeZone) : timeOf(payment.expiresAt, deps.timeZone)}</td></tr>`;

  const page = async (ctx: Context, top: Html = html``, status = 200): Promise<void> => {
    const all = await holders(ctx);
    const invoices = all
      .flatMap((holder) => holder.invoices.map((payment) => ({ holder, payment })))
      .sort((a, b) => (a.payment.createdAt < b.payment.createdAt ? 1 : a.payment.createdAt > b.payment.createdAt ? -1 : 0));
    renderPage(deps, ctx, {
      title: 'Billing',
      active: 'billing',
      status,
      body: html`${top}${await buySection(deps, ctx)}
<section class="card"><h2>Hosting</h2>
${table(['Account', 'Hosting', 'Ends'], all.map(hostingRow))}</section>
<section class="card"><h2>Invoices</h2>
${
  invoices.length > 0
    ? table(
        ['Account', 'Invoice', 'For', 'Method', 'Amount', 'Status', 'Made', 'Applied or expires'],
        invoices.map(({ holder, payment }) => invoiceRow(holder, payment)),
      )
    : empty('No invoices yet. You buy above; agents buy for themselves with POST /api/v1/agent/payment.')
}</section>`,
    });
  };

  router.get('/billing', requireSignedIn, (ctx) => page(ctx));
  /** The REST rules of POST /api/user/payment: one invoice per form (its Idempotency-Key), then its page. */
  router.post('/billing/buy', requireSignedIn, async (ctx) => {
    const form = await readForm(deps, ctx);
    let made: PaymentView;
    try {
      const { request, idempotencyKey } = requestOf(form);
      made = await services.payments.create(ownerPayer(ownerOf(ctx)), idempotencyKey, request);
    } catch (error) {
      if (!isAppError(error) || !SHOWN.includes(error.code)) throw error;
      return await page(ctx, notice(error.message, 'bad'), HTTP_STATUS_OF[error.code]);
    }
    ctx.status = 303;
    ctx.redirect(`/billing/payments/${segment(made.token)}`);
  });
};
