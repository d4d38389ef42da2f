// The secret keys of a service of several processes (config secretsDir, docs/design.md "Several
// processes on one store"): read from one folder every node shares, so a secret sealed by one
// node opens on another.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startCluster } from './helpers/cluster.js';
import { totpFromUrl } from './helpers/keys.js';
import { restCall } from './helpers/process.js';

t.setTimeout(120_000);

t.test('two nodes with a shared secrets folder: a second factor enrolled on one is confirmed on the other', async (t) => {
  const dir = t.testdir({});
  const secretsDir = join(dir, 'secrets');
  const cluster = await startCluster(t, { nodes: 2, dataDir: join(dir, 'data'), env: { AGENTPOST_SECRETS_DIR: secretsDir } });
  const [first, second] = cluster.nodes;
  t.ok(existsSync(join(secretsDir, 'secret.key')) && existsSync(join(secretsDir, 'session.key')), 'the keys are made in the secrets folder');
  t.notOk(existsSync(join(cluster.dataDir, 'secret.key')), 'not in the data folder');

  const registered = await restCall(first.baseUrl, 'POST', '/api/v1/agent/register', { body: { agentId: 'cluster.secrets' } });
  const { apiKey } = registered.body as { apiKey: string };
  // The seed is sealed with secret.key by node-1 and opened by node-2.
  const enrolled = await restCall(first.baseUrl, 'POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'enroll' } });
  const totp = totpFromUrl(enrolled.body.otpauthUrl);
  const confirmed = await restCall(second.baseUrl, 'POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'confirm', factorCode: totp.generate() } });
  t.same(confirmed.body, { action: 'confirm', status: 'enabled' });
});
