import type { Router } from '@koa/router';
import type { ConsoleDeps } from '../context.js';
import { agentPages } from './agent.js';
import { agentActivityPages } from './agent-activity.js';
import { agentKeyPages } from './agent-keys.js';
import { agentJunkPages } from './agent-junk.js';
import { authPages } from './auth.js';
import { billingPages } from './billing.js';
import { invoicePages } from './billing-invoice.js';
import { domainPages } from './domain.js';
import { domainListPages } from './domains.js';
import { draftPages } from './drafts.js';
import { healthPages } from './health.js';
import { homePages } from './home.js';
import { settingsPages } from './settings.js';

/** One pages file per area; later areas (invoices, health) add their line here and a NAV entry in layout.ts. */
export const PAGES: readonly ((router: Router, deps: ConsoleDeps) => void)[] = [
  authPages,
  homePages,
  agentPages,
  agentActivityPages,
  agentKeyPages,
  agentJunkPages,
  draftPages,
  domainListPages,
  domainPages,
  billingPages,
  invoicePages,
  healthPages,
  settingsPages,
];
