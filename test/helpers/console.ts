import { Router } from '@koa/router';
import { BodyBudget } from '../../src/core/body-budget.js';
import { PAGES } from '../../src/console/pages/index.js';
import type { TestApp } from './app.js';

/**
 * A browser-shaped HTTP client for the console: keeps cookies, does not follow redirects,
 * and fills in the CSRF token of the page it last loaded.
 */
export interface ConsolePage {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

export interface ConsoleClient {
  cookies: Map<string, string>;
  get(path: string): Promise<ConsolePage>;
  /** POSTs a form; `_csrf` comes from the last page loaded unless given. */
  post(path: string, fields?: Record<string, string>): Promise<ConsolePage>;
  /** The CSRF token in the last page loaded. */
  csrf(): string;
}

export const consoleClient = (baseUrl: string, initialCookies: Record<string, string> = {}): ConsoleClient => {
  const cookies = new Map(Object.entries(initialCookies));
  let last = '';
  const send = async (method: string, path: string, body?: string): Promise<ConsolePage> => {
    const headers: Record<string, string> = { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') };
    if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(baseUrl + path, { method, headers, body, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      const value = pair.slice(at + 1);
      if (/Max-Age=0/i.test(line) || value === '') cookies.delete(pair.slice(0, at));
      else cookies.set(pair.slice(0, at), value);
    }
    const text = await response.text();
    if (method === 'GET') last = text;
    return { status: response.status, headers: response.headers, text, location: response.headers.get('location') };
  };
  const client: ConsoleClient = {
    cookies,
    get: (path) => send('GET', path),
    post: (path, fields = {}) => send('POST', path, new URLSearchParams({ _csrf: client.csrf(), ...fields }).toString()),
    csrf: () => /name="_csrf" value="([^"]+)"/.exec(last)?.[1] ?? '',
  };
  return client;
};

/** A console client signed in as `owner` through the sign-in form. */
export const signedInConsole = async (baseUrl: string, owner: { email: string; password: string }): Promise<ConsoleClient> => {
  const client = consoleClient(baseUrl);
  await client.get('/sign-in');
  const response = await client.post('/sign-in', { email: owner.email, password: owner.password });
  if (response.status !== 303) throw new Error(`console sign-in: ${response.status}`);
  return client;
};

/** Every console route (method and path pattern), from the console's own route table over the app's services. */
export const consoleRoutes = (app: TestApp): { method: string; path: string }[] => {
  const router = new Router();
  for (const register of PAGES)
    register(router, {
      services: app.app.services,
      logger: app.app.logger,
      trustProxy: true,
      body: { sendBytes: 1 << 20, smallBytes: 1 << 14, budget: new BodyBudget(1 << 24) },
      timeZone: 'UTC',
      baseUrl: () => app.baseUrl,
    });
  return router.stack.flatMap((layer) => layer.methods.filter((method) => method !== 'HEAD').map((method) => ({ method, path: layer.path as string })));
};
