// loadConfig: defaults < JSON file (--config / AGENTPOST_CONFIG) < environment < flags, and
// every invalid setting is a ConfigError that names the setting and where it came from.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { defaultConfig } from '../src/config/defaults.js';
import { ConfigError, loadConfig, type ConfigInputs } from '../src/config/load.js';
import { SETTING_SOURCES } from '../src/config/settings.js';

/** A BIP-32 extended public key (of m/44'/60'/0'/0 for a test seed). */
const XPUB = 'xpub6Ew7EvtU5EcYekrZWg8pm8BqR1dMb9xqooABkmNCi4KNcEZDwx3r9GmFhgJFge8RAZPLo2UBh2bsCcbZcbqp1bKz5CahKv5ZnMRCH96oQAU';

const writeJson = (dir: string, name: string, value: unknown): string => {
  const file = join(dir, name);
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
};

const configError = (t: Test, inputs: ConfigInputs, setting: string, message: RegExp): void => {
  t.throws(() => loadConfig(inputs), ConfigError, `${setting}: ${JSON.stringify(inputs.env ?? inputs.flags ?? inputs.overrides)}`);
  try {
    loadConfig(inputs);
  } catch (error) {
    t.equal((error as ConfigError).setting, setting);
    t.match((error as ConfigError).message, message);
  }
};

t.test('the embedded defaults', async (t) => {
  const config = loadConfig();
  t.same(config, defaultConfig());
  t.match(config, {
    dataDir: './data',
    mailDomain: 'agents.localhost',
    http: { host: '127.0.0.1', port: 8080, trustProxy: false },
    smtp: { host: '127.0.0.1', port: 2525, maxMessageBytes: 25 * 1024 * 1024 },
    limits: { registrationsPerIpPerHour: 5, readMaxBytes: 10 * 1024 * 1024 },
  });
  t.equal(config.baseUrl, undefined, 'derived from the bound HTTP port when unset');
});

t.test('file < environment < flags, setting by setting', async (t) => {
  const dir = t.testdir({});
  const file = writeJson(dir, 'agentpost.json', { http: { port: 1111 }, mailDomain: 'file.example', limits: { registrationsPerIpPerHour: 9 } });
  const env = { AGENTPOST_CONFIG: file, AGENTPOST_HTTP_PORT: '2222', AGENTPOST_MAIL_DOMAIN: 'env.example' };
  const flags = { 'http-port': '3333' };
  const all = loadConfig({ env, flags });
  t.equal(all.http.port, 3333, 'a flag beats the environment');
  t.equal(all.mailDomain, 'env.example', 'the environment beats the file');
  t.equal(all.limits.registrationsPerIpPerHour, 9, 'the file beats the defaults');
  t.equal(all.http.host, '127.0.0.1', 'a file that sets http.port keeps the default http.host');
  t.equal(all.limits.readMaxBytes, 10 * 1024 * 1024);
  t.equal(loadConfig({ env }).http.port, 2222);
  t.equal(loadConfig({ env: { AGENTPOST_CONFIG: file } }).http.port, 1111);
});

t.test('--config beats AGENTPOST_CONFIG', async (t) => {
  const dir = t.testdir({});
  const fromEnv = writeJson(dir, 'env.json', { dataDir: 'from-env-file' });
  const fromFlag = writeJson(dir, 'flag.json', { dataDir: 'from-flag-file' });
  t.equal(loadConfig({ env: { AGENTPOST_CONFIG: fromEnv }, flags: { config: fromFlag } }).dataDir, 'from-flag-file');
  t.equal(loadConfig({ env: { AGENTPOST_CONFIG: fromEnv } }).dataDir, 'from-env-file');
  t.equal(loadConfig({ env: { AGENTPOST_CONFIG: '' } }).dataDir, './data', 'an empty AGENTPOST_CONFIG reads no file');
});

