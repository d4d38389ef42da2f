// The console in a real browser (Debian's Chromium driven by playwright-core): sign up, claim an
// agent, read a received HTML mail in its sandboxed frame (nothing remote loads, no script
// runs), issue a draft key, write a draft with it over REST, approve it in the page, and watch
// the recipient's outcome become `delivered` at a local SMTP sink. Then every console page at
// a phone's 390 pixels: none may scroll sideways, the favicon loads, and the QR code of a
// Polygon invoice reads back as its payment URI. Screenshots of the main pages land in
// test/screenshots/ (ignored by git).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import t, { type Test } from 'tap';
import { startApp, type TestApp } from './helpers/app.js';
import { addVerifiedDomain, startDomainApp } from './helpers/domains.js';
import { startLocalChain } from './helpers/evm-chain.js';
import { consoleRoutes } from './helpers/console.js';
import { makeOwner } from './helpers/owners.js';
import { startSink } from './helpers/sink.js';
import { smtpSendRaw } from './helpers/smtp.js';
import { startStripeStandIn } from './helpers/stripe-api.js';

t.setTimeout(300_000);

const SCREENSHOTS = resolve(import.meta.dirname, 'screenshots');
const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((path): path is string => Boolean(path));
const chromiumPath = CANDIDATES.find((path) => existsSync(path));

