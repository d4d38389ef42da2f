// A client that resets its SMTP connection inside a transaction must end only that
// connection: smtp-server re-emits the socket error on the server object, and an unhandled
// 'error' event would stop the whole process (main.ts listens for it on both servers).
import { connect } from 'node:net';
import t from 'tap';
import { startApp } from './helpers/app.js';
import { smtpSend } from './helpers/smtp.js';

/**
 * EHLO, AUTH PLAIN when credentials are given (submission refuses MAIL FROM without it), MAIL
 * FROM, then a TCP reset while the transaction is open. Any other reply rejects at once: a
 * dialog that stalled (a 530 to MAIL FROM, say) would otherwise sit until the server's idle
 * timeout closed it, a minute later, and the reset this test is about would never be sent.
 */
const resetInsideTransaction = (port: number, auth?: { user: string; pass: string }): Promise<void> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let step = 'greeting';
    let reset = false;
    const mailFrom = () => {
      step = 'mail';
      socket.write('MAIL FROM:<sender@example.com>\r\n');
    };
    socket.on('error', reject);
    socket.on('close', () => (reset ? resolve() : reject(new Error(`connection closed before the reset, at ${step}`))));
    socket.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      if (step === 'greeting' && text.startsWith('220')) {
        step = 'ehlo';
        socket.write('EHLO client.example\r\n');
      } else if (step === 'ehlo' && /^250 /m.test(text)) {
        if (!auth) return mailFrom();
        step = 'auth';
        socket.write(`AUTH PLAIN ${Buffer.from(`\0${auth.user}\0${auth.pass}`).toString('base64')}\r\n`);
      } else if (step === 'auth' && text.startsWith('235')) {
        mailFrom();
      } else if (step === 'mail' && text.startsWith('250')) {
        reset = true;
        socket.resetAndDestroy();
      } else if (step !== 'ehlo') {
        socket.destroy();
        reject(new Error(`unexpected reply at ${step}: ${text.trim()}`));
      }
    });
  });

t.test('a connection reset inside a transaction leaves the MX and submission serving', async (t) => {
  const { app, api, register, smtpPort } = await startApp(t);
  const { email, apiKey } = await register();
  await resetInsideTransaction(smtpPort);
  await resetInsideTransaction(app.ports.submission, { user: email, pass: apiKey });
  // Let the server see the resets before checking that it still answers.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const sent = await smtpSend(smtpPort, { from: 'sender@example.com', to: email, subject: 'after the reset', text: 'still here' });
  t.match(sent.response, /^250/);
  const inbox = await api('GET', '/api/v1/agent/inbox', { key: apiKey });
  t.same(
    inbox.body.emails.map((item: any) => item.subject),
    ['after the reset'],
  );
  t.same((await api('GET', '/healthz')).body, { status: 'ok' });
});
