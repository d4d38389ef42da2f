import type { Router } from '@koa/router';
import { validateInput } from '../../core/validate.js';
import { principalOf, requireAuth } from '../auth.js';
import { readJsonBody } from '../body.js';
import type { HttpDeps } from '../context.js';

interface MoveRequest {
  to: string;
  folder: string;
  uidValidity?: string;
}

interface JunkRequest {
  junk: boolean;
  folder: string;
  uidValidity?: string;
}

interface DeleteQuery {
  id: string;
  folder: string;
  uidValidity?: string;
}

/** Folders for agents: list with counts, move a message, judge it junk or not junk, delete one (to Trash, then for good). */
export const folderRoutes = (router: Router, deps: HttpDeps): void => {
  const { services } = deps;
  const auth = requireAuth(services.auth);
  router.get('/api/v1/agent/folders', auth, async (ctx) => {
    ctx.body = await services.organizer.listFolders(principalOf(ctx));
  });
  router.post('/api/v1/agent/email/:id/move', auth, async (ctx) => {
    const { id } = validateInput<{ id: string }>('email-query.json', { id: ctx.params.id });
    const body = validateInput<MoveRequest>('message-move-request.json', await readJsonBody(ctx, deps.body.smallBytes, deps.body.budget));
    ctx.body = await services.organizer.move(principalOf(ctx), { uid: Number(id), folder: body.folder, uidValidity: body.uidValidity }, body.to);
  });
  router.post('/api/v1/agent/email/:id/junk', auth, async (ctx) => {
    const { id } = validateInput<{ id: string }>('email-query.json', { id: ctx.params.id });
    const body = validateInput<JunkRequest>('message-junk-request.json', await readJsonBody(ctx, deps.body.smallBytes, deps.body.budget));
    ctx.body = await services.junkMarking.mark(principalOf(ctx), { uid: Number(id), folder: body.folder, uidValidity: body.uidValidity }, body.junk);
  });
  router.delete('/api/v1/agent/email/:id', auth, async (ctx) => {
    const query = validateInput<DeleteQuery>('email-delete-query.json', { ...ctx.query, id: ctx.params.id }, { coerce: true });
    ctx.body = await services.organizer.delete(principalOf(ctx), { uid: Number(query.id), folder: query.folder, uidValidity: query.uidValidity });
  });
};
