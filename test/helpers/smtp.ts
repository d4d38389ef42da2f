import { connect } from 'node:net';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';

/** Sends through our MX with nodemailer, a real SMTP client. */
export const smtpSend = async (port: number, message: Mail.Options): Promise<{ response: string; accepted: unknown[]; rejected: unknown[] }> => {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, tls: { rejectUnauthorized: false } });
  try {
    const info = await transport.sendMail(message);
    return { response: info.response, accepted: info.accepted, rejected: info.rejected };
  } finally {
    transport.close();
  }
};

/**
 * A nodemailer transport to our submission port, signed in with a mailbox address and its key
 * (AUTH PLAIN over plain text, as tests on loopback allow). Closed when the test ends.
 */
export const submissionTransport = (t: { teardown(fn: () => unknown): void }, port: number, user: string, pass: string) => {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, auth: { user, pass } });
  t.teardown(() => transport.close());
  return transport;
};

/**
 * A message as the DATA payload of smtpDialog: lines that start with "." doubled (RFC 5321
 * section 4.5.2) and the ending "." line added, in one Buffer made before the dialog, so the
 * client does no work per chunk while the server receives it.
 */
export const dataPayload = (raw: Buffer): Buffer => {
  const text = raw.toString('latin1').replace(/(^|\n)\./g, '$1..');
  return Buffer.from(`${text}${text.endsWith('\r\n') ? '' : '\r\n'}.\r\n`, 'latin1');
};

/** Sends exact bytes, as a fixture file holds them. */
export const smtpSendRaw = (port: number, from: string, to: string[], raw: Buffer | string) => smtpSend(port, { envelope: { from, to }, raw });

/**
 * A bare SMTP client over a socket, for dialogs nodemailer will not produce (RFC 5321
 * command by command). Each step is one command line, or a DATA payload that ends in
 * "\r\n.\r\n" (a Buffer is written as it is: see dataPayload). Returns the greeting and then
 * the reply to each step. A step may also be a function, run at that point of the dialog
 * (something to do between two commands); it sends nothing and adds no reply.
 */
export const smtpDialog = async (port: number, steps: (string | Buffer | (() => Promise<unknown>))[]): Promise<string[]> => {
  const socket = connect(port, '127.0.0.1');
  socket.setEncoding('utf8');
  let buffer = '';
  let failure: Error | null = null;
  const ready: string[] = [];
  let wake: (() => void) | null = null;
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    // A reply ends with a line "NNN text", no hyphen after the code (RFC 5321 section 4.2.1).
    let match: RegExpExecArray | null;
    while ((match = /^(?:\d{3}-[^\r\n]*\r\n)*\d{3}(?: [^\r\n]*)?\r\n/.exec(buffer))) {
      buffer = buffer.slice(match[0].length);
      ready.push(match[0].trimEnd());
    }
    wake?.();
  });
  const stop = (error: Error) => {
    failure ??= error;
    wake?.();
  };
  socket.on('error', stop);
  socket.on('close', () => stop(new Error('connection closed')));
  const next = async (): Promise<string> => {
    while (ready.length === 0) {
      if (failure) throw failure;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
    }
    return ready.shift() as string;
  };
  try {
    const out = [await next()];
    for (const step of steps) {
      if (typeof step === 'function') {
        await step();
        continue;
      }
      socket.write(typeof step !== 'string' || step.endsWith('\r\n') ? step : `${step}\r\n`);
      out.push(await next());
    }
    return out;
  } finally {
    socket.destroy();
  }
};
