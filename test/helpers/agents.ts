import type { TestApp } from './app.js';

/**
 * Registers an agent with `credits` and the standard sending state (probation allows only
 * 3 recipients a minute; the limits have tests of their own).
 */
export const funded = async (app: TestApp, credits: number, agentId?: string) => {
  const agent = await app.register(agentId);
  if (credits > 0) await app.app.services.accounts.addCredits(agent.email, credits);
  await app.app.services.sending.setState(agent.email, 'standard');
  return agent;
};

/** The credits the balance endpoint shows to this key. */
export const creditsOf = async (app: TestApp, key: string): Promise<number> => (await app.api('GET', '/api/v1/agent/balance', { key })).body.credits;
