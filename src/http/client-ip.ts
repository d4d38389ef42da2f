import type { Context } from 'koa';

/** X-Forwarded-For counts only when the operator says a proxy is in front (http.trustProxy). */
export const clientIp = (ctx: Context, trustProxy: boolean): string => {
  if (trustProxy) {
    const forwarded = ctx.get('x-forwarded-for').split(',')[0]?.trim();
    if (forwarded) return forwarded;
  }
  return ctx.req.socket.remoteAddress ?? 'unknown';
};
