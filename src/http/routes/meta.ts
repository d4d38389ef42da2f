import type { Router } from '@koa/router';
import { bearerToken } from '../../core/bearer.js';
import { AppError } from '../../core/errors.js';
import type { HttpDeps } from '../context.js';
import { buildOpenApiDocument } from '../openapi.js';

export const metaRoutes = (router: Router, deps: HttpDeps): void => {
  const document = buildOpenApiDocument(deps.validator.schema);
  router.get('/healthz', (ctx) => {
    if (!deps.isReady()) throw new AppError('unavailable', 'starting: not every listener is up yet');
    ctx.body = { status: 'ok' };
  });
  // The status page (docs/operators/monitoring.md): public, like /healthz; it names parts and counts, never accounts.
  router.get('/api/v1/status', async (ctx) => {
    ctx.body = await deps.services.status.report();
  });
  router.get('/metrics', async (ctx) => {
    const { contentType, body } = await deps.services.metrics.scrape(bearerToken(ctx.get('authorization')) ?? undefined);
    ctx.type = contentType;
    ctx.body = body;
  });
  router.get('/api/v1/openapi.json', (ctx) => {
    ctx.body = document;
  });
};
