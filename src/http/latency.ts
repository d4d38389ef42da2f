import type { Context, Next } from 'koa';
import type { HttpDeps } from './context.js';

/**
 * Times every request for the latency histogram. The route label is the router's template
 * (`/api/v1/agent/email/:id`), so ids in paths never become label values; an unmatched path is
 * `unmatched`. Mounted adapters (MCP) answer on the raw response, whose status is read when it ends.
 */
export const observeLatency =
  (observe: NonNullable<HttpDeps['observe']>) =>
  async (ctx: Context, next: Next): Promise<void> => {
    const started = process.hrtime.bigint();
    const done = () => {
      const route = typeof ctx._matchedRoute === 'string' ? ctx._matchedRoute : 'unmatched';
      observe(ctx.method, route, ctx.res.statusCode, Number(process.hrtime.bigint() - started) / 1e9);
    };
    try {
      await next();
    } finally {
      if (ctx.respond === false && !ctx.res.writableFinished) ctx.res.once('close', done);
      else done();
    }
  };
