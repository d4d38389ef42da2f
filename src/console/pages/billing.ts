import type { Router } from '@koa/router';
import type { Context } from 'koa';
import type { PaymentView } from '../../services/payments/views.js';
import { badge, empty, table, timeOf } from '../components.js';
import { ownerOf, type ConsoleDeps } from '../context.js';
import { html, type Html } from '../html.js';
import { renderPage } from '../layout.js';
import { requireSignedIn } from '../session.js';

/** Cents as dollars, by moving the decimal point in the digits: no floating point touches money. */
export const dollars = (cents: number): string => {
  const digits = String(cents).padStart(3, '0');
  return `$${digits.slice(0, -2)}.${digits.slice(-2)}`;
};

const WHAT: Record<PaymentView['kind'], (payment: PaymentView) => string> = {
  mail_credits: (payment) => `${payment.credits} mail credits`,
  domain_hosting: (payment) => `hosting, ${payment.periods} × 30 days`,
  domain_addon: (payment) => `domain add-on, ${payment.periods} × 30 days`,
};

interface Holder {
  label: string;
  email: string;
  invoices: PaymentView[];
  hosting: { active: boolean; expiresAt: string | null };
}

/** The owner's billing: hosting expiry and the invoices of its own account and of each of its agents. */
export const billingPages = (router: Router, deps: ConsoleDeps): void => {
  const { services } = deps;

  const holders = (ctx: Context): Holder[] => {
    const owner = ownerOf(ctx);
    const me = services.owners.me(owner);
    const accounts = [
      { id: me.id, label: 'You', email: me.address },
      ...services.ownership.list(owner).agents.map((agent) => ({ id: agent.id, label: agent.agentId, email: agent.email })),
    ];
    return accounts.map((account) => ({ label: account.label, email: account.email, ...services.payments.billingOf(account.id) }));
  };

  const hostingRow = ({ label, email, hosting }: Holder): Html => html`<tr><td>${label}<br><span class="muted">${email}</span></td>
<td>${badge(hosting.expiresAt === null ? 'none' : hosting.active ? 'active' : 'expired')}</td><td>${timeOf(hosting.expiresAt, deps.timeZone)}</td></tr>`;

  const invoiceRow = (holder: Holder, payment: PaymentView): Html => html`<tr><td>${holder.label}</td>
<td><code>${payment.token}</code></td><td>${WHAT[payment.kind](payment)}</td><td>${payment.method}</td><td class="num">${dollars(payment.amountCents)}</td>
<td>${badge(payment.status)}</td><td>${timeOf(payment.createdAt, deps.timeZone)}</td>
<td>${payment.appliedAt ? timeOf(payment.appliedAt, deps.timeZone) : timeOf(payment.expiresAt, deps.timeZone)}</td></tr>`;

  router.get('/billing', requireSignedIn, (ctx) => {
    const all = holders(ctx);
    const invoices = all
      .flatMap((holder) => holder.invoices.map((payment) => ({ holder, payment })))
      .sort((a, b) => (a.payment.createdAt < b.payment.createdAt ? 1 : a.payment.createdAt > b.payment.createdAt ? -1 : 0));
    renderPage(deps, ctx, {
      title: 'Billing',
      active: 'billing',
      body: html`<section class="card"><h2>Hosting</h2>
${table(['Account', 'Hosting', 'Ends'], all.map(hostingRow))}</section>
<section class="card"><h2>Invoices</h2>
${
  invoices.length > 0
    ? table(
        ['Account', 'Invoice', 'For', 'Method', 'Amount', 'Status', 'Made', 'Applied or expires'],
        invoices.map(({ holder, payment }) => invoiceRow(holder, payment)),
      )
    : empty('No invoices yet. Agents buy credits and hosting with POST /api/v1/agent/payment.')
}</section>`,
    });
  });
};
