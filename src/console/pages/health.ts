import type { Router } from '@koa/router';
import { zoneLine, type CheckResult } from '../../core/doctor.js';
import { badge, table } from '../components.js';
import type { ConsoleDeps } from '../context.js';
import { html } from '../html.js';
import { domainCaller } from './domains.js';
import { renderPage } from '../layout.js';
import { requireSignedIn } from '../session.js';

/**
 * Health: the checks `agentpost doctor` runs (DNS, certificate, ports), run afresh at each
 * visit for the mail domain and the signed-in owner's verified domains (never another
 * owner's); each line ok, warn or fail with the record to publish.
 */
export const healthPages = (router: Router, deps: ConsoleDeps): void => {
  router.get('/health', requireSignedIn, async (ctx) => {
    const own = deps.services.domains.list(domainCaller(ctx)).domains.filter((domain) => domain.status === 'verified');
    const report = await deps.services.doctor.run({ verifiedDomains: own.map((domain) => domain.domain) });
    const count = (status: CheckResult['status']) => report.checks.filter((check) => check.status === status).length;
    const summary = report.ok
      ? html`<p class="notice good" role="status">Nothing fails: ${count('ok')} ok, ${count('warn')} to improve.</p>`
      : html`<p class="notice bad" role="status">${count('fail')} failing: mail may not be sent or received reliably until they are fixed.</p>`;
    renderPage(deps, ctx, {
      title: 'Health',
      active: 'health',
      body: html`${summary}
${table(
  ['', 'Check', 'Subject', 'Found', 'Fix'],
  report.checks.map(
    (check) => html`<tr>
<td>${badge(check.status)}</td><td>${check.check}</td><td>${check.subject}</td><td>${check.detail}</td>
<td>${check.publish ? html`<code>${zoneLine(check.publish)}</code>` : ''}${check.publish && check.fix ? html`<br>` : ''}${check.fix ?? ''}</td></tr>`,
  ),
)}
<p class="muted">The same checks as <code>agentpost doctor</code> on the server, which also takes other domains and the public addresses mail leaves from.</p>`,
    });
  });
};
