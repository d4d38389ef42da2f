import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { InvoiceMethod } from '../../core/payments.js';
import { validateInput } from '../../core/validate.js';
import type { PaymentRequest } from '../../services/payments/payments.js';
import { callerOfOwner } from '../../services/domains/caller.js';
import { empty } from '../components.js';
import { ownerOf, type ConsoleDeps } from '../context.js';
import { field } from '../forms.js';
import { html, type Html } from '../html.js';
import { csrfField } from '../session.js';
import { dollars } from './billing-text.js';

const METHOD_LABEL: Record<InvoiceMethod, string> = { card: 'Card', polygon: 'USDC on Polygon' };
const PERIODS = Array.from({ length: 12 }, (_, index) => index + 1);

const methodSelect = (methods: readonly InvoiceMethod[]): Html =>
  html`<label>Pay with <select name="method">${methods.map((method) => html`<option value="${method}">${METHOD_LABEL[method]}</option>`)}</select></label>`;

const periodSelect = (): Html =>
  html`<label>Periods of 30 days <select name="periods">${PERIODS.map((periods) => html`<option value="${periods}">${periods} × 30 days: ${dollars(periods * 100)}</option>`)}</select></label>`;

/**
 * The hidden fields of a buy form. Its Idempotency-Key is made with the page, so sending the
 * same form twice (a double click, a reload that re-posts) answers the same invoice.
 */
const hidden = (deps: ConsoleDeps, ctx: Context, kind: PaymentRequest['kind']): Html =>
  html`${csrfField(deps, ctx)}<input type="hidden" name="kind" value="${kind}"><input type="hidden" name="idempotencyKey" value="console-${randomBytes(12).toString('hex')}">`;

/**
 * What the owner can buy for itself (its own mailbox and the domains it holds): hosting, an
 * add-on for a verified extra domain, mail credits. While funding is paused, or with no method
 * configured, it says why and offers no button that cannot work.
 */
export const buySection = async (deps: ConsoleDeps, ctx: Context): Promise<Html> => {
  const offer = deps.services.payments.offer();
  const title = html`<h2>Buy for your own account</h2>`;
  if (offer.paused) {
    return html`<section class="card">${title}<p class="notice bad" role="status">Buying is paused on this server: ${offer.reason}. Ask the operator for hosting (<code>agentpost hosting grant</code>) or credits (<code>agentpost credits add</code>).</p></section>`;
  }
  if (offer.methods.length === 0) {
    return html`<section class="card">${title}<p class="notice bad" role="status">No payment method is configured on this server, so nothing can be bought here. Ask the operator.</p></section>`;
  }
  const me = await deps.services.owners.me(ownerOf(ctx));
  const list = await deps.services.domains.list(callerOfOwner(me.id));
  const extras = list.domains.filter((domain) => domain.addon.required && domain.status === 'verified');
  const addon =
    extras.length > 0
      ? html`<form method="post" action="/billing/buy" class="stack">${hidden(deps, ctx, 'domain_addon')}
<label>Domain <select name="domainId">${extras.map((domain) => html`<option value="${domain.id}">${domain.domain}</option>`)}</select></label>
${periodSelect()}${methodSelect(offer.methods)}<button type="submit">Buy the add-on</button></form>`
      : empty('None of your domains needs one: an add-on is for a verified domain beyond the one your plan includes.');
  return html`${title}<div class="grid">
<section class="card"><h3>Hosting (Personal plan)</h3><p class="muted">Lets your verified domain take aliases and mailboxes. $1 per 30 days, added to the end of what you have.</p>
<form method="post" action="/billing/buy" class="stack">${hidden(deps, ctx, 'domain_hosting')}${periodSelect()}${methodSelect(offer.methods)}<button type="submit">Buy hosting</button></form></section>
<section class="card"><h3>Domain add-on</h3><p class="muted">One extra domain beyond the plan's, $1 per 30 days.</p>${addon}</section>
<section class="card"><h3>Mail credits</h3><p class="muted">For your own mailbox ${me.address} (${me.credits} credits now). $1 buys 10,000; one credit per recipient; sending limits stay as they are.</p>
<form method="post" action="/billing/buy" class="stack">${hidden(deps, ctx, 'mail_credits')}
<label>Dollars <input type="number" name="dollars" min="1" max="10000" step="1" value="1" required></label>${methodSelect(offer.methods)}<button type="submit">Buy credits</button></form></section>
</div>`;
};

const wholeNumber = (text: string | undefined): number | undefined => (text !== undefined && /^[0-9]{1,6}$/.test(text) ? Number(text) : undefined);

/** A buy form as the payment request the REST endpoint takes, checked by the same schema (400 otherwise). */
export const requestOf = (form: URLSearchParams): { request: PaymentRequest; idempotencyKey: string | undefined } => {
  const kind = field(form, 'kind');
  const dollarsGiven = wholeNumber(field(form, 'dollars'));
  const request = validateInput<PaymentRequest>('payment-request.json', {
    kind,
    method: field(form, 'method'),
    ...(kind === 'mail_credits' ? { amountCents: dollarsGiven === undefined ? field(form, 'dollars') : dollarsGiven * 100 } : {}),
    ...(kind !== 'mail_credits' ? { periods: wholeNumber(field(form, 'periods')) ?? field(form, 'periods') } : {}),
    ...(kind === 'domain_addon' ? { domainId: field(form, 'domainId') } : {}),
  });
  return { request, idempotencyKey: field(form, 'idempotencyKey') };
};
