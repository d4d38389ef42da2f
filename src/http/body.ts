import type { Context } from 'koa';
import { declaredLength, readBounded, type BodyBudget, type BoundedBody } from '../core/body-budget.js';
import { AppError } from '../core/errors.js';

/**
 * Reads a JSON request body: more than `maxBytes` answers 413, more than the shared budget
 * allows at once 503, non-JSON 400. The bytes count against the budget until the response ends.
 */
export const readJsonBody = async (ctx: Context, maxBytes: number, budget: BodyBudget): Promise<unknown> => {
  const body = await readRawBody(ctx, maxBytes, budget);
  if (body.length === 0) return {};
  if (!ctx.is('application/json') && ctx.get('content-type') !== '') {
    throw new AppError('invalid_input', 'the body must be JSON (Content-Type: application/json)', { field: 'body' });
  }
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    throw new AppError('invalid_input', 'the body is not valid JSON', { field: 'body' });
  }
};

/**
 * The request body's bytes as sent (a signed callback is verified over exactly these), under
 * the same limits as readJsonBody.
 */
export const readRawBody = async (ctx: Context, maxBytes: number, budget: BodyBudget): Promise<Buffer> => {
  let bounded: BoundedBody;
  try {
    bounded = await readBounded(ctx.req.iterator({ destroyOnReturn: false }), declaredLength(ctx.req.headers['content-length']), maxBytes, budget);
  } catch (error) {
    // Refused: the rest is read and dropped (never kept), so the answer reaches a client still
    // sending and the connection stays usable, as Node does for a body nobody read.
    ctx.req.resume();
    throw error;
  }
  ctx.res.once('close', bounded.release);
  return bounded.body;
};
