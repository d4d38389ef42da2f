import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { ConfigError, loadConfig } from '../src/config/load.js';
import type { ConfigLayer } from '../src/config/types.js';
import { createLogger } from '../src/core/logger.js';
import { createApp } from '../src/main.js';
import { startApp } from './helpers/app.js';
import { startServerProcess } from './helpers/process.js';
import { makeCa, makeCertificate, recordingLogger, smtpStartTls, writePair, type Pems } from './helpers/tls.js';

/** Certificates from PEM files: checked at start, reloaded on change or SIGHUP, a bad one refused. */

const MX = 'mx.agents.test';
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The fingerprint of the certificate a new STARTTLS session is shown. */
const served = async (port: number, ca: Pems): Promise<string> => {
  const { socket } = await smtpStartTls(port, { servername: MX, ca: [ca.cert] });
  const fingerprint = socket.getPeerCertificate().fingerprint256;
  socket.end();
  return fingerprint;
};

const fingerprintOf = (pems: Pems): string => new X509Certificate(pems.cert).fingerprint256;

t.test('a pair that cannot serve stops the start and names the setting', async (t) => {
  const dir = t.testdir({ 'garbage.crt': 'not a certificate\n' });
  const ca = await makeCa();
  const good = writePair(dir, 'good', await makeCertificate([MX], { ca }));
  const other = writePair(dir, 'other', await makeCertificate([MX], { ca }));
  const cases: [string, ConfigLayer, string, RegExp][] = [
    ['missing file', { tls: { cert: join(dir, 'none.crt'), key: good.key } }, 'tls.cert', /cannot read .*none\.crt: ENOENT/],
    ['not a certificate', { tls: { cert: join(dir, 'garbage.crt'), key: good.key } }, 'tls.cert', /holds no PEM certificate/],
    ['not a key', { tls: { cert: good.cert, key: good.cert } }, 'tls.cert', /holds no PEM private key/],
    ['the key of another certificate', { tls: { cert: good.cert, key: other.key } }, 'tls.cert', /is not the key of the certificate/],
    [
      'a host pair for another name',
      { tls: { ...good, hosts: { 'mx.other.test': good } } },
      'tls.hosts.mx.other.test',
      /not valid for mx\.other\.test \(it names mx\.agents\.test\)/,
    ],
  ];
  for (const [name, overrides, setting, message] of cases) {
    const config = loadConfig({ overrides: { dataDir: join(dir, 'data'), ...overrides } });
    const error = t.throws(() => createApp(config, { logger: createLogger('silent', () => {}) }), ConfigError, name) as ConfigError;
    t.equal(error.setting, setting, name);
    t.match(error.message, message, name);
  }
  t.throws(() => loadConfig({ overrides: { tls: { cert: good.cert } } }), { setting: 'tls', message: /must have property key/ });
  t.throws(() => loadConfig({ overrides: { http: { tls: true } } }), { setting: 'http.tls', message: /needs a certificate/ });
});

t.test('a renewed pair is served without a restart, and a bad one is refused while the old keeps serving', async (t) => {
  const dir = t.testdir({});
  const ca = await makeCa();
  const first = await makeCertificate([MX], { ca });
  const files = writePair(dir, 'mx', first);
  const log = recordingLogger();
  const { smtpPort } = await startApp(t, { dataDir: join(dir, 'data'), smtp: { hostname: MX }, tls: files }, { logger: log.logger, tlsPollMs: 20 });
  t.equal(await served(smtpPort, ca), fingerprintOf(first));

  const renewed = await makeCertificate([MX], { ca });
  let logged = log.next(/^tls certificate (reloaded|refused)/);
  writePair(dir, 'mx', renewed);
  t.match(await logged, {
    level: 'info',
    message: 'tls certificate reloaded',
    fields: { host: 'default', trigger: 'files', names: [MX], fingerprint: fingerprintOf(renewed) },
  });
  t.equal(await served(smtpPort, ca), fingerprintOf(renewed), 'new sessions get the renewed certificate');

  // A certificate whose key is not on disk yet (or a typo in a deploy script) must not take TLS down.
  const stray = await makeCertificate([MX], { ca });
  logged = log.next(/^tls certificate (reloaded|refused)/);
  writeFileSync(files.cert, stray.cert);
  t.match(await logged, {
    level: 'error',
    message: /refused: the previous one keeps serving/,
    fields: { error: /is not the key of the certificate/, serving: fingerprintOf(renewed) },
  });
  t.equal(await served(smtpPort, ca), fingerprintOf(renewed), 'the previous pair keeps serving');

  const expired = await makeCertificate([MX], { ca, notBefore: new Date('2020-01-01'), notAfter: new Date('2021-01-01') });
  logged = log.next(/^tls certificate (reloaded|refused)/);
  writePair(dir, 'mx', expired);
  t.match(await logged, { level: 'error', fields: { error: /expired on 2021-01-01/ } });
  t.equal(await served(smtpPort, ca), fingerprintOf(renewed));

  const fixed = await makeCertificate([MX], { ca });
  logged = log.next(/^tls certificate (reloaded|refused)/);
  writePair(dir, 'mx', fixed);
  t.match(await logged, { message: 'tls certificate reloaded' });
  t.equal(await served(smtpPort, ca), fingerprintOf(fixed));
});

t.test('SIGHUP reloads the certificates of a running server (certbot deploy hook)', async (t) => {
  t.setTimeout(300_000);
  const dir = t.testdir({});
  const ca = await makeCa();
  const first = await makeCertificate([MX], { ca });
  const files = writePair(dir, 'mx', first);
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AGENTPOST_'))),
    AGENTPOST_DATA_DIR: join(dir, 'data'),
    AGENTPOST_HTTP_PORT: '0',
    AGENTPOST_SMTP_PORT: '0',
    AGENTPOST_TLS_CERT: files.cert,
    AGENTPOST_TLS_KEY: files.key,
  };
  const server = await startServerProcess(t, join(root, 'bin', 'agentpost'), ['serve'], { cwd: dir, env });
  t.equal(await served(server.ports.smtp, ca), fingerprintOf(first));
  const renewed = await makeCertificate([MX], { ca });
  writePair(dir, 'mx', renewed);
  const reloaded = new Promise<void>((done) => {
    const look = () => {
      if (!/"message":"tls certificate reloaded","host":"default","trigger":"signal"/.test(server.output().stderr)) return;
      server.child.stderr?.off('data', look);
      done();
    };
    server.child.stderr?.on('data', look);
  });
  server.child.kill('SIGHUP');
  await reloaded;
  t.equal(await served(server.ports.smtp, ca), fingerprintOf(renewed), 'served without a restart');
  t.equal((await server.stop()).code, 0, 'still running after SIGHUP, and stops cleanly');
});
