import type { Router } from '@koa/router';
import type { ListQuery } from '../../services/mail/mailbox.js';
import { principalOf, requireAuth } from '../auth.js';
import type { HttpDeps } from '../context.js';
import { sendJson } from '../json-body.js';

interface EmailQuery {
  id: string;
  folder: string;
  markAsRead?: boolean;
  uidValidity?: string;
}

export const mailRoutes = (router: Router, deps: HttpDeps): void => {
  const { services, validator } = deps;
  router.get('/api/v1/agent/inbox', requireAuth(services.auth), async (ctx) => {
    const query = validator.validate<ListQuery>('inbox-query.json', { ...ctx.query }, { coerce: true });
    ctx.body = await services.mailbox.list(principalOf(ctx), query);
  });
  router.get('/api/v1/agent/email/:id', requireAuth(services.auth), async (ctx) => {
    const query = validator.validate<EmailQuery>('email-query.json', { ...ctx.query, id: ctx.params.id }, { coerce: true });
    sendJson(
      ctx,
      await services.mailbox.read(principalOf(ctx), {
        uid: Number(query.id),
        folder: query.folder,
        markAsRead: query.markAsRead,
        uidValidity: query.uidValidity,
      }),
    );
  });
};