t.test('every environment variable and flag sets its setting', async (t) => {
  const values: Record<string, [string, unknown]> = {
    dataDir: ['/srv/agentpost', '/srv/agentpost'],
    'http.host': ['0.0.0.0', '0.0.0.0'],
    'http.port': ['8181', 8181],
    'smtp.host': ['::1', '::1'],
    'smtp.port': ['25', 25],
    'smtp.parseThreads': ['2', 2],
    'smtp.parseTimeoutMs': ['750', 750],
    'smtp.maxHeaderBytes': ['65536', 65536],
    'smtp.maxHeaderLines': ['2000', 2000],
    'smtp.maxClients': ['500', 500],
    'smtp.queue.inlineLimit': ['0', 0],
    'smtp.queue.maxMessages': ['500', 500],
    'smtp.greetingDelayMs': ['0', 0],
    'imap.maxClients': ['300', 300],
    'imap.maxAppendBytes': ['1048576', 1048576],
    'imap.maxFolders': ['50', 50],
    'submission.maxClients': ['50', 50],
    'submission.greetingDelayMs': ['250', 250],
    'imap.host': ['::1', '::1'],
    'imap.port': ['143', 143],
    mailDomain: ['mail.example.org', 'mail.example.org'],
    baseUrl: ['https://mail.example.org', 'https://mail.example.org'],
    timeZone: ['Europe/Berlin', 'Europe/Berlin'],
    secretsDir: ['/srv/agentpost/secrets', '/srv/agentpost/secrets'],
    'cluster.nodeId': ['node-b', 'node-b'],
    'cluster.leaseMs': ['5000', 5000],
    'http.trustProxy': ['true', true],
    'log.level': ['debug', 'debug'],
    'submission.host': ['0.0.0.0', '0.0.0.0'],
    'submission.port': ['587', 587],
    'webhooks.allowInsecure': ['true', true],
    'metrics.token': ['0123456789abcdef0123', '0123456789abcdef0123'],
    'dns.servers': ['127.0.0.1:5353, [::1]:53,9.9.9.9', ['127.0.0.1:5353', '[::1]:53', '9.9.9.9']],
    'owners.operators': ['ops@example.com, Admin@Example.com', ['ops@example.com', 'Admin@Example.com']],
    'funding.paused': ['false', false],
    'payments.card.secretKey': ['sk_test_abc', 'sk_test_abc'],
    'payments.card.webhookSecret': ['whsec_abc', 'whsec_abc'],
    'payments.polygon.rpcUrl': ['https://polygon.example/rpc', 'https://polygon.example/rpc'],
    'payments.polygon.xpub': [XPUB, XPUB],
    'outbound.allowLoopbackMx': ['1', true],
    'outbound.caFile': ['/etc/agentpost/ca.pem', '/etc/agentpost/ca.pem'],
    'submission.tlsPort': ['465', 465],
    'imap.tlsPort': ['993', 993],
    'tls.cert': ['/etc/tls/a.crt', '/etc/tls/a.crt'],
    'tls.key': ['/etc/tls/a.key', '/etc/tls/a.key'],
    'http.tls': ['true', true],
    'tls.acme.directoryUrl': ['https://acme-staging-v02.api.letsencrypt.org/directory', 'https://acme-staging-v02.api.letsencrypt.org/directory'],
    'tls.acme.email': ['ops@example.org', 'ops@example.org'],
    'tls.acme.hostnames': ['mx.example.org, mta-sts.example.org', ['mx.example.org', 'mta-sts.example.org']],
    'tls.acme.httpPort': ['8080', 8080],
    'tls.acme.caFile': ['/etc/agentpost/acme-ca.pem', '/etc/agentpost/acme-ca.pem'],
    'owners.signup': ['open', 'open'],
    'domains.spf': ['ip4:203.0.113.5 ip6:2001:db8::5', 'ip4:203.0.113.5 ip6:2001:db8::5'],
    'threads.enabled': ['false', false],
    'threads.subjectWindowDays': ['3', 3],
    'events.maxStreamsPerAccount': ['20', 20],
    'events.maxStreams': ['300', 300],
    'junk.enabled': ['false', false],
    'junk.blocklists': ['zen.spamhaus.org, bl.spamcop.net', ['zen.spamhaus.org', 'bl.spamcop.net']],
    'junk.serverModelTrainers': ['postmaster@mail.example.org', ['postmaster@mail.example.org']],
    'smtp.authenticationChecks': ['false', false],
    'smtp.authenticationThread': ['false', false],
    'smtp.postmaster': ['ops@agents.localhost', 'ops@agents.localhost'],
  };
  // Settings valid only with others: the others come from the environment.
  const pair = { AGENTPOST_TLS_CERT: '/etc/tls/b.crt', AGENTPOST_TLS_KEY: '/etc/tls/b.key' };
  const companions: Record<string, NodeJS.ProcessEnv> = { 'tls.cert': pair, 'tls.key': pair, 'http.tls': pair };
  for (const source of SETTING_SOURCES) {
    if (!values[source.path]) {
      t.fail(`no test value for ${source.path}: add one when adding a setting source`);
      continue;
    }
    const [text, expected] = values[source.path];
    const read = (config: object) => source.path.split('.').reduce((node: any, key) => node[key], config);
    const env = companions[source.path] ?? {};
    t.same(read(loadConfig({ env: { ...env, [source.env]: text } })), expected, source.env);
    t.same(read(loadConfig({ env, flags: { [source.flag]: text } })), expected, `--${source.flag}`);
  }
  t.equal(loadConfig({ flags: { 'trust-proxy': true } }).http.trustProxy, true, 'a bare boolean flag means true');
  t.equal(loadConfig({ env: { AGENTPOST_TRUST_PROXY: '0' } }).http.trustProxy, false);
});