/** A fresh profile, headless, and none of Chromium's own network traffic. */
const launch = async (t: Test): Promise<BrowserContext> => {
  const profile = mkdtempSync(join(tmpdir(), 'agentpost-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: 1180, height: 860 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  t.teardown(async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  });
  return context;
};

const shot = async (page: Page, name: string, phone = false): Promise<void> => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  if (phone) await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}${phone ? '-phone' : ''}.png`), fullPage: true });
  if (phone) await page.setViewportSize({ width: 1180, height: 860 });
};

/** Stands in for every remote server a mail might try to reach: it counts what arrives. */
const startTracker = async (t: Test) => {
  const hits: string[] = [];
  const server = createServer((request, response) => {
    hits.push(request.url ?? '');
    response.end('');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  t.teardown(() => new Promise<void>((done) => server.close(() => done())));
  return { hits, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};

const PHONE_WIDTH = 390;
const ZBARIMG = '/usr/bin/zbarimg';

/** What the route table's parameters are filled with, and the owner who signs in. */
interface PageValues {
  email: string;
  password: string;
  /** The owner's session JWT, for the REST look at an invoice. */
  ownerToken: string;
  linkToken: string;
  polygonToken: string;
  params: Record<string, string>;
  /** A route's own values where a parameter means something else there (a draft's or a domain's id). */
  byPrefix: Record<string, Record<string, string>>;
}

const fillPath = (path: string, values: PageValues): string => {
  const prefix = Object.keys(values.byPrefix).find((candidate) => path.startsWith(candidate));
  const params = { ...values.params, ...(prefix ? values.byPrefix[prefix] : {}) };
  return path.replace(/:(\w+)/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`no value for :${name} in ${path}: add one to consoleWithEverything`);
    return encodeURIComponent(value);
  });
};

/**
 * An app where every console page has something to show: an owner with a claimed agent that
 * received an HTML mail and sent one, its webhook, keys and a draft, a verified domain with a
 * mailbox and an alias, card and Polygon invoices of its own. Returns the signed-in GET pages
 * from the console's own route table (not the sandboxed mail frames), and what fills them.
 */
const consoleWithEverything = async (t: Test): Promise<{ app: TestApp; routes: string[]; values: PageValues }> => {
  const stripe = await startStripeStandIn('whsec_browser');
  t.teardown(() => stripe.close());
  const chain = await startLocalChain();
  t.teardown(() => chain.close());
  const { app, dns } = await startDomainApp(t, {
    owners: { signup: 'open' },
    webhooks: { allowInsecure: true },
    funding: { paused: false },
    payments: {
      card: { secretKey: 'sk_test_browser', webhookSecret: 'whsec_browser', apiUrl: stripe.url },
      polygon: { rpcUrl: chain.proxyUrl, xpub: POLYGON_XPUB, tokenContract: chain.token, tokenDecimals: 6, watchSchedule: '0 0 0 1 1 *' },
    },
  });
  const password = 'a phone-sized password';
  const owner = await makeOwner(app, 'a.rather.long.login.name@example.com', password);
  const { token: linkToken } = await app.app.services.owners.createByOperator('invited@example.com');
  const agent = await app.register('an-agent-with-a-long-identifier-name');
  await app.app.services.accounts.addCredits(agent.email, 50);
  await app.api('POST', '/api/user/agents/claim', { key: owner.token, body: { apiKey: agent.apiKey } });
  const longWord = 'x'.repeat(120);
  await smtpSendRaw(
    app.smtpPort,
    'someone.with.a.long.address@far-away-domain.example.org',
    [agent.email],
    `From: Someone <someone.with.a.long.address@far-away-domain.example.org>\r\nTo: ${agent.email}\r\nSubject: A subject line that goes on ${longWord}\r\nMIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>https://example.org/${longWord}</p>\r\n`,
  );
  const sent = (
    await app.api('POST', '/api/v1/agent/send', {
      key: agent.apiKey,
      body: { to: ['first.recipient.with.a.long.name@remote.example', 'second@remote.example'], subject: `Sent ${longWord}`, text: 'x' },
    })
  ).body;
  await app.api('POST', '/api/v1/agent/webhooks', { key: agent.apiKey, body: { url: `http://127.0.0.1:9/a/long/path/${longWord}` } });
  const draftKey = (
    await app.api('POST', `/api/user/agents/${agent.userId}/access-keys`, {
      key: owner.token,
      body: { name: `drafting ${longWord.slice(0, 60)}`, kind: 'mail', permissions: ['mail:draft'] },
    })
  ).body;
  const draft = (
    await app.api('POST', '/api/v1/agent/drafts', { key: draftKey.apiKey, body: { to: 'a@remote.example', subject: `Draft ${longWord}`, text: longWord } })
  ).body;
  const me = (await app.api('GET', '/api/user/me', { key: owner.token })).body;
  await app.app.services.hosting.grant(me.address, 30);
  const domain = await addVerifiedDomain(app, dns, owner.token, 'a-long-subdomain-name.of-a-custom-domain.example');
  const mailbox = (
    await app.api('POST', `/api/user/domains/${domain.id}/mailboxes`, { key: owner.token, body: { localPart: 'mailbox-with-a-long-local-part' } })
  ).body;
  await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key: owner.token, body: { localPart: 'alias', mailbox: mailbox.email } });
  const buy = async (body: unknown, key: string) =>
    (await app.api('POST', '/api/user/payment', { key: owner.token, body, headers: { 'idempotency-key': key } })).body.token as string;
  const cardToken = await buy({ kind: 'mail_credits', method: 'card', amountCents: 500 }, 'browser-card');
  const polygonToken = await buy({ kind: 'domain_hosting', method: 'polygon', periods: 3 }, 'browser-polygon');

  const routes = consoleRoutes(app)
    .filter((route) => route.method === 'GET')
    .map((route) => route.path)
    .filter((path) => !/^\/(sign-in|sign-up|set-password|assets|favicon)|\/body$/.test(path));
  return {
    app,
    routes: [...new Set(routes)],
    values: {
      email: owner.email,
      password,
      ownerToken: owner.token,
      linkToken,
      polygonToken,
      params: { id: agent.userId, folder: 'INBOX', uid: '1', outboundId: sent.id, token: cardToken },
      byPrefix: { '/drafts': { id: draft.id }, '/domains': { id: domain.id } },
    },
  };
};

/** The extended public key invoices derive their addresses from (any one works here). */
const POLYGON_XPUB = 'xpub6Ew7EvtU5EcYekrZWg8pm8BqR1dMb9xqooABkmNCi4KNcEZDwx3r9GmFhgJFge8RAZPLo2UBh2bsCcbZcbqp1bKz5CahKv5ZnMRCH96oQAU';

