// The console in a real browser (Debian's Chromium driven by playwright-core): sign up, claim an
// agent, read a received HTML mail in its sandboxed frame (nothing remote loads, no script
// runs), issue a draft key, write a draft with it over REST, approve it in the page, and watch
// the recipient's outcome become `delivered` at a local SMTP sink. Screenshots of the main
// pages land in test/screenshots/ (ignored by git).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import t, { type Test } from 'tap';
import { startApp } from './helpers/app.js';
import { startSink } from './helpers/sink.js';
import { smtpSendRaw } from './helpers/smtp.js';

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
    app.app.services.accounts.addCredits(agent.email, 5);
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
}
