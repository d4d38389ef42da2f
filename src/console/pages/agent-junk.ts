import type { Router } from '@koa/router';
import type { Context } from 'koa';
import type { JunkVerdict } from '../../core/junk.js';
import { validateInput } from '../../core/validate.js';
import type { ConsoleDeps } from '../context.js';
import { ownerOf } from '../context.js';
import { field, readForm } from '../forms.js';
import { html, segment, type Html } from '../html.js';
import { csrfField, requireSignedIn } from '../session.js';

/** The form that judges one message (`junk` false: "Not junk", out of Junk to INBOX). */
export const junkForm = (deps: ConsoleDeps, ctx: Context, agentId: string, folder: string, id: string, junk: boolean): Html =>
  html`<form method="post" action="/agents/${segment(agentId)}/mail/${segment(folder)}/${id}/junk" class="inline">${csrfField(deps, ctx)}<input type="hidden" name="junk" value="${String(junk)}"><button type="submit"${junk ? html` class="danger"` : ''}>${junk ? 'Junk' : 'Not junk'}</button></form>`;

/** The junk filter's verdict on a message, as facts: score against threshold, then each reason. */
export const junkFacts = (verdict: JunkVerdict | undefined, isJunk: boolean): Html => {
  if (!verdict) return html`<dt>Junk</dt><dd>${isJunk ? 'judged junk' : 'no verdict'}</dd>`;
  const summary = verdict.failed ? `not judged: ${verdict.failed}` : `${verdict.junk ? 'junk' : 'not junk'}, ${verdict.score} points of ${verdict.threshold}`;
  return html`<dt>Junk filter</dt><dd>${summary}${verdict.reasons.map((reason) => html`<br><span class="muted">${reason.points > 0 ? '+' : ''}${reason.points}: ${reason.detail}</span>`)}</dd>`;
};

/** The owner judges a message of its agent (docs/operators/owners.md): the agent's filter learns from it. */
export const agentJunkPages = (router: Router, deps: ConsoleDeps): void => {
  router.post('/agents/:id/mail/:folder/:uid/junk', requireSignedIn, async (ctx) => {
    const form = await readForm(deps, ctx);
    const uid = validateInput<{ id: string }>('owner-email-query.json', { id: ctx.params.uid }).id;
    const junk = field(form, 'junk') === 'true';
    const judged = await deps.services.ownerViews.judgeJunk(ownerOf(ctx), ctx.params.id, ctx.params.folder, Number(uid), junk);
    ctx.status = 303;
    ctx.redirect(`/agents/${segment(ctx.params.id)}/inbox?folder=${segment(judged.from.folder)}`);
  });
};