if (!chromiumPath) {
  t.comment(`skipped: no Chromium at ${CANDIDATES.join(', ')} (apt-get install -y chromium; .ci/run installs it)`);
  t.pass('skipped: no Chromium');
} else {
  t.test('an owner signs up, claims, reads, issues a draft key and approves a draft that gets delivered', async (t) => {
    const sink = await startSink(t);
    const tracker = await startTracker(t);
    const app = await startApp(t, { owners: { signup: 'open' }, outbound: { relay: `smtp://127.0.0.1:${sink.port}`, timeoutMs: 5000 } }, { autoDeliver: true });
    const context = await launch(t);
    const page = await context.newPage();

    await page.goto(`${app.baseUrl}/sign-up`);
    await page.fill('input[name=email]', 'person@example.com');
    await page.fill('input[name=password]', 'a very good password');
    await Promise.all([page.waitForURL(/\/sign-in\?done=signed-up/), page.click('button[type=submit]')]);
    await shot(page, 'sign-in');
    await page.fill('input[name=email]', 'person@example.com');
    await page.fill('input[name=password]', 'a very good password');
    await Promise.all([page.waitForURL(`${app.baseUrl}/`), page.click('form[action="/sign-in"] button')]);
    t.match(await page.textContent('h1'), 'Your agents');

    const agent = await app.register('browser-bot');
    await app.app.services.accounts.addCredits(agent.email, 5);
    await page.fill('input[name=apiKey]', agent.apiKey);
    await Promise.all([page.waitForURL(/done=claimed/), page.click('form[action="/agents/claim"] button')]);
    t.match(await page.textContent('table'), 'browser-bot');
    await shot(page, 'home');
    await shot(page, 'home', true);

    const html =
      `<p id="hello">Hello from the outside</p><img src="${tracker.origin}/pixel.gif"><link rel="stylesheet" href="${tracker.origin}/style.css">` +
      `<script>fetch('${tracker.origin}/script'); parent.document.title = 'scripted';</script>`;
    await smtpSendRaw(
      app.smtpPort,
      'friend@example.org',
      [agent.email],
      `From: Friend <friend@example.org>\r\nTo: ${agent.email}\r\nSubject: A greeting\r\nMIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n${html}\r\n`,
    );
    await page.click('text=browser-bot');
    await page.click('nav.tabs >> text=Mail');
    await Promise.all([page.waitForURL(/\/mail\/INBOX\/1$/), page.click('text=A greeting')]);
    const frame = page.frameLocator('iframe.mail');
    t.equal(await frame.locator('#hello').textContent(), 'Hello from the outside', 'the HTML shows in its frame');
    await page.waitForLoadState('networkidle');
    t.same(tracker.hits, [], 'nothing remote was loaded and no script ran');
    t.not(await page.title(), 'scripted');
    await shot(page, 'message');

    await page.click('nav.tabs >> text=Keys');
    await page.fill('input[name=name]', 'drafting');
    await page.click('form[action$="/keys"] button');
    const draftKey = (await page.textContent('code.secret'))?.trim() as string;
    t.match(draftKey, /^svc_access_[0-9a-f]{64}$/);
    await shot(page, 'keys');

    const created = await app.api('POST', '/api/v1/agent/drafts', {
      key: draftKey,
      body: { to: 'someone@remote.example', subject: 'Please approve me', text: 'A draft from the bot.' },
    });
    t.equal(created.status, 200);
    await page.click('header nav >> text=Drafts');
    await page.click('text=Please approve me');
    await shot(page, 'draft');
    await Promise.all([page.waitForURL(/\/outbound\/[0-9a-f-]{36}$/), page.click('text=Approve and send')]);
    await sink.waitFor(1);
    t.match(sink.messages[0].raw.toString(), /Subject: Please approve me/);
    for (let tries = 0; tries < 100 && !(await page.locator('td .badge', { hasText: 'delivered' }).count()); tries += 1) {
      await page.waitForTimeout(100);
      await page.reload();
    }
    t.equal(await page.locator('td .badge').first().textContent(), 'delivered', 'the outcome shows as delivered');
    await shot(page, 'outbound');
    await shot(page, 'outbound', true);
    const approved = await app.api('GET', `/api/v1/agent/drafts/${created.body.id}`, { key: draftKey });
    t.match(approved.body, { status: 'sent', decision: { outcome: 'approved', by: { email: 'person@example.com' } } });

    await page.click('text=Overview');
    await shot(page, 'overview');
    await page.click('header nav >> text=Settings');
    await shot(page, 'settings');
  });

  t.test('every console page fits a 390-pixel-wide phone: no sideways scroll; the favicon loads', async (t) => {
    const { app, routes, values } = await consoleWithEverything(t);
    const context = await launch(t);
    const page = await context.newPage();
    await page.setViewportSize({ width: PHONE_WIDTH, height: 844 });
    const favicons: number[] = [];
    page.on('response', (response) => {
      if (new URL(response.url()).pathname === '/favicon.svg') favicons.push(response.status());
    });

    const visit = async (path: string) => {
      const response = await page.goto(app.baseUrl + path);
      t.equal(response?.status(), 200, `${path}: 200`);
      const width = await page.evaluate(() => {
        const root = document.scrollingElement as Element;
        // Anything that pokes out of the viewport, to say what to fix when it fails.
        const wide = [...document.querySelectorAll('body *')]
          .filter((element) => element.getBoundingClientRect().right > root.clientWidth + 0.5 && !element.closest('.scroll'))
          .slice(0, 5)
          .map((element) => `${element.tagName.toLowerCase()}${element.className ? `.${String(element.className).replace(/ /g, '.')}` : ''}`);
        return { scroll: root.scrollWidth, client: root.clientWidth, wide };
      });
      t.ok(
        width.scroll <= width.client,
        `${path}: scrollWidth ${width.scroll} <= clientWidth ${width.client}${width.wide.length ? ` (too wide: ${width.wide.join(', ')})` : ''}`,
      );
    };

    for (const path of ['/sign-in', '/sign-up', `/set-password/${values.linkToken}`]) await visit(path);
    await page.goto(`${app.baseUrl}/sign-in`);
    await page.fill('input[name=email]', values.email);
    await page.fill('input[name=password]', values.password);
    await Promise.all([page.waitForURL(`${app.baseUrl}/`), page.click('form[action="/sign-in"] button')]);
    let walked = 0;
    for (const path of routes) {
      await visit(fillPath(path, values));
      walked += 1;
    }
    t.ok(walked >= 17, `walked ${walked} signed-in pages`);
    await page.goto(`${app.baseUrl}/billing/payments/${values.polygonToken}`);
    await shot(page, 'invoice-polygon', true);
    if (existsSync(ZBARIMG)) {
      // An independent QR decoder reads the code as a phone's camera would see it on screen.
      const image = join(SCREENSHOTS, 'invoice-qr.png');
      await page.locator('svg.qr').screenshot({ path: image });
      const uri = (await app.api('GET', `/api/user/payment/status/${values.polygonToken}`, { key: values.ownerToken })).body.invoice.uri;
      t.equal(execFileSync(ZBARIMG, ['-q', '--raw', image], { encoding: 'utf8' }).trim(), uri, 'the QR code on the page reads as the payment URI');
    } else t.comment(`QR decoding skipped: no ${ZBARIMG} (apt-get install -y zbar-tools)`);
    await page.goto(`${app.baseUrl}/billing`);
    await shot(page, 'billing', true);
    // Chromium asks for a page's icon when it gets round to it, which under load can be after the
    // walk: the icon the page declares is also loaded through the browser's context here.
    const icon = await page.locator('link[rel="icon"]').getAttribute('href');
    const loaded = icon ? await page.request.get(new URL(icon, page.url()).toString()) : null;
    t.equal(loaded?.status(), 200, 'the favicon the page declares loads');
    t.match(loaded?.headers()['content-type'] ?? '', /^image\//, 'as an image');
    t.ok(
      favicons.every((status) => status === 200),
      `every favicon request Chromium made was answered (${favicons.length})`,
    );
  });
}
