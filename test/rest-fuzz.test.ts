// Property-based fuzz of every operation in the OpenAPI document (fast-check, seeded): path
// ids, query strings, headers, keys and bodies drawn from the document's own schemas, mostly
// near-valid and sometimes hostile. Properties: no 5xx but a documented 503, and every answer
// valid against the document. FUZZ_SEED and FUZZ_RUNS replay or widen a run.
import fc, { type Arbitrary } from 'fast-check';
import t from 'tap';
import type { DnsResolver } from '../src/core/dns.js';
import { buildOpenApiDocument } from '../src/http/openapi.js';
import { startApp, type TestApp } from './helpers/app.js';
import { funded } from './helpers/agents.js';
import { report } from './helpers/fault.js';
import { issueAccessKey } from './helpers/keys.js';
import { assertMatchesOpenApi } from './helpers/openapi.js';
import { schemaArbitrary } from './helpers/schema-arbitrary.js';

t.setTimeout(600_000);

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 3_000);
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** No name resolves: webhook targets are refused, and nothing is ever sent off this machine. */
const noDns = (): DnsResolver => {
  const fail = async (name: string): Promise<never> => {
    throw Object.assign(new Error(`queryA ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
  };
  return { resolveMx: fail, resolve4: fail, resolve6: fail, resolveAddresses: fail, resolveTxt: fail, resolveCname: fail, resolvePtr: fail };
};

interface OperationCase {
  method: string;
  template: string;
  operation: Record<string, any>;
}

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

const document = buildOpenApiDocument() as { paths: Record<string, Record<string, any>>; components: Record<string, any> };
const operations: OperationCase[] = Object.entries(document.paths).flatMap(([template, item]) =>
  Object.entries(item)
    .filter(([method]) => METHODS.includes(method))
    .map(([method, operation]) => ({ method: method.toUpperCase(), template, operation })),
);

/** What a request is built from: the caller's key, path ids, query, headers and body. */
const requestArbitrary = (op: OperationCase, keys: () => string[], known: () => string[]): Arbitrary<FuzzRequest> => {
  const options = { root: document, known };
  const params: any[] = op.operation.parameters ?? [];
  const value = (schema: unknown) => schemaArbitrary(schema ?? { type: 'string' }, options).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  const pathParams = fc.record(Object.fromEntries(params.filter((p) => p.in === 'path').map((p) => [p.name, value(p.schema)])));
  const query = fc.record(Object.fromEntries(params.filter((p) => p.in === 'query').map((p) => [p.name, value(p.schema)])), { requiredKeys: [] });
  // A header carries bytes: UTF-8 as a client would send it, without the CR, LF and NUL no client can.
  const headerValue = (schema: unknown) =>
    value(schema).map((v) =>
      Buffer.from(v, 'utf8')
        .toString('latin1')
        .replace(/[\r\n\0]/g, ''),
    );
  const headerParams = fc.record(Object.fromEntries(params.filter((p) => p.in === 'header').map((p) => [p.name.toLowerCase(), headerValue(p.schema)])), {
    requiredKeys: [],
  });
  const auth = fc.oneof(
    {
      arbitrary: fc
        .constant(null)
        .chain(() => fc.constantFrom(...keys()))
        .map((key) => `Bearer ${key}`),
      weight: 6,
    },
    { arbitrary: fc.constantFrom('', 'Bearer', `Bearer svc_${'0'.repeat(64)}`, 'Basic eDp5', `Bearer svc_access_${'f'.repeat(64)}`), weight: 1 },
  );
  const schema = op.operation.requestBody?.content?.['application/json']?.schema;
  const body =
    schema === undefined
      ? fc.constant(undefined)
      : fc.oneof(
          { arbitrary: schemaArbitrary(schema, options).map((v) => JSON.stringify(v)), weight: 12 },
          {
            arbitrary: fc.constantFrom('', '{', 'null', '[]', '"x"', '{"a":', '\u0000', '1e999', JSON.stringify({ ['__proto__']: { admin: true } })),
            weight: 1,
          },
        );
  const contentType = fc.oneof(
    { arbitrary: fc.constant('application/json'), weight: 12 },
    { arbitrary: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1'), weight: 1 },
  );
  const repeat = fc.boolean();
  return fc.record({ pathParams, query, headerParams, auth, body, contentType, repeat }).map((r) => {
    // "." and ".." would be resolved away by the client's URL parser before anything is sent.
    const segment = (name: string) => encodeURIComponent(String((r.pathParams as Record<string, unknown>)[name] ?? 'x')).replace(/^\.{1,2}$/, 'x') || 'x';
    const path = op.template.replace(/\{([^}]+)\}/g, (_, name: string) => segment(name));
    // A repeated key (an array to the server) now and then.
    const pairs = Object.entries(r.query as Record<string, string>).flatMap(([name, v]) =>
      r.repeat && v.length % 3 === 0
        ? [
            [name, v],
            [name, `${v}x`],
          ]
        : [[name, v]],
    );
    const search = new URLSearchParams(pairs).toString();
    const headers: Record<string, string> = { ...(r.headerParams as Record<string, string>), 'user-agent': 'agentpost-fuzz/1.0' };
    if (r.auth) headers.authorization = r.auth;
    if (op.template.endsWith('mcp')) Object.assign(headers, { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' });
    if (r.body !== undefined) headers['content-type'] = r.contentType;
    return { method: op.method, path: search ? `${path}?${search}` : path, headers, body: r.body };
  });
};

const statuses: Record<number, number> = {};

/** Sends one request; returns a failure description, or null when both properties hold. */
const check = async (app: TestApp, request: FuzzRequest): Promise<string | null> => {
  let response: Response;
  try {
    response = await fetch(app.baseUrl + request.path, { method: request.method, headers: request.headers, body: request.body });
  } catch (error) {
    return `no answer (${(error as Error).message}, ${String((error as { cause?: unknown }).cause)}): ${request.method} ${request.path} ${JSON.stringify(request.headers)} ${request.body?.slice(0, 300) ?? ''}`;
  }
  statuses[response.status] = (statuses[response.status] ?? 0) + 1;
  // The event stream's 200 never ends: its first bytes are checked, then it is closed.
  if (response.status === 200 && response.headers.get('content-type')?.startsWith('text/event-stream')) {
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    await reader.cancel().catch(() => {});
    return /^retry: \d+\n\n/.test(first) ? null : `not an event stream: ${request.method} ${request.path} -> ${first.slice(0, 100)}`;
  }
  const text = await response.text();
  const where = `${request.method} ${request.path} ${request.body?.slice(0, 300) ?? ''} -> ${response.status} ${text.slice(0, 300)}`;
  if (response.status >= 500 && response.status !== 503) return `5xx: ${where}`;
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    return `not JSON: ${where}`;
  }
  try {
    assertMatchesOpenApi(request.method, request.path, response.status, body);
  } catch (error) {
    return `${(error as Error).message.split('\n')[0]}: ${where}`;
  }
  return null;
};

t.test(`${RUNS} fuzzed requests over every operation: no 5xx, every answer as documented (seed ${SEED})`, async (t) => {
  const app = await startApp(t, {}, { dns: noDns(), addressResolver: noDns() });
  const owner = await funded(app, 50);
  const other = await funded(app, 5);
  const reader = await issueAccessKey(app, owner.apiKey, { name: 'reader', kind: 'mail', permissions: ['mail:read'] });
  const sender = await issueAccessKey(app, owner.apiKey, {
    name: 'sender',
    kind: 'mail',
    permissions: ['mail:send'],
    dailyRecipientLimit: 20,
    totalRecipientLimit: 40,
  });
  const sent = await app.api('POST', '/api/v1/agent/send', {
    key: owner.apiKey,
    body: { to: [owner.email, other.email, 'far@example.com'], subject: 'fixture', text: 'hello' },
  });
  const keys = () => [owner.apiKey, other.apiKey, reader.apiKey, sender.apiKey];
  const known = () => [
    owner.email,
    other.email,
    'far@example.com',
    sent.body.id,
    reader.id,
    sender.id,
    '1',
    '2',
    'INBOX',
    'Sent',
    'tools/call',
    'tools/list',
    'initialize',
    'send_email',
    'check_inbox',
    'get_email',
    'register_agent',
    'check_balance',
  ];
  const perOperation = new Map<string, number>();
  const failures: string[] = [];
  const cases = fc.oneof(...operations.map((op) => requestArbitrary(op, keys, known).map((request) => ({ op, request }))));
  await fc
    .assert(
      fc.asyncProperty(cases, async ({ op, request }) => {
        perOperation.set(`${op.method} ${op.template}`, (perOperation.get(`${op.method} ${op.template}`) ?? 0) + 1);
        const failure = await check(app, request);
        if (failure) failures.push(failure);
        return failure === null;
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    )
    .catch((error: Error) => {
      t.fail(`counterexample (FUZZ_SEED=${SEED}): ${failures.at(-1) ?? error.message.slice(0, 2_000)}`);
    });
  t.equal(failures.length, 0, 'no failure');
  t.equal(perOperation.size, operations.length, 'every operation was exercised');
  report(
    t,
    `rest fuzz (seed ${SEED}): ${RUNS} requests over ${operations.length} operations, ${Math.min(...perOperation.values())} to ${Math.max(...perOperation.values())} each; statuses ${JSON.stringify(statuses)}`,
  );
});