t.test('smtp.postmaster is an address', async (t) => {
  configError(t, { env: { AGENTPOST_SMTP_POSTMASTER: 'ops' } }, 'smtp.postmaster', /smtp\.postmaster \(from AGENTPOST_SMTP_POSTMASTER\)/);
  t.equal(loadConfig().smtp.postmaster, undefined, 'unset by default');
});

t.test('port 0 is allowed: it picks a free port', async (t) => {
  t.equal(loadConfig({ env: { AGENTPOST_HTTP_PORT: '0', AGENTPOST_SMTP_PORT: '0' } }).smtp.port, 0);
});

t.test('invalid ports name the setting and where the value came from', async (t) => {
  const dir = t.testdir({});
  configError(t, { env: { AGENTPOST_HTTP_PORT: 'eighty' } }, 'http.port', /http\.port \(from AGENTPOST_HTTP_PORT\): expected a whole number, got "eighty"/);
  configError(t, { flags: { 'smtp-port': '70000' } }, 'smtp.port', /smtp\.port \(from --smtp-port\): must be <= 65535, got 70000/);
  configError(t, { flags: { 'smtp-port': '-1' } }, 'smtp.port', /from --smtp-port.*whole number/);
  configError(t, { flags: { 'http-port': true } }, 'http.port', /a value is required/);
  const file = writeJson(dir, 'ports.json', { http: { port: 'x' } });
  configError(t, { flags: { config: file } }, 'http.port', new RegExp(`from file ${file}\\): must be integer`));
});

t.test('a config file with an unknown key, bad JSON or the wrong shape', async (t) => {
  const dir = t.testdir({});
  const unknownTop = writeJson(dir, 'a.json', { dataDir: 'x', colour: 'blue' });
  configError(t, { flags: { config: unknownTop } }, 'colour', /invalid setting colour \(from file .*a\.json\): unknown setting/);
  const unknownNested = writeJson(dir, 'b.json', { smtp: { prot: 25 } });
  configError(t, { env: { AGENTPOST_CONFIG: unknownNested } }, 'smtp.prot', /smtp\.prot .*unknown setting/);
  const badJson = writeJson(dir, 'c.json', '{"dataDir": "x",}');
  configError(t, { flags: { config: badJson } }, '--config', /--config: .*c\.json is not valid JSON/);
  configError(t, { env: { AGENTPOST_CONFIG: badJson } }, 'AGENTPOST_CONFIG', /AGENTPOST_CONFIG: .*not valid JSON/);
  const array = writeJson(dir, 'd.json', [1, 2]);
  configError(t, { flags: { config: array } }, '--config', /must hold a JSON object/);
  configError(t, { flags: { config: join(dir, 'missing.json') } }, '--config', /cannot read .*missing\.json/);
  configError(t, { flags: { config: true } }, '--config', /a file name is required/);
  const wrongType = writeJson(dir, 'e.json', { http: 5 });
  configError(t, { flags: { config: wrongType } }, 'http', /must be object/);
});

