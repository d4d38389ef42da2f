import type { Router } from '@koa/router';
import { AppError } from '../../core/errors.js';
import type { HttpDeps } from '../context.js';
import { buildOpenApiDocument } from '../openapi.js';

export const metaRoutes = (router: Router, deps: HttpDeps): void => {
  const document = buildOpenApiDocument(deps.validator.schema);
  router.get('/healthz', (ctx) => {
    if (!deps.isReady()) throw new AppError('unavailable', 'starting: not every listener is up yet');
    ctx.body = { status: 'ok' };
  });
  router.get('/api/v1/openapi.json', (ctx) => {
    ctx.body = document;
  });
};
