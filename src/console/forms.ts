import type { Context } from 'koa';
import type { ConsoleDeps } from './context.js';
import { checkCsrf, PageError } from './session.js';

/** Reads an application/x-www-form-urlencoded body (413 above `maxBytes`) and checks its CSRF token. */
export const readForm = async (deps: ConsoleDeps, ctx: Context, maxBytes = 64 * 1024): Promise<URLSearchParams> => {
  if (Number(ctx.get('content-length') || 0) > maxBytes) throw new PageError(413, 'The form is too large.');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new PageError(413, 'The form is too large.');
    chunks.push(chunk);
  }
  if (!ctx.is('application/x-www-form-urlencoded')) throw new PageError(415, 'Forms are sent as application/x-www-form-urlencoded.');
  const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
  checkCsrf(deps, ctx, form);
  return form;
};

/** A field's trimmed value, or undefined when empty. */
export const field = (form: URLSearchParams, name: string): string | undefined => {
  const value = form.get(name)?.trim();
  return value ? value : undefined;
};
