import type { Test } from 'tap';
import { ManualClock } from '../../src/core/clock.js';
import type { ConfigLayer } from '../../src/config/types.js';
import type { AddressResolver } from '../../src/core/address-resolver.js';
import { startApp, type TestApp } from './app.js';
import { smtpSend } from './smtp.js';
import { startReceiver, type Receiver } from './webhook-receiver.js';

export interface WebhookFixture extends TestApp {
  clock: ManualClock;
  receiver: Receiver;
  agent: { email: string; apiKey: string; userId: string };
  /** The created endpoint's id. */
  webhookId: string;
  /** Runs the dispatcher at the ManualClock's time and waits for its attempts. */
  runOnce(): Promise<void>;
  mail(subject: string): Promise<void>;
  /** Mails `subject` while the receiver answers 500, and settles that first failed attempt. */
  mailFailingFirstAttempt(subject: string): Promise<void>;
}

/**
 * An app with webhooks.allowInsecure (the receiver is http on loopback), a ManualClock, an
 * attempt timeout (roomy by default: the suite runs on a loaded machine), a registered agent and a receiver; `verified` also creates and
 * verifies the endpoint.
 */
export const webhookFixture = async (
  t: Test,
  options: {
    events?: string[];
    verified?: boolean;
    resolver?: AddressResolver;
    timeoutMs?: number;
    startAt?: Date;
    config?: ConfigLayer;
  } = {},
): Promise<WebhookFixture> => {
  const clock = new ManualClock(options.startAt ?? '2026-03-01T12:00:00Z');
  const app = await startApp(
    t,
    { ...options.config, webhooks: { allowInsecure: true, timeoutMs: options.timeoutMs ?? 5000 } },
    { clock, addressResolver: options.resolver },
  );
  const receiver = await startReceiver(t);
  const agent = await app.register();
  const fixture: WebhookFixture = {
    ...app,
    clock,
    receiver,
    agent,
    webhookId: '',
    // Every attempt due at the clock's time, over as many runs as the concurrency needs, each awaited.
    runOnce: async () => {
      const webhooks = app.app.queues.webhooks;
      for (let started = 1; started > 0; ) {
        started = (await webhooks.runOnce(clock.now())).started;
        await webhooks.settled();
      }
    },
    mail: async (subject) => {
      await smtpSend(app.smtpPort, { from: 'sender@example.com', to: agent.email, subject, text: `body of ${subject}` });
    },
    mailFailingFirstAttempt: async (subject) => {
      receiver.reply = () => ({ status: 500 });
      await fixture.mail(subject);
      await receiver.waitFor('message.received');
      await fixture.runOnce();
    },
  };
  if (options.verified !== false) {
    const created = await app.api('POST', '/api/v1/agent/webhooks', {
      key: agent.apiKey,
      body: { url: receiver.url, ...(options.events && { events: options.events }) },
    });
    if (created.status !== 201) throw new Error(`create failed: ${created.status} ${JSON.stringify(created.body)}`);
    receiver.secret = created.body.signingSecret;
    fixture.webhookId = created.body.id;
    const verified = await app.api('POST', `/api/v1/agent/webhooks/${created.body.id}/verify`, { key: agent.apiKey });
    if (!verified.body?.verified) throw new Error(`verify failed: ${JSON.stringify(verified.body)}`);
  }
  return fixture;
};

/** A resolver that answers from a table and fails for anything else, like NXDOMAIN. */
export const tableResolver = (table: Record<string, string[]>): AddressResolver => ({
  async resolveAddresses(hostname) {
    const answer = table[hostname.toLowerCase()];
    if (!answer) throw Object.assign(new Error(`queryA ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return answer;
  },
});
