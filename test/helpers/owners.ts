import type { TestApp } from './app.js';

export interface TestOwner {
  id: string;
  email: string;
  password: string;
  /** A bearer owner JWT from POST /api/user/session. */
  token: string;
  /** The console cookie pair `name=value` that the sign-in set. */
  cookie: string;
}

let made = 0;

/**
 * An owner made as an operator does (`agentpost owners create` then the one-time link), then
 * signed in over REST. Each call signs in from its own client address, so the per-address
 * sign-in limit of one test never trips another's.
 */
export const makeOwner = async (app: TestApp, email = `owner${(made += 1)}@example.com`, password = 'correct horse battery'): Promise<TestOwner> => {
  const { token: link } = await app.app.services.owners.createByOperator(email);
  await app.app.services.owners.setPasswordWithLink(link, password);
  return { ...(await signIn(app, email, password)), password };
};

export const signIn = async (app: TestApp, email: string, password: string, factorCode?: string): Promise<Omit<TestOwner, 'password'>> => {
  const response = await app.api('POST', '/api/user/session', {
    body: { email, password, ...(factorCode ? { factorCode } : {}) },
    headers: { 'x-forwarded-for': `10.9.${made % 250}.${Math.floor(Math.random() * 250)}` },
  });
  if (response.status !== 200) throw new Error(`sign-in failed: ${response.status} ${JSON.stringify(response.body)}`);
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0];
  return { id: response.body.owner.id, email: response.body.owner.email, token: response.body.token, cookie };
};
