import type { Context } from 'koa';
import { clientAddress } from '../core/client-ip.js';

/** X-Forwarded-For counts only when the operator says a proxy is in front (http.trustProxy). */
export const clientIp = (ctx: Context, trustProxy: boolean): string => clientAddress(ctx.get('x-forwarded-for'), ctx.req.socket.remoteAddress, trustProxy);
