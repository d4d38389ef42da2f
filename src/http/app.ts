import { Router } from '@koa/router';
import Koa from 'koa';
import type { HttpDeps } from './context.js';
import { errorMiddleware } from './errors.js';
import { observeLatency } from './latency.js';
import { mountNodeHandlers } from './mount.js';
import { ROUTES } from './routes/index.js';

export const createHttpApp = (deps: HttpDeps): Koa => {
  const app = new Koa();
  const router = new Router();
  for (const register of ROUTES) register(router, deps);
  mountNodeHandlers(router, deps.nodeMounts ?? []);
  if (deps.observe) app.use(observeLatency(deps.observe));
  app.use(errorMiddleware(deps.logger));
  app.use(async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    await next();
  });
  if (deps.pages) app.use(deps.pages);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
};
