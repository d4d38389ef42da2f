import type { Context } from 'koa';
import { AppError } from '../core/errors.js';

/** Reads a JSON request body, refusing more than `maxBytes` (413) and non-JSON (400). */
export const readJsonBody = async (ctx: Context, maxBytes: number): Promise<unknown> => {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > maxBytes) throw new AppError('too_large', `request body over ${maxBytes} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new AppError('too_large', `request body over ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  if (size === 0) return {};
  if (!ctx.is('application/json') && ctx.get('content-type') !== '') {
    throw new AppError('invalid_input', 'the body must be JSON (Content-Type: application/json)', { field: 'body' });
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new AppError('invalid_input', 'the body is not valid JSON', { field: 'body' });
  }
};
