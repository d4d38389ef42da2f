import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { HTTP_STATUS_OF, isAppError } from '../../core/errors.js';
import { callerOfOwner, type DomainCaller } from '../../services/domains/caller.js';
import type { DomainList, DomainView } from '../../services/domains/domains.js';
import { badge, empty, notice, table, timeOf } from '../components.js';
import { ownerOf, type ConsoleDeps } from '../context.js';
import { field, readForm } from '../forms.js';
import { html, segment, type Html } from '../html.js';
import { renderPage } from '../layout.js';
import { csrfField, requireSignedIn } from '../session.js';

/** The signed-in owner holds its domains (docs/design.md "Domain holder"), with both permissions. */
export const domainCaller = (ctx: Context): DomainCaller => callerOfOwner(ownerOf(ctx).ownerId);

/**
 * Whether a domain takes new addresses now, and when not, why: not verified yet, the ownership
 * record gone since a later check (the daily re-check), hosting not active, or an extra domain
 * without its add-on. The reasons are the service's, so the console and the API say the same.
 */
export const addressVerdict = (domain: DomainView, tz: string): Html => {
  if (domain.canCreateAddresses) return html`${badge('yes')}`;
  const since = domain.status === 'failed' && domain.checkedAt ? html` <span class="muted">(since the check at ${timeOf(domain.checkedAt, tz)})</span>` : '';
  return html`${badge('no')} ${domain.canCreateAddressesReason}${since}`;
};

/** The plan's used and allowed counts, and the paid access they depend on. */
export const planFacts = (list: DomainList, tz: string): Html => {
  const { limits, hosting } = list;
  const usage = (name: string, count: { used: number; allowed: number }) => html`<dt>${name}</dt><dd>${count.used} of ${count.allowed}</dd>`;
  return html`<dl class="facts">${usage('Domains', limits.domains)}${usage('Aliases', limits.aliases)}${usage('Mailboxes', limits.mailboxes)}
<dt>Hosting</dt><dd>${hosting.active ? html`${badge('active')} until ${timeOf(hosting.expiresAt, tz)}` : hosting.expiresAt ? html`${badge('expired')} ${timeOf(hosting.expiresAt, tz)}` : badge('off')}</dd>
<dt>New addresses</dt><dd>${list.canCreateAddresses ? badge('yes') : html`${badge('no')} ${list.canCreateAddressesReason}`}</dd></dl>`;
};

/** The owner's domains: each with its state and why it cannot take addresses, the plan, adding one. */
export const domainListPages = (router: Router, deps: ConsoleDeps): void => {
  const { domains } = deps.services;
  const tz = deps.timeZone;

  const listPage = async (ctx: Context, top: Html = html``, status = 200) => {
    const list = await domains.list(domainCaller(ctx));
    const rows = list.domains.map(
      (domain) => html`<tr><td><a href="/domains/${segment(domain.id)}">${domain.domain}</a></td>
<td>${badge(domain.status)}${domain.statusReason ? html`<br><span class="muted">${domain.statusReason}</span>` : ''}</td>
<td>${addressVerdict(domain, tz)}</td><td>${timeOf(domain.checkedAt, tz)}</td></tr>`,
    );
    renderPage(deps, ctx, {
      title: 'Your domains',
      active: 'domains',
      status,
      body: html`${top}
${rows.length > 0 ? table(['Domain', 'State', 'New addresses', 'Last checked'], rows) : empty('No domains yet: add one below.')}
<div class="grid">
<section class="card"><h2>Your plan</h2>${planFacts(list, tz)}</section>
<section class="card"><h2>Add a domain</h2>
<p>Adding a domain and checking its DNS are free. You get the records to publish; once the ownership record and the MX are found, it is verified.</p>
<form method="post" action="/domains" class="stack">${csrfField(deps, ctx)}
<label>Domain name (internationalized names in their xn-- form) <input type="text" name="domain" maxlength="253" required placeholder="team.example"></label>
<button type="submit">Add it</button></form></section>
</div>`,
    });
  };

  router.get('/domains', requireSignedIn, (ctx) => listPage(ctx));
  router.post('/domains', requireSignedIn, async (ctx) => {
    const form = await readForm(deps, ctx);
    let added: DomainView;
    try {
      added = await domains.add(domainCaller(ctx), { domain: field(form, 'domain') ?? '' });
    } catch (error) {
      if (!isAppError(error) || !['invalid_input', 'conflict', 'payment_required'].includes(error.code)) throw error;
      return await listPage(ctx, notice(error.message, 'bad'), HTTP_STATUS_OF[error.code]);
    }
    ctx.status = 303;
    ctx.redirect(`/domains/${segment(added.id)}`);
  });
};
