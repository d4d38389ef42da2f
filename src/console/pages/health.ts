import type { Router } from '@koa/router';
import { zoneLine, type CheckResult, type DoctorReport } from '../../core/doctor.js';
import { badge, empty, table } from '../components.js';
import { ownerOf, type ConsoleDeps } from '../context.js';
import { html, type Html } from '../html.js';
import { domainCaller } from './domains.js';
import { renderPage } from '../layout.js';
import { requireSignedIn } from '../session.js';

const summaryOf = (report: DoctorReport): Html => {
  const count = (status: CheckResult['status']) => report.checks.filter((check) => check.status === status).length;
  return report.ok
    ? html`<p class="notice good" role="status">Nothing fails: ${count('ok')} ok, ${count('warn')} to improve.</p>`
    : html`<p class="notice bad" role="status">${count('fail')} failing: mail may not be sent or received reliably until they are fixed.</p>`;
};

const checksTable = (report: DoctorReport): Html =>
  table(
    ['', 'Check', 'Subject', 'Found', 'Fix'],
    report.checks.map(
      (check) => html`<tr>
<td>${badge(check.status)}</td><td>${check.check}</td><td>${check.subject}</td><td>${check.detail}</td>
<td>${check.publish ? html`<code>${zoneLine(check.publish)}</code>` : ''}${check.publish && check.fix ? html`<br>` : ''}${check.fix ?? ''}</td></tr>`,
    ),
  );

/**
 * Health: the checks `agentpost doctor` runs, afresh at each visit. An owner who operates the
 * service (config `owners.operators`) sees the whole deployment: the mail domain, the host,
 * the certificate files and every listener's port, with its own verified domains. Any other
 * owner sees the checks of its own verified domains only (never another owner's, nor where
 * the service listens or keeps its keys).
 */
export const healthPages = (router: Router, deps: ConsoleDeps): void => {
  router.get('/health', requireSignedIn, async (ctx) => {
    const own = (await deps.services.domains.list(domainCaller(ctx))).domains.filter((domain) => domain.status === 'verified').map((domain) => domain.domain);
    const operator = await deps.services.owners.isOperator(ownerOf(ctx));
    const report = operator ? await deps.services.doctor.run({ verifiedDomains: own }) : await deps.services.doctor.runForDomains(own);
    const body =
      report.checks.length > 0
        ? html`${summaryOf(report)}${checksTable(report)}`
        : empty('You have no verified domain yet: once one is verified (Domains), its records are checked here.');
    renderPage(deps, ctx, {
      title: 'Health',
      active: 'health',
      body: html`${body}
<p class="muted">${
        operator
          ? html`You operate this service (<code>owners.operators</code>), so you see the whole deployment: the same checks as <code>agentpost doctor</code> on the server, which also takes other domains and the public addresses mail leaves from.`
          : html`The checks of your own verified domains. The service's own (its host, certificates and listeners) are shown to its operators.`
      }</p>`,
    });
  });
};
