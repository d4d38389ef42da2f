// SIGTERM closes the store's files cleanly: no -wal or -shm beside the database or the search
// index once the process has stopped. The index's reader is a read-only connection; closing
// last, it could not checkpoint, and the index's WAL and shared-memory files stayed.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { smtpSend } from './helpers/smtp.js';
import { restCall, startServerProcess } from './helpers/process.js';

// A process (bin/agentpost, which builds dist/app when a source is newer): generous for a loaded machine.
t.setTimeout(600_000);

const agentpost = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'bin', 'agentpost');

const env = (): NodeJS.ProcessEnv => Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AGENTPOST_')));

t.test('after SIGTERM no -wal or -shm is left beside the database or the search index', async (t) => {
  const dataDir = t.testdir({});
  const server = await startServerProcess(t, agentpost, ['serve', '--data-dir', dataDir, '--http-port', '0', '--smtp-port', '0'], { cwd: dataDir, env: env() });
  const agent = (await restCall(server.baseUrl, 'POST', '/api/v1/agent/register', { body: { agentId: 'closer' } })).body;
  await smtpSend(server.ports.smtp, { from: 'someone@example.com', to: agent.email, subject: 'indexed words', text: 'a body to index' });
  // A search waits for the index: the search file has been written before the stop.
  let found = 0;
  for (let tries = 0; found === 0 && tries < 100; tries += 1) {
    found = (await restCall(server.baseUrl, 'GET', '/api/v1/agent/inbox?search=indexed', { key: agent.apiKey })).body.totalMessages;
    if (found === 0) await new Promise((done) => setTimeout(done, 50));
  }
  t.equal(found, 1, 'the message is in the index');
  t.ok(existsSync(join(dataDir, 'agentpost.search.db-wal')), 'the index has a WAL while running');

  const stopped = await server.stop('SIGTERM');
  t.equal(stopped.code, 0, 'stopped cleanly');
  for (const file of ['agentpost.db', 'agentpost.search.db']) {
    t.ok(existsSync(join(dataDir, file)), `${file} is kept`);
    for (const suffix of ['-wal', '-shm']) t.notOk(existsSync(join(dataDir, `${file}${suffix}`)), `no ${file}${suffix}`);
  }
});
