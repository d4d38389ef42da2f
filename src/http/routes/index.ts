import type { Router } from '@koa/router';
import type { HttpDeps } from '../context.js';
import { accountRoutes } from './account.js';
import { folderRoutes } from './folders.js';
import { domainRoutes } from './domains.js';
import { eventRoutes } from './events.js';
import { keyRoutes } from './keys.js';
import { mailRoutes } from './mail.js';
import { metaRoutes } from './meta.js';
import { paymentRoutes } from './payments.js';
import { sendingRoutes } from './sending.js';
import { replyRoutes } from './replies.js';
import { suppressionRoutes } from './suppressions.js';
import { agentOwnerRoutes } from './agent-owner.js';
import { draftRoutes } from './drafts.js';
import { userAgentRoutes } from './user-agents.js';
import { userMailRoutes } from './user-mail.js';
import { userSessionRoutes } from './user-session.js';
import { threadRoutes } from './threads.js';
import { webhookRoutes } from './webhooks.js';

/** One routes file per resource; each later resource adds its line here. */
export const ROUTES: readonly ((router: Router, deps: HttpDeps) => void)[] = [
  metaRoutes,
  accountRoutes,
  mailRoutes,
  folderRoutes,
  keyRoutes,
  sendingRoutes,
  suppressionRoutes,
  webhookRoutes,
  userSessionRoutes,
  userAgentRoutes,
  userMailRoutes,
  agentOwnerRoutes,
  draftRoutes,
  domainRoutes,
  paymentRoutes,
  threadRoutes,
  replyRoutes,
  eventRoutes,
];
