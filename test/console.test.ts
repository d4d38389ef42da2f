// The console over HTTP: sign-in with CSRF tokens, the security headers, the sandboxed mail
// frame, the one-time link printed by `agentpost owners create`, and a walk of every console
// route and /api/user/* endpoint with a second owner's session (403/404 everywhere).
import { join, resolve } from 'node:path';
import t from 'tap';
import { buildOpenApiDocument } from '../src/http/openapi.js';
import { funded } from './helpers/agents.js';
import { startApp, type TestApp } from './helpers/app.js';
import { consoleClient, consoleRoutes, signedInConsole } from './helpers/console.js';
import { addVerifiedDomain, startDomainApp } from './helpers/domains.js';
import { deliverDirect, simpleMessage } from './helpers/mail.js';
import { makeOwner, type TestOwner } from './helpers/owners.js';
import { runCommand } from './helpers/process.js';

const PASSWORD = 'console password';

const signedIn = (app: TestApp, owner: TestOwner) => signedInConsole(app.baseUrl, owner);

t.test('sign-in needs the form token; pages carry a CSP without inline script, and deny framing', async (t) => {
  const app = await startApp(t);
  const owner = await makeOwner(app, 'page@example.com', PASSWORD);
  const client = consoleClient(app.baseUrl);
  const home = await client.get('/');
  t.equal(home.status, 303);
  t.equal(home.location, '/sign-in');
  t.match(home.headers.getSetCookie().join('\n'), /agentpost_visitor=[^;]+; Path=\/; HttpOnly; SameSite=Lax/, 'a visitor gets a token binding');
  const form = await client.get('/sign-in');
  t.equal(form.status, 200);
  const csp = form.headers.get('content-security-policy') ?? '';
  t.match(csp, /default-src 'none'/);
  t.notMatch(csp, /unsafe-inline|unsafe-eval|script-src/, 'no script source at all, inline or not');
  t.match(csp, /frame-ancestors 'none'/);
  t.equal(form.headers.get('x-frame-options'), 'DENY');
  t.equal(form.headers.get('referrer-policy'), 'no-referrer');
  t.notMatch(form.text, /<script/i);

  const forged = await client.post('/sign-in', { email: owner.email, password: PASSWORD, _csrf: 'forged' });
  t.equal(forged.status, 403, 'a wrong form token');
  const stranger = consoleClient(app.baseUrl);
  await stranger.get('/sign-in');
  const crossToken = await stranger.post('/sign-in', { email: owner.email, password: PASSWORD, _csrf: client.csrf() });
  t.equal(crossToken.status, 403, "another browser's token");
  const wrong = await client.post('/sign-in', { email: owner.email, password: 'not the password' });
  t.equal(wrong.status, 401);
  t.match(wrong.text, /wrong email or password/);
  const right = await client.post('/sign-in', { email: owner.email, password: PASSWORD });
  t.equal(right.status, 303);
  t.match(right.headers.getSetCookie().join('\n'), /agentpost_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Expires=/);
  const signedInHome = await client.get('/');
  t.equal(signedInHome.status, 200);
  t.match(signedInHome.text, /Your agents/);
  const signOut = await client.post('/sign-out');
  t.equal(signOut.status, 303);
  t.equal((await client.get('/')).status, 303, 'signed out: back to sign-in');
  t.equal((await client.get('/assets/console.css')).headers.get('content-type'), 'text/css; charset=utf-8');
  t.match(form.text, /<link rel="icon" href="\/favicon\.svg" type="image\/svg\+xml">/, 'every page names its icon');
  for (const path of ['/favicon.svg', '/favicon.ico']) {
    const icon = await client.get(path);
    t.equal(icon.status, 200, path);
    t.equal(icon.headers.get('content-type'), 'image/svg+xml', path);
    t.match(icon.text, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  }
});

t.test("a message's HTML is served only into a sandboxed frame with its own policy", async (t) => {
  const app = await startApp(t);
  const owner = await makeOwner(app, 'reader@example.com', PASSWORD);
  const agent = await app.register();
  await app.api('POST', '/api/user/agents/claim', { key: owner.token, body: { apiKey: agent.apiKey } });
  const raw = `From: x@example.com\r\nTo: ${agent.email}\r\nSubject: html <b>mail</b>\r\nMIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>Hi</p><script>parent.document.title='owned'</script><img src="https://tracker.example/p.gif">\r\n`;
  await deliverDirect(app.app, [agent.email], raw);
  const client = await signedIn(app, owner);
  const page = await client.get(`/agents/${agent.userId}/mail/INBOX/1`);
  t.equal(page.status, 200);
  t.match(page.text, new RegExp(`<iframe class="mail" sandbox="" referrerpolicy="no-referrer" src="/agents/${agent.userId}/mail/INBOX/1/body"`));
  t.notMatch(page.text, /<script>parent/, 'the HTML is not in the page itself');
  const frame = await client.get(`/agents/${agent.userId}/mail/INBOX/1/body`);
  t.equal(frame.status, 200);
  t.match(frame.headers.get('content-security-policy'), /^sandbox; default-src 'none'; img-src data:/);
  t.match(frame.headers.get('content-security-policy'), /frame-ancestors 'self'/);
  t.equal(frame.headers.get('x-frame-options'), 'SAMEORIGIN');
  t.match(page.text, /<h1>html &lt;b&gt;mail&lt;\/b&gt;<\/h1>/, 'the subject is escaped');
  t.match((await client.get(`/agents/${agent.userId}/inbox`)).text, /html &lt;b&gt;mail&lt;\/b&gt;/, 'in the list too');
  const text = await client.get(`/agents/${agent.userId}/mail/INBOX/1?view=text`);
  t.notMatch(text.text, /<iframe/);
  t.match(text.text, /&lt;script&gt;|Hi/, 'text view escapes what it shows');
});

t.test('`agentpost owners create` prints a one-time link that the console uses once', async (t) => {
  const dataDir = t.testdir({});
  const app = await startApp(t, { dataDir });
  const bin = resolve(import.meta.dirname, '..', 'bin', 'agentpost');
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AGENTPOST_'))), AGENTPOST_BASE_URL: app.baseUrl };
  const made = await runCommand(bin, ['owners', 'create', 'invited@example.com', '--data-dir', dataDir], { env });
  t.equal(made.code, 0, made.stderr);
  const link = /(http:\/\/\S+\/set-password\/[A-Za-z0-9_-]+)/.exec(made.stdout)?.[1] as string;
  t.ok(link, made.stdout);
  const path = new URL(link).pathname;
  const client = consoleClient(app.baseUrl);
  t.match((await client.get(path)).text, /Choose your password/);
  t.equal((await client.post(path, { password: 'too short' })).status, 400);
  const set = await client.post(path, { password: PASSWORD });
  t.equal(set.status, 303);
  t.equal((await client.get('/')).status, 200, 'signed in');
  t.match((await consoleClient(app.baseUrl).get(path)).text, /used or has expired/);
  const again = await runCommand(bin, ['owners', 'link', 'invited@example.com', '--data-dir', dataDir], { env });
  t.equal(again.code, 0, again.stderr);
  t.match(again.stdout, /\/set-password\//, again.stderr);
  t.equal((await runCommand(bin, ['owners', 'create', 'invited@example.com', '--data-dir', dataDir], { env })).code, 1, 'exists already');
  t.ok(join(dataDir, 'session.key'));
});

t.test("a second owner's session gets 403 or 404 on every console route and /api/user/* endpoint of the first", async (t) => {
  // Funding on, so the payment status routes answer the ownership check (paused, every token is 503 alike).
  const { app, dns } = await startDomainApp(t, { funding: { paused: false } });
  const ada = await makeOwner(app, 'ada@example.com', PASSWORD);
  const eve = await makeOwner(app, 'eve@example.com', PASSWORD);
  // Ada's domain, with an alias and a mailbox, so the domain pages have something to hide.
  const domain = await addVerifiedDomain(app, dns, ada.token, 'adas-domain.example');
  await app.app.services.hosting.grant((await app.api('GET', '/api/user/me', { key: ada.token })).body.address, 30);
  const mailbox = (await app.api('POST', `/api/user/domains/${domain.id}/mailboxes`, { key: ada.token, body: { localPart: 'adas-box' } })).body;
  const alias = (await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key: ada.token, body: { localPart: 'adas-alias', mailbox: mailbox.email } }))
    .body;
  const agent = await funded(app, 5, 'adas-agent');
  await app.api('POST', '/api/user/agents/claim', { key: ada.token, body: { apiKey: agent.apiKey } });
  await deliverDirect(app.app, [agent.email], simpleMessage({ to: agent.email, subject: 'private subject', body: 'secret words' }));
  const sent = (await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { to: agent.email, subject: 'to self', text: 'x' } })).body;
  const key = (
    await app.api('POST', `/api/user/agents/${agent.userId}/access-keys`, { key: ada.token, body: { name: 'd', kind: 'mail', permissions: ['mail:draft'] } })
  ).body;
  const draft = (await app.api('POST', '/api/v1/agent/drafts', { key: key.apiKey, body: { to: 'a@example.com', subject: 'draft subject', text: 't' } })).body;
  const params: Record<string, string> = {
    id: agent.userId,
    userId: agent.userId,
    folder: 'INBOX',
    uid: '1',
    outboundId: sent.id,
    keyId: key.id,
    aliasId: alias.id,
    mailboxId: mailbox.id,
  };
  const adaOwn: Record<string, string> = { ...params, id: ada.id, userId: ada.id };
  const SECRETS = /private subject|draft subject|adas-agent|secret words|adas-domain|adas-box|adas-alias/;
  const fill = (path: string, values: Record<string, string>, style: 'colon' | 'brace') =>
    path.replace(style === 'colon' ? /:(\w+)/g : /\{(\w+)\}/g, (_, name: string) => values[name] ?? (name === 'id' ? draft.id : name));

  // Every console route, from the console's own route table.
  const routes = consoleRoutes(app);
  const eveConsole = await signedIn(app, eve);
  await eveConsole.get('/');
  let walked = 0;
  for (const { method, path } of routes) {
    if (/sign-in|sign-up|set-password|sign-out/.test(path)) continue;
    const own = path.startsWith('/drafts') ? { ...params, id: draft.id } : path.startsWith('/domains') ? { ...params, id: domain.id } : params;
    for (const values of path.includes(':') ? [own, adaOwn] : [{}]) {
      const target = fill(path, values, 'colon');
      const response =
        method === 'GET'
          ? await eveConsole.get(target)
          : await eveConsole.post(target, { name: 'x', apiKey: 'svc_x', to: 'a@b.test', subject: 's', text: 't', localPart: 'x', mailbox: mailbox.email });
      walked += 1;
      if (path.includes(':')) t.ok([403, 404].includes(response.status), `console ${method} ${target}: ${response.status}`);
      t.notMatch(response.text, SECRETS, `console ${method} ${target} shows nothing of ada's`);
    }
  }
  t.ok(walked > 20, `walked ${walked} console requests`);

  // Every /api/user/* endpoint, from the OpenAPI document (but signing eve out).
  const document = buildOpenApiDocument() as { paths: Record<string, Record<string, unknown>> };
  const idIn = (path: string): string =>
    path.includes('/email/')
      ? '1'
      : path.includes('/outbound/')
        ? sent.id
        : path.includes('/access-keys/')
          ? key.id
          : path.includes('/drafts/')
            ? draft.id
            : path.startsWith('/api/user/domains/')
              ? domain.id
              : '00000000-0000-4000-8000-000000000000';
  for (const [path, operations] of Object.entries(document.paths).filter(([path]) => path.startsWith('/api/user/'))) {
    for (const method of Object.keys(operations).filter((method) => !(path === '/api/user/session' && method === 'delete'))) {
      const owned = path.includes('{');
      for (const values of owned
        ? [
            { ...params, id: idIn(path) },
            { ...adaOwn, id: idIn(path) },
          ]
        : [{}]) {
        const target = fill(path, values, 'brace');
        // Valid bodies, so what answers is the ownership check and not the input check.
        const body =
          method === 'get' || method === 'delete'
            ? undefined
            : path.endsWith('/access-keys')
              ? { name: 'x', kind: 'mail', permissions: ['mail:draft'] }
              : path.endsWith('/aliases')
                ? { localPart: 'x', mailbox: 'x@example.com' }
                : path.endsWith('/mailboxes')
                  ? { localPart: 'x' }
                  : path.endsWith('/approve')
                    ? { version: '0'.repeat(32) }
                    : {};
        const response = await app.api(method.toUpperCase(), target, { key: eve.token, body });
        if (owned) t.ok([403, 404].includes(response.status), `REST ${method} ${target}: ${response.status}`);
        t.notMatch(JSON.stringify(response.body ?? ''), SECRETS, `REST ${method} ${target} shows nothing of ada's`);
      }
    }
  }
  t.equal((await app.api('GET', `/api/v1/agent/drafts/${draft.id}`, { key: key.apiKey })).body.status, 'pending', "ada's draft is untouched");
  t.equal(
    (await app.api('GET', `/api/user/agents/${agent.userId}/access-keys`, { key: ada.token })).body.accessKeys[0].status,
    'active',
    "ada's key is untouched",
  );
  const adas = (await app.api('GET', `/api/user/domains/${domain.id}`, { key: ada.token })).body;
  t.equal(adas.status, 'verified', "ada's domain is untouched");
  t.same(
    (await app.api('GET', `/api/user/domains/${domain.id}/aliases`, { key: ada.token })).body.aliases.map((a: { id: string }) => a.id),
    [alias.id],
    'and its alias',
  );
  t.same(
    (await app.api('GET', `/api/user/domains/${domain.id}/mailboxes`, { key: ada.token })).body.mailboxes.map((m: { id: string }) => m.id),
    [mailbox.id],
    'and its mailbox',
  );
});
