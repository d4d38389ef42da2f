import type { Context } from 'koa';
import { declaredLength, readBounded } from '../core/body-budget.js';
import { isAppError } from '../core/errors.js';
import type { ConsoleDeps } from './context.js';
import { checkCsrf, PageError } from './session.js';

/**
 * Reads an application/x-www-form-urlencoded body under the listener's shared body budget
 * (413 above `maxBytes`, the small limit unless a page allows more) and checks its CSRF token.
 */
export const readForm = async (deps: ConsoleDeps, ctx: Context, maxBytes = deps.body.smallBytes): Promise<URLSearchParams> => {
  let body: Buffer;
  try {
    const bounded = await readBounded(
      ctx.req.iterator({ destroyOnReturn: false }),
      declaredLength(ctx.req.headers['content-length']),
      maxBytes,
      deps.body.budget,
    );
    ctx.res.once('close', bounded.release);
    body = bounded.body;
  } catch (error) {
    // The rest is read and dropped, so the answer reaches a client still sending.
    ctx.req.resume();
    if (isAppError(error) && error.code === 'too_large') throw new PageError(413, 'The form is too large.');
    throw error;
  }
  if (!ctx.is('application/x-www-form-urlencoded')) throw new PageError(415, 'Forms are sent as application/x-www-form-urlencoded.');
  const form = new URLSearchParams(body.toString('utf8'));
  checkCsrf(deps, ctx, form);
  return form;
};

/** A field's trimmed value, or undefined when empty. */
export const field = (form: URLSearchParams, name: string): string | undefined => {
  const value = form.get(name)?.trim();
  return value ? value : undefined;
};
