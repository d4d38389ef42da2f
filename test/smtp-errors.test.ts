// A client that resets its SMTP connection inside a transaction must end only that
// connection: smtp-server re-emits the socket error on the server object, and an unhandled
// 'error' event would stop the whole process (main.ts listens for it on both servers).
import { connect } from 'node:net';
import t from 'tap';
import { startApp } from './helpers/app.js';
import { smtpSend } from './helpers/smtp.js';

/** EHLO, MAIL FROM, then a TCP reset while the transaction is open. */
const resetInsideTransaction = (port: number): Promise<void> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let step = 0;
    socket.on('error', reject);
    socket.on('close', () => resolve());
    socket.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      if (step === 0 && text.startsWith('220')) {
        step = 1;
        socket.write('EHLO client.example\r\n');
      } else if (step === 1 && /^250 /m.test(text)) {
        step = 2;
        socket.write('MAIL FROM:<sender@example.com>\r\n');
      } else if (step === 2 && text.startsWith('250')) {
        step = 3;
        socket.resetAndDestroy();
      }
    });
  });

t.test('a connection reset inside a transaction leaves the MX and submission serving', async (t) => {
  const { app, api, register, smtpPort } = await startApp(t);
  const { email, apiKey } = await register();
  await resetInsideTransaction(smtpPort);
  await resetInsideTransaction(app.ports.submission);
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
