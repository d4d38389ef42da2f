import type { Middleware } from 'koa';
import type { Logger } from '../core/logger.js';
import type { Validator } from '../core/validate.js';
import type { HttpServices } from './services.js';
import type { BodyLimits } from '../core/body-budget.js';
import type { NodeMount } from './mount.js';

/** What every routes file receives. */
export interface HttpDeps {
  services: HttpServices;
  logger: Logger;
  trustProxy: boolean;
  body: BodyLimits;
  /** Request schemas with this app's limits (config `limits.*`). */
  validator: Validator;
  /** True once every listener is bound; /healthz answers 503 before. */
  isReady: () => boolean;
  /** The service's public URL (known once listening): https makes cookies Secure. */
  baseUrl: () => string;
  /** Server-rendered pages on this listener (the owner console), wired by src/app/adapters.ts; they answer only their own paths. */
  pages?: Middleware;
  /** The event stream's heartbeat interval (events.heartbeatSeconds). */
  events: { heartbeatMs: number };
  /** Told of every answered request, for the latency metrics: `route` is the matched template. */
  observe?: (method: string, route: string, status: number, seconds: number) => void;
  /** Other adapters on this listener (the MCP endpoint), wired by src/app/adapters.ts. */
  nodeMounts?: readonly NodeMount[];
}