t.test('time zone, mail domain, base URL, booleans and log level are checked', async (t) => {
  configError(t, { env: { AGENTPOST_TIME_ZONE: 'Mars/Olympus' } }, 'timeZone', /timeZone \(from AGENTPOST_TIME_ZONE\): unknown time zone "Mars\/Olympus"/);
  configError(t, { overrides: { timeZone: 'Nowhere' } }, 'timeZone', /unknown time zone/);
  configError(t, { overrides: { payments: { polygon: { watchSchedule: 'every minute' } } } }, 'payments.polygon.watchSchedule', /not a cron expression/);
  configError(t, { env: { AGENTPOST_POLYGON_XPUB: 'xprv-not-public' } }, 'payments.polygon.xpub', /AGENTPOST_POLYGON_XPUB/);
  configError(
    t,
    { env: { AGENTPOST_DNS_SERVERS: '127.0.0.1:5353,dns.example' } },
    'dns.servers',
    /dns\.servers \(from AGENTPOST_DNS_SERVERS\): "dns\.example" is not an IP address/,
  );
  configError(t, { overrides: { dns: { servers: ['1.2.3.4:70000'] } } }, 'dns.servers', /port outside/);
  for (const domain of ['Agents.Example.com', 'localhost', 'bad_domain.example', 'user@example.com', '-x.example', 'a..example']) {
    configError(t, { env: { AGENTPOST_MAIL_DOMAIN: domain } }, 'mailDomain', /mailDomain \(from AGENTPOST_MAIL_DOMAIN\): expected a lowercase domain name/);
  }
  configError(t, { flags: { 'base-url': 'mail.example.com' } }, 'baseUrl', /baseUrl \(from --base-url\): expected an http:\/\/ or https:\/\/ URL/);
  configError(t, { env: { AGENTPOST_TRUST_PROXY: 'yes' } }, 'http.trustProxy', /expected true or false, got "yes"/);
  configError(t, { flags: { 'log-level': 'loud' } }, 'log.level', /log\.level \(from --log-level\): must be equal to one of the allowed values/);
  configError(t, { env: { AGENTPOST_DATA_DIR: '' } }, 'dataDir', /dataDir \(from AGENTPOST_DATA_DIR\)/);
  configError(t, { overrides: { domains: { recheckSchedule: 'every day' } } }, 'domains.recheckSchedule', /not a cron expression/);
  configError(t, { env: { AGENTPOST_DOMAINS_SPF: 'ip4:1.2.3.4\n-all' } }, 'domains.spf', /domains\.spf \(from AGENTPOST_DOMAINS_SPF\): must match pattern/);
  configError(t, { overrides: { domains: { mtaStsMode: 'none' } } }, 'domains.mtaStsMode', /allowed values/);
});

t.test('values for settings without a variable come only from the file', async (t) => {
  const dir = t.testdir({});
  const file = writeJson(dir, 'f.json', { smtp: { maxMessageBytes: 1024, hostname: 'mx.example.org' }, http: { trustProxy: true } });
  const config = loadConfig({ flags: { config: file } });
  t.match(config, { smtp: { maxMessageBytes: 1024, hostname: 'mx.example.org' }, http: { trustProxy: true } });
  const tooSmall = writeJson(dir, 'g.json', { smtp: { maxMessageBytes: 10 } });
  configError(t, { flags: { config: tooSmall } }, 'smtp.maxMessageBytes', /must be >= 1024, got 10/);
});

t.test('tls.acme: off unless a setting of it is given; then the directory and port have defaults', async (t) => {
  t.equal(loadConfig().tls.acme, undefined, 'no ACME by default');
  t.same(loadConfig({ env: { AGENTPOST_ACME_EMAIL: 'ops@example.org' } }).tls.acme, {
    directoryUrl: 'https://acme-v02.api.letsencrypt.org/directory',
    httpPort: 80,
    email: 'ops@example.org',
  });
  const dir = t.testdir({});
  const file = writeJson(dir, 'acme.json', { tls: { acme: {} } });
  t.match(
    loadConfig({ flags: { config: file } }).tls.acme,
    { directoryUrl: 'https://acme-v02.api.letsencrypt.org/directory', httpPort: 80 },
    'an empty tls.acme object is enough',
  );
  t.equal(loadConfig({ env: { AGENTPOST_HTTP_TLS: 'true', AGENTPOST_ACME_EMAIL: 'ops@example.org' } }).http.tls, true, 'HTTPS with a certificate by ACME');
  configError(t, { env: { AGENTPOST_HTTP_TLS: 'true' } }, 'http.tls', /set tls\.cert and tls\.key, or tls\.acme/);
  configError(
    t,
    { env: { AGENTPOST_HTTP_TLS: 'true', AGENTPOST_HTTP_PORT: '443', AGENTPOST_ACME_HTTP_PORT: '443' } },
    'tls.acme.httpPort',
    /tls\.acme\.httpPort \(from AGENTPOST_ACME_HTTP_PORT\): the http-01 challenge needs plain HTTP/,
  );
  configError(
    t,
    { env: { AGENTPOST_ACME_DIRECTORY_URL: 'http://acme.example/dir' } },
    'tls.acme.directoryUrl',
    /AGENTPOST_ACME_DIRECTORY_URL.*must match pattern/,
  );
  configError(t, { env: { AGENTPOST_ACME_HOSTNAMES: '*.example.org' } }, 'tls.acme.hostnames.0', /must match pattern/);
  configError(t, { env: { AGENTPOST_ACME_EMAIL: 'ops' } }, 'tls.acme.email', /must match pattern/);
});
