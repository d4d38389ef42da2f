import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Router } from '@koa/router';

/** A handler that answers on Node's own request and response (the MCP SDK's transport is one). */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * Another adapter served on the HTTP listener. src/app/adapters.ts hands these in, so this
 * adapter never imports the other one (docs/design.md rule 2): it only lends the paths and the
 * raw socket.
 */
export interface NodeMount {
  /** Exact paths; every method goes to the handler, which answers 405 itself where it must. */
  paths: readonly string[];
  handle: NodeHandler;
}

/**
 * Koa steps aside (`ctx.respond = false`): the handler reads the body and writes the response.
 * Headers set by earlier middleware (Cache-Control, nosniff) are already on `ctx.res` and stay.
 */
export const mountNodeHandlers = (router: Router, mounts: readonly NodeMount[]): void => {
  for (const mount of mounts) {
    for (const path of mount.paths) {
      router.all(path, async (ctx) => {
        ctx.respond = false;
        await mount.handle(ctx.req, ctx.res);
      });
    }
  }
};
