import type { Router } from '@koa/router';
import type { HttpDeps } from '../context.js';
import { accountRoutes } from './account.js';
import { keyRoutes } from './keys.js';
import { mailRoutes } from './mail.js';
import { metaRoutes } from './meta.js';
import { paymentRoutes } from './payments.js';
import { sendingRoutes } from './sending.js';
import { suppressionRoutes } from './suppressions.js';
import { webhookRoutes } from './webhooks.js';

/** One routes file per resource; each later resource adds its line here. */
export const ROUTES: readonly ((router: Router, deps: HttpDeps) => void)[] = [
  metaRoutes, accountRoutes, mailRoutes, keyRoutes, sendingRoutes, suppressionRoutes, webhookRoutes, paymentRoutes,
];
