// An event stream lives no longer than its key: a revocation, or a rotation taking effect,
// ends it with an `error` event within a second, as IMAP and SMTP submission end their
// sessions. Read with plain fetch, to see the exact frames and the end of the body.
import t, { type Test } from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { startApp, type TestApp } from './helpers/app.js';
import { issueAccessKey } from './helpers/keys.js';
import { deliverDirect, simpleMessage } from './helpers/mail.js';

/** Whether the issue's bound holds: the stream ends no later than this after the key stops working. */
const CLOSED_WITHIN_MS = 1000;

interface RawStream {
  /** Everything received so far. */
  text(): string;
  /** Resolves with the time the body ended (the server closed the stream). */
  ended: Promise<number>;
  /** Resolves once `pattern` has arrived. */
  waitFor(pattern: RegExp): Promise<void>;
}

const openRaw = async (t: Test, app: TestApp, key: string): Promise<RawStream> => {
  const abort = new AbortController();
  t.teardown(() => abort.abort());
  const response = await fetch(`${app.baseUrl}/api/v1/agent/events`, { headers: { authorization: `Bearer ${key}` }, signal: abort.signal });
  if (response.status !== 200 || !response.body) throw new Error(`stream not opened: ${response.status}`);
  let received = '';
  const waiters: (() => void)[] = [];
  const decoder = new TextDecoder();
  const ended = (async () => {
    try {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        received += decoder.decode(chunk, { stream: true });
        for (const waiter of waiters.splice(0)) waiter();
      }
    } catch {
      // Aborted at teardown.
    }
    return performance.now();
  })();
  const stream: RawStream = {
    text: () => received,
    ended,
    waitFor: (pattern) =>
      new Promise((resolve) => {
        const check = () => (pattern.test(received) ? resolve() : waiters.push(check));
        check();
      }),
  };
  await stream.waitFor(/^retry: \d+\n\n/);
  return stream;
};

/** When the stream ended, or 'open' if it has not a while (far past the bound) after now. */
const whenEnded = (stream: RawStream): Promise<number | 'open'> =>
  Promise.race([stream.ended, new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), 5 * CLOSED_WITHIN_MS).unref())]);

/** A message arrives and `stream` sends its event: the stream is still live. */
const stillStreams = async (app: TestApp, address: string, stream: RawStream): Promise<void> => {
  await deliverDirect(app.app, [address], simpleMessage({ to: address, subject: 'still there' }));
  await stream.waitFor(/event: message\.received\n/);
};

const errorEvent = /event: error\ndata: (\{.*\})\n\n$/;

/** `stoppedAt`: when the request that stopped the key was sent. */
const checkClosed = async (t: Test, stream: RawStream, stoppedAt: number): Promise<void> => {
  const ended = await whenEnded(stream);
  t.not(ended, 'open', 'the server ended the stream');
  if (ended !== 'open') t.ok(ended - stoppedAt <= CLOSED_WITHIN_MS, `ended ${Math.round(ended - stoppedAt)} ms after the request that stopped the key`);
  const frame = errorEvent.exec(stream.text());
  t.ok(frame, 'an error event is the last thing sent');
  if (frame) t.match(JSON.parse(frame[1]), { code: 'unauthorized', error: /revoked, rotated away or expired/ });
};

t.test('revoking a mail:read key ends its stream with an error event; the full key stream goes on', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const reader = await issueAccessKey(app, agent.apiKey, { name: 'reader', kind: 'mail', permissions: ['mail:read'] });
  const limited = await openRaw(t, app, reader.apiKey);
  const full = await openRaw(t, app, agent.apiKey);

  const stoppedAt = performance.now();
  const revoked = await app.api('DELETE', `/api/v1/agent/access-keys/${reader.id}`, { key: agent.apiKey });
  t.equal(revoked.status, 200);
  await checkClosed(t, limited, stoppedAt);
  await stillStreams(app, agent.email, full);
  t.notMatch(full.text(), /event: error/, "the full key's stream was not ended");
  t.equal((await app.api('GET', '/api/v1/agent/events', { key: reader.apiKey })).status, 401, 'a new stream with the key is refused');
});

t.test("a rotation taking effect ends the old key's streams; the replacement's stream goes on", async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const prepared = await app.api('POST', '/api/v1/agent/keys', { key: agent.apiKey, body: { action: 'prepare' } });
  const replacement: string = prepared.body.apiKey;
  const old = await openRaw(t, app, agent.apiKey);
  const renewed = await openRaw(t, app, replacement);

  const stoppedAt = performance.now();
  const activated = await app.api('POST', '/api/v1/agent/keys', { key: replacement, body: { action: 'activate' } });
  t.equal(activated.status, 200);
  await checkClosed(t, old, stoppedAt);
  await stillStreams(app, agent.email, renewed);
  t.notMatch(renewed.text(), /event: error/, "the replacement's stream was not ended");
});

t.test('cancelling a rotation ends the streams of the replacement', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const prepared = await app.api('POST', '/api/v1/agent/keys', { key: agent.apiKey, body: { action: 'prepare' } });
  const pending = await openRaw(t, app, prepared.body.apiKey);
  const stoppedAt = performance.now();
  const cancelled = await app.api('POST', '/api/v1/agent/keys', { key: agent.apiKey, body: { action: 'cancel' } });
  t.equal(cancelled.status, 200);
  await checkClosed(t, pending, stoppedAt);
});

t.test('a key that expires by time ends its stream at the next heartbeat', async (t) => {
  const clock = new ManualClock('2026-03-01T12:00:00Z');
  const app = await startApp(t, { events: { heartbeatSeconds: 1 } }, { clock });
  const agent = await app.register();
  const reader = await issueAccessKey(app, agent.apiKey, { name: 'reader', kind: 'mail', permissions: ['mail:read'], expiresAt: '2026-03-01T13:00:00Z' });
  const stream = await openRaw(t, app, reader.apiKey);
  await stream.waitFor(/: heartbeat\n\n/);
  t.notMatch(stream.text(), /event: error/, 'a heartbeat while the key works');
  clock.advance(60 * 60 * 1000);
  t.not(await whenEnded(stream), 'open', 'ended once the key expired');
  t.match(stream.text(), errorEvent);
});
