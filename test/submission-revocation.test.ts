import nodemailer from 'nodemailer';
import t from 'tap';
import { creditsOf, funded } from './helpers/agents.js';
import { startApp, type TestApp } from './helpers/app.js';
import { smtpDialog } from './helpers/smtp.js';

/** One pooled connection: every message after the first goes over the session that already authenticated. */
const pooled = (t: any, port: number, user: string, pass: string) => {
  const transport = nodemailer.createTransport({
    pool: true,
    maxConnections: 1,
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
    auth: { user, pass },
  });
  t.teardown(() => transport.close());
  return transport;
};

const refusal = (promise: Promise<unknown>): Promise<any> =>
  promise.then(
    () => {
      throw new Error('expected the submission to be refused');
    },
    (error: unknown) => error,
  );

const rotate = async (app: TestApp, original: string, action: 'prepare' | 'activate' | 'cancel', key = original) => {
  const answer = await app.api('POST', '/api/v1/agent/keys', { key, body: { action } });
  if (answer.status !== 200) throw new Error(`${action}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
};

const plain = (user: string, pass: string) => `AUTH PLAIN ${Buffer.from(`\0${user}\0${pass}`).toString('base64')}`;

t.test('a key rotated away after AUTH no longer sends in the open session; a fresh AUTH with the new key does', async (t) => {
  const app = await startApp(t);
  const agent = await funded(app, 10);
  const message = (subject: string) => ({ from: agent.email, to: 'far@example.com', subject, text: 'x' });
  const transport = pooled(t, app.submissionPort, agent.email, agent.apiKey);
  t.match((await transport.sendMail(message('first'))).response, /^250 /);

  const { apiKey: replacement } = await rotate(app, agent.apiKey, 'prepare');
  t.match((await transport.sendMail(message('while pending'))).response, /^250 /, 'both keys work before activation');
  await rotate(app, agent.apiKey, 'activate', replacement);
  // 530, not the 535 a new connection would get at AUTH: the same session was refused.
  t.match(await refusal(transport.sendMail(message('after rotation'))), { responseCode: 530, response: /5\.7\.0 Authentication required/ });
  t.equal(await creditsOf(app, replacement), 8, 'nothing charged for the refused message');
  const outbound = await app.api('GET', '/api/v1/agent/outbound', { key: replacement });
  t.same(
    outbound.body.submissions.map((s: any) => s.subject),
    ['while pending', 'first'],
  );

  const fresh = pooled(t, app.submissionPort, agent.email, replacement);
  t.match((await fresh.sendMail(message('with the new key'))).response, /^250 /);
  t.equal(await creditsOf(app, replacement), 7);
  const stale = pooled(t, app.submissionPort, agent.email, agent.apiKey);
  t.match(await refusal(stale.sendMail(message('old key, new connection'))), { responseCode: 535 });
});

t.test('a key revoked during DATA is refused before anything is charged; AUTH again in the same connection works', async (t) => {
  const app = await startApp(t);
  const agent = await funded(app, 10);
  const { apiKey: replacement } = await rotate(app, agent.apiKey, 'prepare');
  const content = `From: ${agent.email}\r\nTo: far@example.com\r\nSubject: during data\r\n\r\nbody\r\n.\r\n`;
  const replies = await smtpDialog(app.submissionPort, [
    'EHLO client.test',
    plain(agent.email, replacement),
    `MAIL FROM:<${agent.email}>`,
    'RCPT TO:<far@example.com>',
    'DATA',
    // The original key cancels the replacement this session logged in with.
    () => rotate(app, agent.apiKey, 'cancel'),
    content,
    `MAIL FROM:<${agent.email}>`,
    plain(agent.email, agent.apiKey),
    `MAIL FROM:<${agent.email}>`,
    'RCPT TO:<far@example.com>',
    'DATA',
    content,
  ]);
  t.match(replies[2], /^235 /);
  t.match(replies[5], /^354 /);
  t.match(replies[6], /^530 5\.7\.0 /, 'refused at the end of DATA');
  t.match(replies[7], /^530 /, 'the session is no longer authenticated');
  t.match(replies[8], /^235 /, 'a new AUTH is allowed');
  t.match(replies[12], /^250 2\.0\.0 Ok: accepted as /);
  t.equal(await creditsOf(app, agent.apiKey), 9, 'only the second message is charged');
});
