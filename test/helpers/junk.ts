import type { TestApp } from './app.js';
import { smtpSend } from './smtp.js';

/** Two kinds of mail a junk filter can tell apart after a few judgments. */
export const SPAMMER = 'deals@cheap-pills.example';
export const FRIEND = 'colleague@partner.example';

export const spam = (n: number) => ({
  from: SPAMMER,
  subject: `Cheap pills ${n}: buy now, limited offer`,
  text: `Discount viagra and cheap pills! Click now to buy the limited offer ${n}, free shipping, no prescription, act fast.`,
});

export const ham = (n: number) => ({
  from: FRIEND,
  subject: `Meeting notes ${n}`,
  text: `Hello, the quarterly report draft ${n} is ready for review; let us go through the open questions at the planning meeting on Monday.`,
});

/** Sends a message to the agent through the MX, as a remote server would. */
export const mailTo = (app: TestApp, to: string, message: { from: string; subject: string; text: string }) =>
  smtpSend(app.smtpPort, { from: message.from, to, subject: message.subject, text: message.text });

/** The judgments and judged messages a mailbox's model counts (read from the store). */
export const modelOf = async (app: TestApp, email: string): Promise<{ ham: number; junk: number }> => {
  const mailbox = await app.app.store.accounts.mailboxByAddress(email.toLowerCase());
  const model = mailbox ? await app.app.store.junk.modelOfMailbox(mailbox.id) : null;
  return { ham: model?.ham ?? 0, junk: model?.junk ?? 0 };
};

/**
 * Judges through REST (the newest message of `folder` with this subject) and returns the answer;
 * the model counts it when this resolves.
 */
export const judge = async (app: TestApp, key: string, subject: string, junk: boolean, folder = 'INBOX') => {
  const list = await app.api('GET', `/api/v1/agent/inbox?folder=${folder}&limit=100`, { key });
  const message = list.body.emails.find((email: { subject: string }) => email.subject === subject);
  if (!message) throw new Error(`no "${subject}" in ${folder}`);
  return app.api('POST', `/api/v1/agent/email/${message.id}/junk`, { key, body: { junk, folder } });
};

/** Mails and judges `count` junk and `count` not-junk messages: a mailbox model that counts (with junk.minJudgments at most `count`). */
export const trainMailbox = async (app: TestApp, agent: { email: string; apiKey: string }, count: number): Promise<void> => {
  for (let n = 1; n <= count; n++) {
    await mailTo(app, agent.email, spam(n));
    await mailTo(app, agent.email, ham(n));
  }
  for (let n = 1; n <= count; n++) {
    const junk = await judge(app, agent.apiKey, spam(n).subject, true);
    const notJunk = await judge(app, agent.apiKey, ham(n).subject, false);
    if (junk.status !== 200 || notJunk.status !== 200) throw new Error(`judging failed: ${junk.status} ${notJunk.status}`);
  }
};
