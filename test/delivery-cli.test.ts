import t from 'tap';
import { runCli } from '../bin/cli.js';
import { startApp } from './helpers/app.js';
import { startSink } from './helpers/sink.js';

/** Runs the CLI against the app's data folder and captures what it prints. */
const cliOf =
  (dataDir: string) =>
  async (...args: string[]) => {
    const out: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string) => out.push(String(chunk)) > 0) as typeof process.stdout.write;
    try {
      const code = await runCli([...args, '--data-dir', dataDir, '--log-level', 'silent']);
      return { code, out: out.join('') };
    } finally {
      process.stdout.write = write;
    }
  };

t.test('dkim generate prints the TXT record; show repeats it; a bad domain is a usage error', async (t) => {
  const app = await startApp(t);
  const cli = cliOf(app.app.config.dataDir);
  const generated = await cli('dkim', 'generate', 'Mail.Example.com', 's2026');
  t.equal(generated.code, 0);
  t.match(generated.out, /^s2026\._domainkey\.mail\.example\.com IN TXT "v=DKIM1; k=rsa; p=MIIBIjAN[A-Za-z0-9+/]+" "[A-Za-z0-9+/=]+"\n/);
  const shown = await cli('dkim', 'show', 'mail.example.com');
  t.equal(shown.out.trim(), generated.out.split('\n')[0]);
  t.equal((await app.app.services.dkim.keyFor('mail.example.com'))?.selector, 's2026');
  t.equal((await cli('dkim', 'generate', 'not a domain')).code, 2);
  t.equal((await cli('dkim', 'show', 'none.example.com')).code, 1);
  t.equal((await cli('dkim')).code, 2);
});

t.test('outbound resolve and suppressions add through the CLI', async (t) => {
  const sink = await startSink(t);
  const app = await startApp(t, { outbound: { relay: `smtp://127.0.0.1:${sink.port}`, timeoutMs: 5000 } });
  const cli = cliOf(app.app.config.dataDir);
  const agent = await app.register();
  t.equal((await cli('credits', 'add', agent.email, '3')).code, 0);
  await app.app.services.sending.setState(agent.email, 'standard');
  const sent = await app.api('POST', '/api/v1/agent/send', {
    key: agent.apiKey,
    body: { to: ['drop@remote.test', 'drop2@remote.test'], subject: 's', text: 't' },
  });
  await app.app.queues.delivery.runOnce();
  await app.app.queues.delivery.idle();
  const detail = async () => (await app.api('GET', `/api/v1/agent/outbound/${sent.body.id}`, { key: agent.apiKey })).body;
  t.same(
    (await detail()).recipients.map((r: any) => r.status),
    ['unresolved', 'unresolved'],
  );
  t.equal((await app.api('GET', '/api/v1/agent/balance', { key: agent.apiKey })).body.credits, 1);
  const resolved = await cli('outbound', 'resolve', sent.body.id, 'delivered');
  t.equal(resolved.code, 0);
  t.match(resolved.out, /2 unresolved recipient\(s\) settled as delivered, 0 credit\(s\) refunded/);
  t.same(
    (await detail()).recipients.map((r: any) => r.status),
    ['delivered', 'delivered'],
  );
  t.equal((await app.api('GET', '/api/v1/agent/balance', { key: agent.apiKey })).body.credits, 1, 'delivered keeps the credits');
  t.equal((await cli('outbound', 'resolve', sent.body.id, 'maybe')).code, 2);
  t.equal((await cli('outbound', 'resolve', '00000000-0000-4000-8000-000000000000', 'failed')).code, 1);

  const added = await cli('suppressions', 'add', agent.email, 'Angry@Remote.test', 'complaint');
  t.equal(added.code, 0);
  t.match(JSON.parse(added.out), { address: 'angry@remote.test', reason: 'complaint', canRelease: false });
  t.equal((await cli('suppressions', 'add', agent.email, 'angry@remote.test', 'complaint')).code, 1, 'already suppressed');
  t.equal((await cli('suppressions', 'add', agent.email, 'x@remote.test', 'spam')).code, 2);
});
