import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';

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

/** Sends exact bytes, as a fixture file holds them. */
export const smtpSendRaw = (port: number, from: string, to: string[], raw: Buffer | string) =>
  smtpSend(port, { envelope: { from, to }, raw });
