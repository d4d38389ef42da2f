import type { Context } from 'koa';
import type { AliasView } from '../../services/domains/aliases.js';
import type { CheckResult } from '../../services/domains/checks.js';
import type { DomainList } from '../../services/domains/domains.js';
import type { DomainMailboxView } from '../../services/domains/mailboxes.js';
import type { DnsRecord } from '../../services/domains/records.js';
import { badge, empty, table, timeOf } from '../components.js';
import { ownerOf, type ConsoleDeps } from '../context.js';
import { html, segment, type Html } from '../html.js';
import { renderPage } from '../layout.js';
import { csrfField } from '../session.js';
import { addressVerdict, domainCaller, planFacts } from './domains.js';

/** A record's last check, matched by type and name (each record has its own pair). */
const checkCell = (record: DnsRecord, results: readonly CheckResult[]): Html => {
  const result = results.find((candidate) => candidate.type === record.type && candidate.name === record.name);
  if (!result) return html`${badge('unchecked')}`;
  // What was found matters when it is not what is expected.
  const found =
    !result.ok && result.found.length > 0
      ? html`<br><span class="muted">Found:</span> ${result.found.map((value, index) => html`${index > 0 ? html`<br>` : ''}<code>${value}</code>`)}`
      : '';
  return html`${badge(result.ok ? 'ok' : 'failing')} ${result.detail}${found}`;
};

const factorInput = (needed: boolean): Html | string =>
  needed
    ? html`<input type="text" name="factorCode" inputmode="numeric" pattern="[0-9]{6}" placeholder="2FA code" aria-label="Your two-factor code" required>`
    : '';

interface Sections {
  deps: ConsoleDeps;
  ctx: Context;
  base: string;
  list: DomainList;
}

/** The domain's aliases, with delete and create forms (an alias delivers to and may send as a mailbox the owner manages). */
const aliasSection = async ({ deps, ctx, base, list }: Sections, aliases: readonly AliasView[]): Promise<Html> => {
  const owner = ownerOf(ctx);
  // The owner's own mailbox and its agents (the domain's mailboxes among them).
  const targets = [(await deps.services.owners.me(owner)).address, ...(await deps.services.ownership.list(owner)).agents.map((agent) => agent.email)];
  const rows = aliases.map(
    (alias) => html`<tr><td>${alias.address}</td><td>${alias.mailbox}</td><td>${timeOf(alias.createdAt, deps.timeZone)}</td>
<td><form method="post" action="${base}/aliases/${segment(alias.id)}/delete" class="inline">${csrfField(deps, ctx)}<button type="submit" class="danger">Delete</button></form></td></tr>`,
  );
  return html`<h2>Aliases (${list.limits.aliases.used} of ${list.limits.aliases.allowed} in your plan)</h2>
${rows.length > 0 ? table(['Alias', 'Delivers to', 'Created', ''], rows) : empty('No aliases on this domain.')}
<form method="post" action="${base}/aliases" class="row card">${csrfField(deps, ctx)}
<label>Local part <input type="text" name="localPart" maxlength="64" required placeholder="support"></label>
<label>Delivers to, and may send as it <select name="mailbox">${targets.map((address) => html`<option>${address}</option>`)}</select></label>
<button type="submit">Add the alias</button></form>`;
};

/** The domain's mailboxes, with delete (the 2FA code when on) and create forms. */
const mailboxSection = async ({ deps, ctx, base, list }: Sections, mailboxes: readonly DomainMailboxView[]): Promise<Html> => {
  const needsCode = (await deps.services.owners.me(ownerOf(ctx))).twoFactor === 'enabled';
  const rows = mailboxes.map(
    (
      mailbox,
    ) => html`<tr><td><a href="/agents/${segment(mailbox.id)}">${mailbox.email}</a></td><td>${mailbox.agentId}</td><td>${timeOf(mailbox.createdAt, deps.timeZone)}</td>
<td><form method="post" action="${base}/mailboxes/${segment(mailbox.id)}/delete" class="row">${csrfField(deps, ctx)}${factorInput(needsCode)}<button type="submit" class="danger">Delete</button></form></td></tr>`,
  );
  return html`<h2>Mailboxes (${list.limits.mailboxes.used} of ${list.limits.mailboxes.allowed} in your plan)</h2>
<p class="muted">Each is a separate agent account with its own key, credits and sending state. A deleted one receives nothing from then on; its mail is kept for a while, then removed.</p>
${rows.length > 0 ? table(['Mailbox', 'Agent id', 'Created', ''], rows) : empty('No mailboxes on this domain.')}
<form method="post" action="${base}/mailboxes" class="row card">${csrfField(deps, ctx)}
<label>Local part <input type="text" name="localPart" maxlength="64" required placeholder="ops"></label>
<label>Agent id (optional) <input type="text" name="agentId" maxlength="100"></label>
<button type="submit">Add the mailbox</button></form>`;
};

/**
 * One domain: its state and why it takes no addresses, the records to publish with each
 * check's result, Verify, its aliases and mailboxes with their forms, the plan's counts.
 */
export const domainPage = async (deps: ConsoleDeps, ctx: Context, top: Html = html``, status = 200): Promise<void> => {
  const { services } = deps;
  const tz = deps.timeZone;
  const caller = domainCaller(ctx);
  const domain = await services.domains.get(caller, ctx.params.id);
  const sections: Sections = { deps, ctx, base: `/domains/${segment(domain.id)}`, list: await services.domains.list(caller) };
  const records = domain.records.map(
    (record) => html`<tr><td class="wide">${record.type} <code>${record.name}</code><br><small class="muted">${record.purpose}</small></td>
<td class="wide"><code>${record.value}</code></td><td class="wide">${checkCell(record, domain.results)}</td></tr>`,
  );
  renderPage(deps, ctx, {
    title: domain.domain,
    active: 'domains',
    status,
    body: html`<p class="muted"><a href="/domains">Your domains</a></p>${top}
<div class="grid">
<section class="card"><h2>State</h2><dl class="facts">
<dt>Status</dt><dd>${badge(domain.status)}${domain.statusReason ? html` ${domain.statusReason}` : ''}</dd>
<dt>New addresses</dt><dd>${addressVerdict(domain, tz)}</dd>
<dt>Last checked</dt><dd>${timeOf(domain.checkedAt, tz)}</dd><dt>Verified</dt><dd>${timeOf(domain.verifiedAt, tz)}</dd><dt>Added</dt><dd>${timeOf(domain.createdAt, tz)}</dd></dl>
<form method="post" action="${sections.base}/verify">${csrfField(deps, ctx)}<button type="submit">Verify now</button></form></section>
<section class="card"><h2>Your plan</h2>${planFacts(sections.list, tz)}</section>
</div>
<h2>Records to publish</h2>
<p class="muted">The ownership TXT record and the MX decide whether the domain is verified; the others make its mail trusted. DNS is checked again every day.</p>
${table(['Record', 'Value', 'Last check'], records)}
${await aliasSection(sections, (await services.aliases.list(caller, domain.id)).aliases)}
${await mailboxSection(sections, (await services.domainMailboxes.list(caller, domain.id)).mailboxes)}
<section class="card"><h2>Delete the domain</h2><p>Its aliases go with it; delete its mailboxes first.</p>
<form method="post" action="${sections.base}/delete">${csrfField(deps, ctx)}<button type="submit" class="danger">Delete ${domain.domain}</button></form></section>`,
  });
};
