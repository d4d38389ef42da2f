// Requests Node's HTTP parser refuses before any route (RFC 9112) get the REST error body and
// a documented status, as every other failure; any query string a client can send still gets
// the OpenAPI document.
import { connect } from 'node:net';
import t from 'tap';
import { startApp } from './helpers/app.js';
import { assertMatchesOpenApi } from './helpers/openapi.js';

const DOCUMENT = '/api/v1/openapi.json';

/** Sends raw bytes and reads the answer until the server closes the connection. */
const rawExchange = (port: number, request: string): Promise<{ status: number; headers: string; body: string }> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1] ?? 0), headers: text.slice(0, split), body: text.slice(split + 4) });
    });
    socket.write(Buffer.from(request, 'utf8'));
  });

const get = (target: string, headers: string[] = []): string => [`GET ${target} HTTP/1.1`, 'Host: agentpost.test', ...headers, '', ''].join('\r\n');

t.test('a request the parser refuses answers a documented status with the error body, and the connection closes', async (t) => {
  const app = await startApp(t);
  const cases: [string, string, number, string][] = [
    ['a control character in the query', get(`${DOCUMENT}?a=\u0001`), 400, 'invalid_input'],
    ['a raw UTF-8 byte in the query', get(`${DOCUMENT}?q=é`), 400, 'invalid_input'],
    ['a raw space in the query', get(`${DOCUMENT}?a=b c`), 400, 'invalid_input'],
    ['a tab in the query', get(`${DOCUMENT}?a=\t`), 400, 'invalid_input'],
    ['a control character in a header', get(DOCUMENT, ['X-Probe: \u0001']), 400, 'invalid_input'],
    ['a space in a header name', get(DOCUMENT, ['X Probe: 1']), 400, 'invalid_input'],
    ['two different lengths', get(DOCUMENT, ['Content-Length: 1', 'Content-Length: 2']), 400, 'invalid_input'],
    ['a length that is no number', get(DOCUMENT, ['Content-Length: abc']), 400, 'invalid_input'],
    ['headers over the size limit', get(DOCUMENT, [`X-Long: ${'a'.repeat(20_000)}`]), 431, 'too_large'],
    ['an expectation other than 100-continue', get(DOCUMENT, ['Expect: something-else']), 417, 'invalid_input'],
  ];
  for (const [name, request, status, code] of cases) {
    const answer = await rawExchange(app.app.ports.http, request);
    t.equal(answer.status, status, name);
    t.match(answer.headers, /\r\ncontent-type: application\/json; charset=utf-8\r\n/i, `${name}: JSON`);
    let body: unknown;
    t.doesNotThrow(() => {
      body = JSON.parse(answer.body);
    }, `${name}: the body is JSON`);
    t.match(body, { code, error: String }, `${name}: the REST error body`);
    t.doesNotThrow(() => assertMatchesOpenApi('GET', DOCUMENT, status, body), `${name}: as the document says`);
  }
  t.equal((await fetch(app.baseUrl + DOCUMENT)).status, 200, 'the listener still answers');
});

t.test('any query string or header a client can send gets the document', async (t) => {
  const app = await startApp(t);
  const queries = [
    '',
    '?',
    '?a',
    '?a=1&a=2',
    '?%zz',
    '?%00',
    '?a=%C0%AF',
    '?__proto__=1&constructor=2',
    `?q=${encodeURIComponent('é\u0001 <>"{}|')}`,
    '#fragment',
  ];
  for (const query of queries) {
    const response = await fetch(`${app.baseUrl}${DOCUMENT}${query}`, {
      headers: { authorization: 'Basic eDp5', 'x-forwarded-for': 'garbage', cookie: '%%%', 'x-probe': 'é' },
    });
    const body = await response.json();
    t.equal(response.status, 200, `query ${JSON.stringify(query)}`);
    assertMatchesOpenApi('GET', DOCUMENT, response.status, body);
  }
});
