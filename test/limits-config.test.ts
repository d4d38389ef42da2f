import t from 'tap';
import { defaultConfig } from '../src/config/defaults.js';
import { ConfigError, loadConfig } from '../src/config/load.js';
import { funded } from './helpers/agents.js';
import { startApp } from './helpers/app.js';
import { issueAccessKey } from './helpers/keys.js';
import { mcpClient } from './helpers/mcp.js';
import { smtpSend, submissionTransport } from './helpers/smtp.js';

t.test("the defaults are the contract's Limits part, number for number", async (t) => {
  t.match(defaultConfig().limits, {
    registrationsPerIpPerHour: 5,
    sendingStates: { probation: { recipientsPerDay: 10, recipientsPerMinute: 3 }, standard: { recipientsPerDay: 100 } },
    sendRequestsPerMinute: 100,
    recipientsPerMessage: 50,
    recipientsPerAddressList: 50,
    subjectMaxChars: 998,
    sendTextMaxBytes: 1024 * 1024,
    attachmentsPerMessage: 20,
    sendAttachmentsMaxBytes: 8 * 1024 * 1024,
    attachmentFilenameMaxChars: 255,
    idempotencyKeyMaxChars: 128,
    readMaxBytes: 10 * 1024 * 1024,
    inboxPageMax: 100,
    inboxPageDefault: 50,
    searchMaxChars: 200,
    keyRotationMutationsPer15Minutes: 12,
    keyReplacementMinutes: 30,
    accessKeysPerAccount: 100,
    webhookRetrySeconds: [0, 5, 300, 1800, 7200, 18000, 36000, 86400],
    webhookReplays: 3,
    webhookHistoryDays: 30,
    webhookDeliveriesPerPage: 50,
    outboundPerPage: 50,
    outboundStateChanges: 200,
    outboundTrackingDays: 90,
    suppressionsListed: 100,
    suppressionReleasesPerHour: 10,
  });
  t.equal(defaultConfig().limits.webhookRetrySeconds.length, 8, '8 attempts');
  t.equal(defaultConfig().limits.webhookRetrySeconds.at(-1), 24 * 3600, 'in 24 hours');
});

t.test('limits that contradict themselves are refused at load', async (t) => {
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ inboxPageDefault: 200 }, 'limits.inboxPageDefault', /at most limits\.inboxPageMax \(100\)/],
    [{ webhookRetrySeconds: [5, 10] }, 'limits.webhookRetrySeconds', /must start with 0/],
    [{ webhookRetrySeconds: [0, 60, 30] }, 'limits.webhookRetrySeconds', /must not decrease/],
    [{ recipientsPerMessage: 0 }, 'limits.recipientsPerMessage', /must be >= 1/],
  ];
  for (const [limits, setting, message] of cases) {
    const error = (() => {
      try {
        loadConfig({ overrides: { limits } });
      } catch (caught) {
        return caught;
      }
      return null;
    })();
    t.ok(error instanceof ConfigError, setting);
    t.match(error, { setting, message }, setting);
  }
});

const LIMITS = {
  recipientsPerAddressList: 2,
  recipientsPerMessage: 3,
  subjectMaxChars: 10,
  idempotencyKeyMaxChars: 4,
  attachmentsPerMessage: 1,
  inboxPageMax: 3,
  inboxPageDefault: 2,
  searchMaxChars: 5,
  accessKeysPerAccount: 1,
  outboundPerPage: 2,
};

t.test('configured limits hold in REST, MCP, the OpenAPI document and submission', async (t) => {
  const app = await startApp(t, { limits: LIMITS });
  const agent = await funded(app, 100);
  const send = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { subject: 's', text: 'x', ...body }, headers });
  t.match((await send({ to: ['a@example.com', 'b@example.com', 'c@example.com'] })).body, { error: 'to has too many items: at most 2' });
  t.match((await send({ to: 'a@example.com, b@example.com, c@example.com' })).body, { error: /to has too many items: 3 addresses, at most 2/ });
  t.match((await send({ to: ['a@example.com', 'b@example.com'], cc: ['c@example.com', 'd@example.com'] })).body, {
    error: /4 distinct recipients .* at most 3/,
  });
  t.match((await send({ to: 'a@example.com', subject: 'eleven char' })).body, { error: 'subject is too long: at most 10 characters' });
  t.match((await send({ to: 'a@example.com' }, { 'idempotency-key': 'abcde' })).body, { error: /1 to 4 characters/ });
  t.match((await send({ to: 'a@example.com', idempotencyKey: 'abcde' })).body, { error: 'idempotencyKey is too long: at most 4 characters' });
  t.match(
    (
      await send({
        to: 'a@example.com',
        attachments: [
          { filename: 'a', content: 'a' },
          { filename: 'b', content: 'b' },
        ],
      })
    ).body,
    { error: 'attachments has too many items: at most 1' },
  );

  const client = await mcpClient(t, app.baseUrl, { key: agent.apiKey });
  const tools = Object.fromEntries((await client.listTools()).tools.map((tool) => [tool.name, tool.inputSchema as any]));
  t.equal(tools.send_email.$defs.addressField.anyOf[1].maxItems, 2, 'MCP lists the configured schema');
  t.equal(tools.check_inbox.properties.limit.maximum, 3);
  t.equal(tools.check_inbox.properties.limit.default, 2);
  const document = (await app.api('GET', '/api/v1/openapi.json')).body;
  t.match(document.paths['/api/v1/agent/inbox'].get.parameters, [
    { name: 'folder' },
    { name: 'limit', schema: { maximum: 3, default: 2 } },
    {},
    { name: 'search', schema: { maxLength: 5 } },
  ]);
  t.equal(document.components.schemas['send-request'].properties.subject.maxLength, 10);

  for (const subject of ['1', '2', '3']) await smtpSend(app.smtpPort, { from: 'ada@example.org', to: agent.email, subject, text: 'x' });
  t.equal((await app.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey })).body.emails.length, 2, 'the configured default page');
  t.equal((await app.api('GET', '/api/v1/agent/inbox?limit=4', { key: agent.apiKey })).body.error, 'limit must be at most 3');
  t.equal((await app.api('GET', '/api/v1/agent/inbox?search=sixsix', { key: agent.apiKey })).body.error, 'search is too long: at most 5 characters');

  await issueAccessKey(app, agent.apiKey, { name: 'one', kind: 'mail', permissions: ['mail:read'] });
  const second = await app.api('POST', '/api/v1/agent/access-keys', { key: agent.apiKey, body: { name: 'two', kind: 'mail', permissions: ['mail:read'] } });
  t.match(second, { status: 409, body: { error: /at most 1 usable access keys/ } });

  for (const to of ['a@example.com', 'b@example.com', 'c@example.com']) t.equal((await send({ to })).status, 200);
  const page = (await app.api('GET', '/api/v1/agent/outbound', { key: agent.apiKey })).body;
  t.equal(page.submissions.length, 2, 'the configured outbound page');
  t.type(page.nextCursor, 'string');

  const transport = submissionTransport(t, app.submissionPort, agent.email, agent.apiKey);
  const info = await transport.sendMail({
    from: agent.email,
    to: ['a@example.com', 'b@example.com', 'c@example.com', 'd@example.com'],
    subject: 's',
    text: 'x',
  });
  t.same(info.rejected, ['d@example.com'], 'submission caps RCPT TO at the configured number');
  t.match((info as any).rejectedErrors?.[0], { responseCode: 452, response: /at most 3 recipients/ });
});
