import t from 'tap';
import { HDKey } from 'viem/accounts';
import { encode } from 'uqr';
import { startApp } from './helpers/app.js';
import { signedInConsole } from './helpers/console.js';
import { startLocalChain } from './helpers/evm-chain.js';
import { makeOwner } from './helpers/owners.js';

/**
 * An owner pays for itself in USDC on Polygon against a real EVM chain (ganache on loopback):
 * over REST and in the console, whose invoice page shows the amount, the address, a QR code of
 * the payment URI and the confirmations so far of the 128, reloading itself while it waits.
 */
const chain = await startLocalChain();
t.teardown(() => chain.close());
const master = HDKey.fromMasterSeed(Buffer.alloc(32, 9));
const xpub = master.derive("m/44'/60'/0'/0").publicExtendedKey;
const app = await startApp(t, {
  funding: { paused: false },
  payments: { polygon: { rpcUrl: chain.proxyUrl, xpub, tokenContract: chain.token, tokenDecimals: 6, chainId: 1337, watchSchedule: '0 0 0 1 1 *' } },
});
const ada = await makeOwner(app, 'ada@example.com');
const units = (dollars: number): bigint => BigInt(dollars) * 1_000_000n;
const status = (token: string) => app.api('GET', `/api/user/payment/status/${token}`, { key: ada.token });

/** The dark modules an SVG path of unit rectangles (src/console/qr.ts) draws, as rows of booleans. */
const modulesOf = (svg: string): boolean[][] => {
  const side = Number(/viewBox="0 0 (\d+) \d+"/.exec(svg)?.[1]);
  const grid = Array.from({ length: side }, () => Array.from({ length: side }, () => false));
  for (const [, x, y, width] of svg.matchAll(/M(\d+) (\d+)h(\d+)v1h-\d+z/g)) {
    for (let dx = 0; dx < Number(width); dx += 1) grid[Number(y)][Number(x) + dx] = true;
  }
  return grid;
};

t.test("REST: the owner's Polygon invoice, its payment URI, applied once at 128 confirmations", async (t) => {
  const created = await app.api('POST', '/api/user/payment', {
    key: ada.token,
    body: { kind: 'mail_credits', method: 'polygon', amountCents: 200 },
    headers: { 'idempotency-key': 'ada-usdc-1' },
  });
  t.equal(created.status, 200);
  const invoice = created.body.invoice;
  t.match(invoice, { network: 'polygon', chainId: 1337, asset: 'USDC', amount: '2000000', confirmationsRequired: 128 });
  t.equal(invoice.uri, `ethereum:${invoice.contract}@1337/transfer?address=${invoice.address}&uint256=2000000`, 'EIP-681');
  await chain.transfer(invoice.address, units(2));
  t.match((await status(created.body.token)).body, { status: 'confirming', invoice: { confirmations: 1 } });
  await chain.mine(127);
  const results = await Promise.all([...Array.from({ length: 5 }, () => status(created.body.token)), app.app.services.payments.watchPolygon()]);
  t.ok(results.slice(0, 5).every((result: any) => result.body.status === 'applied'));
  t.equal((await app.api('GET', '/api/user/me', { key: ada.token })).body.credits, 20_000, 'applied once');
});

t.test('the console: amount, address, a QR code of the payment URI, confirmations of the 128 while it waits; hosting applied', async (t) => {
  const client = await signedInConsole(app.baseUrl, ada);
  const billing = await client.get('/billing');
  t.match(billing.text, /<option value="polygon">USDC on Polygon<\/option>/);
  const idempotencyKey = /name="kind" value="domain_hosting"><input type="hidden" name="idempotencyKey" value="([^"]+)"/.exec(billing.text)?.[1] as string;
  const posted = await client.post('/billing/buy', { kind: 'domain_hosting', idempotencyKey, periods: '1', method: 'polygon' });
  t.equal(posted.status, 303);
  const token = /(pay_[0-9a-f]{32})$/.exec(posted.location ?? '')?.[1] as string;
  const invoice = (await status(token)).body.invoice;

  const waiting = await client.get(`/billing/payments/${token}`);
  t.equal(waiting.status, 200);
  t.match(waiting.text, /<meta http-equiv="refresh" content="20">/, 'it reloads itself while it waits');
  t.match(waiting.text, /<strong>1\.00 USDC<\/strong> \(1000000 token units\)/);
  t.match(waiting.text, new RegExp(`<code>${invoice.address}</code>`));
  t.match(waiting.text, /Waiting for the transfer: 0 of 128 confirmations\./);
  t.match(waiting.text, /<span class="badge info">pending<\/span>/);
  t.ok(waiting.text.includes(`<a href="${invoice.uri.replace('&', '&amp;')}">Open in a wallet</a>`), 'a link a phone opens in its wallet');
  const svg = /<svg class="qr"[\s\S]*?<\/svg>/.exec(waiting.text)?.[0] as string;
  t.ok(svg, 'a QR code drawn on the server');
  t.notMatch(svg, /style=|<script/i, 'presentation attributes only (the CSP allows no inline style or script)');
  const expected = encode(invoice.uri, { ecc: 'M', border: 4 }).data;
  t.same(modulesOf(svg), expected, 'the QR code is that of the payment URI');
  t.notMatch(waiting.text, /<script/i);

  await chain.transfer(invoice.address, units(1));
  await chain.mine(9);
  const confirming = await client.get(`/billing/payments/${token}`);
  t.match(confirming.text, /Paid, confirming: 10 of 128 confirmations\./);
  t.match(confirming.text, /<dt>Confirmations<\/dt><dd>10 of 128<\/dd>/);
  t.match(confirming.text, /<span class="badge info">confirming<\/span>/);

  await chain.mine(118);
  const applied = await client.get(`/billing/payments/${token}`);
  t.match(applied.text, /Paid: hosting, 1 × 30 days added to your hosting\./);
  t.notMatch(applied.text, /http-equiv="refresh"/, 'no reload once it is settled');
  t.notMatch(applied.text, /<svg class="qr"/, 'nothing more to pay');
  t.equal(await app.app.services.hosting.isActive(ada.id), true);

  chain.setProxyDown(true);
  const second = await app.api('POST', '/api/user/payment', {
    key: ada.token,
    body: { kind: 'mail_credits', method: 'polygon', amountCents: 100 },
    headers: { 'idempotency-key': 'while-up' },
  });
  t.equal(second.status, 503, 'no invoice without the chain');
  chain.setProxyDown(false);
  const made = await app.api('POST', '/api/user/payment', {
    key: ada.token,
    body: { kind: 'mail_credits', method: 'polygon', amountCents: 100 },
    headers: { 'idempotency-key': 'while-up' },
  });
  chain.setProxyDown(true);
  const unchecked = await client.get(`/billing/payments/${made.body.token}`);
  t.equal(unchecked.status, 200, 'the RPC down: the invoice as last recorded, and why');
  t.match(unchecked.text, /Not checked just now: the Polygon RPC did not answer/);
  chain.setProxyDown(false);
});
