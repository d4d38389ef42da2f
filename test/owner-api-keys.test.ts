// Every /api/user/* endpoint against every kind of API key (full, mail:read, mail:send,
// mail:draft, domain): owner endpoints take an owner session only, so each key is 403 and no
// credential is 401; only sign-up and sign-in are public. The domain endpoints, which also
// take API keys with domains:* (contract Authentication), are walked in domain-permissions.
import t from 'tap';
import { buildOpenApiDocument } from '../src/http/openapi.js';
import { startApp } from './helpers/app.js';
import { issueAccessKey } from './helpers/keys.js';
import { makeOwner } from './helpers/owners.js';

t.test('API keys of every kind are refused on every /api/user/* endpoint', async (t) => {
  const app = await startApp(t);
  const owner = await makeOwner(app);
  const agent = await app.register();
  await app.api('POST', '/api/user/agents/claim', { key: owner.token, body: { apiKey: agent.apiKey } });
  const draftKey = (
    await app.api('POST', `/api/user/agents/${agent.userId}/access-keys`, { key: owner.token, body: { name: 'd', kind: 'mail', permissions: ['mail:draft'] } })
  ).body.apiKey;
  const keys: Record<string, string> = {
    full: agent.apiKey,
    'mail:read': (await issueAccessKey(app, agent.apiKey, { name: 'r', kind: 'mail', permissions: ['mail:read'] })).apiKey,
    'mail:send': (
      await issueAccessKey(app, agent.apiKey, { name: 's', kind: 'mail', permissions: ['mail:send'], dailyRecipientLimit: 1, totalRecipientLimit: 1 })
    ).apiKey,
    'mail:draft': draftKey,
    domain: (await issueAccessKey(app, agent.apiKey, { name: 'd', kind: 'domain', permissions: ['domains:read', 'domains:write'] })).apiKey,
  };
  const document = buildOpenApiDocument() as { paths: Record<string, Record<string, { security: unknown[] }>> };
  let checked = 0;
  for (const [template, operations] of Object.entries(document.paths).filter(([path]) => path.startsWith('/api/user/'))) {
    const path = template.replace('{userId}', agent.userId).replace(/\{id\}/, '00000000-0000-4000-8000-000000000000');
    for (const [method, operation] of Object.entries(operations)) {
      const isPublic = operation.security.length === 0;
      t.equal(
        isPublic,
        ['/api/user/signup', '/api/user/session'].includes(template) && method === 'post',
        `${method} ${template}: public only for sign-up and sign-in`,
      );
      if (isPublic) continue;
      t.equal((await app.api(method.toUpperCase(), path)).status, 401, `no credential: ${method} ${template}`);
      if (operation.security.some((scheme) => typeof scheme === 'object' && scheme !== null && 'bearer' in scheme)) continue;
      for (const [kind, key] of Object.entries(keys)) {
        const response = await app.api(method.toUpperCase(), path, { key, body: method === 'get' || method === 'delete' ? undefined : {} });
        t.equal(response.status, 403, `${kind} key: ${method} ${template}`);
        checked += 1;
      }
    }
  }
  t.ok(checked > 80, `${checked} refusals checked`);
  t.equal((await app.api('GET', '/api/user/me', { key: owner.token })).status, 200, 'the owner session still works');
});
