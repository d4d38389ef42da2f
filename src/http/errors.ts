import type { Context, Next } from 'koa';
import { HTTP_STATUS_OF, isAppError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';

export const sendError = (ctx: Context, status: number, code: string, message: string): void => {
  ctx.status = status;
  ctx.body = { error: message, code };
};

/** Maps AppErrors to `{error, code}`; anything else is a 500 whose cause is only logged. */
export const errorMiddleware =
  (logger: Logger) =>
  async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) sendError(ctx, 404, 'not_found', 'no such endpoint');
      if (ctx.status === 405 && ctx.body === undefined) sendError(ctx, 405, 'method_not_allowed', 'method not allowed');
    } catch (error) {
      if (isAppError(error)) {
        if (error.details.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(error.details.retryAfterSeconds));
        if (error.code === 'unauthorized') ctx.set('WWW-Authenticate', 'Bearer');
        sendError(ctx, HTTP_STATUS_OF[error.code], error.code, error.message);
        return;
      }
      logger.error('unhandled error', { method: ctx.method, path: ctx.path, error: describe(error) });
      sendError(ctx, 500, 'internal', 'internal error');
    }
  };

const describe = (error: unknown): string => (error instanceof Error ? (error.stack ?? error.message) : String(error));
