// `agentpost backup` of a running server with mail and an enrolled second factor, then
// `agentpost restore` into a fresh folder, a server started on it, and the mail read back over
// REST with the same key; the second factor still verifies, so the secret key came along.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { totpFromUrl } from './helpers/keys.js';
import { restCall, runCommand, startServerProcess } from './helpers/process.js';
import { smtpSend } from './helpers/smtp.js';

// Several CLI processes and two servers: generous for a loaded 2-core machine.
t.setTimeout(900_000);

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const agentpost = join(root, 'bin', 'agentpost');
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AGENTPOST_')));
const cli = (...args: string[]) => runCommand(agentpost, args, { env });
const serve = (t: Test, dataDir: string) =>
  startServerProcess(t, agentpost, ['serve', '--data-dir', dataDir, '--http-port', '0', '--smtp-port', '0', '--parse-threads', '1'], { env });

t.test('back up a running server, restore into a fresh folder, read the mail back', async (t) => {
  const dir = t.testdir({});
  const original = join(dir, 'data');
  const archive = join(dir, 'backups', 'agentpost.tar');
  const server = await serve(t, original);

  const registered = await restCall(server.baseUrl, 'POST', '/api/v1/agent/register', { body: { agentId: 'backup.test' } });
  const { email, apiKey } = registered.body as { email: string; apiKey: string };
  await smtpSend(server.ports.smtp, { from: 'sender@example.com', to: email, subject: 'kept by the backup', text: 'first body' });
  await smtpSend(server.ports.smtp, {
    from: 'sender@example.com',
    to: email,
    subject: 'also kept',
    text: 'second body',
    attachments: [{ filename: 'a.bin', content: Buffer.from([1, 2, 3]) }],
  });
  const enrolled = await restCall(server.baseUrl, 'POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'enroll' } });
  const totp = totpFromUrl(enrolled.body.otpauthUrl);
  const confirmed = await restCall(server.baseUrl, 'POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'confirm', factorCode: totp.generate() } });
  t.same(confirmed.body, { action: 'confirm', status: 'enabled' });

  const backup = await cli('backup', archive, '--data-dir', original);
  t.equal(backup.code, 0, backup.stderr);
  t.equal(backup.stdout, `backup written to ${archive}\n`);
  t.equal(statSync(archive).mode & 0o777, 0o600, 'the archive holds the secret key: owner only');

  // Mail after the backup is not in it: the copy is one consistent moment.
  await smtpSend(server.ports.smtp, { from: 'sender@example.com', to: email, subject: 'after the backup', text: 'later' });
  t.equal((await server.stop('SIGTERM')).code, 0);

  const restoredDir = join(dir, 'restored');
  const restore = await cli('restore', archive, '--data-dir', restoredDir);
  t.equal(restore.code, 0, restore.stderr);
  t.match(restore.stdout, /^restored the backup of \S+ \(agentpost [\d.]+\) into /);
  t.equal(readFileSync(join(restoredDir, 'secret.key'), 'utf8'), readFileSync(join(original, 'secret.key'), 'utf8'));
  t.equal(statSync(join(restoredDir, 'secret.key')).mode & 0o777, 0o600);
  t.notOk(existsSync(join(restoredDir, 'agentpost.search.db')), 'the search index is not in the backup: it is rebuilt');

  const restored = await serve(t, restoredDir);
  const inbox = await restCall(restored.baseUrl, 'GET', '/api/v1/agent/inbox', { key: apiKey });
  t.equal(inbox.status, 200, 'the same key works on the restored data');
  t.same(
    inbox.body.emails.map((item: { subject: string }) => item.subject),
    ['also kept', 'kept by the backup'],
  );
  const read = await restCall(restored.baseUrl, 'GET', `/api/v1/agent/email/${inbox.body.emails[0].id}`, { key: apiKey });
  t.match(read.body, { subject: 'also kept', text: /second body/ });
  t.equal(read.body.attachments[0].content, Buffer.from([1, 2, 3]).toString('base64'));
  const search = await restCall(restored.baseUrl, 'GET', '/api/v1/agent/inbox?search=kept', { key: apiKey });
  t.equal(search.body.emails.length, 2, 'the search index was rebuilt from the restored mail');

  // The TOTP seed is sealed with secret.key: it verifies only if the key came along. The next
  // 30-second step's code, as the confirm's code may not be used twice.
  const disabled = await restCall(restored.baseUrl, 'POST', '/api/v1/agent/2fa', {
    key: apiKey,
    body: { action: 'disable', factorCode: totp.generate({ timestamp: Date.now() + 30_000 }) },
  });
  t.same(disabled.body, { action: 'disable', status: 'off' }, 'the second factor survived the restore');
  t.equal((await restored.stop('SIGTERM')).code, 0);
});

t.test('restore refuses a folder in use and an archive that is not a backup', async (t) => {
  const dir = t.testdir({ used: { 'agentpost.db': 'x' }, 'not-a-backup.tar': 'plain text' });
  const used = await cli('restore', join(dir, 'not-a-backup.tar'), '--data-dir', join(dir, 'used'));
  t.equal(used.code, 1);
  t.match(used.stderr, /is not empty \(agentpost\.db\); restore into a new folder/);
  const bad = await cli('restore', join(dir, 'not-a-backup.tar'), '--data-dir', join(dir, 'fresh'));
  t.equal(bad.code, 1);
  t.notOk(existsSync(join(dir, 'fresh', 'agentpost.db')));
  const missing = await cli('backup', join(dir, 'b.tar'), '--data-dir', join(dir, 'nothing-here'));
  t.equal(missing.code, 1);
  t.match(missing.stderr, /no database at .*nothing-here/);
  const usage = await cli('backup');
  t.equal(usage.code, 2);
});

t.test('with a secrets folder apart: the backup takes secret.key from it, a restore puts it into a new one and never over a key', async (t) => {
  const dir = t.testdir({});
  const [dataDir, secretsDir] = [join(dir, 'data'), join(dir, 'secrets')];
  const server = await startServerProcess(
    t,
    agentpost,
    ['serve', '--data-dir', dataDir, '--secrets-dir', secretsDir, '--http-port', '0', '--smtp-port', '0', '--parse-threads', '1'],
    { env },
  );
  await server.stop();
  const archive = join(dir, 'apart.tar');
  const backup = await cli('backup', archive, '--data-dir', dataDir, '--secrets-dir', secretsDir);
  t.equal(backup.code, 0, backup.stderr);

  const restored = await cli('restore', archive, '--data-dir', join(dir, 'restored'), '--secrets-dir', join(dir, 'restored-secrets'));
  t.equal(restored.code, 0, restored.stderr);
  t.equal(readFileSync(join(dir, 'restored-secrets', 'secret.key'), 'utf8'), readFileSync(join(secretsDir, 'secret.key'), 'utf8'));
  t.equal(statSync(join(dir, 'restored-secrets', 'secret.key')).mode & 0o777, 0o600);
  t.notOk(existsSync(join(dir, 'restored', 'secret.key')), 'not in the data folder');
  t.ok(existsSync(join(dir, 'restored', 'agentpost.db')));

  const shared = await cli('restore', archive, '--data-dir', join(dir, 'again'), '--secrets-dir', secretsDir);
  t.equal(shared.code, 1);
  t.match(shared.stderr, /already holds secret\.key/);
});
