import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { startDnsServer, type TestDnsServer } from './dns-server.js';
import { accepting, freePort } from './ports.js';
import { makeCa, makeCertificate, type Pems } from './tls.js';

export const PEBBLE = '/usr/bin/pebble';

/** Pebble, the ACME test server (Debian package `pebble`), asking a DNS server of the test. */
export interface Pebble {
  /** For `tls.acme.directoryUrl`. */
  directoryUrl: string;
  /** For `tls.acme.caFile`: the CA of pebble's own HTTPS certificate. */
  caFile: string;
  /** Pebble's own HTTPS certificate (for `localhost`) and key: a server in front of it can present the same. */
  listener: Pems;
  /** The port pebble asks the http-01 challenge on (its `httpPort`): `tls.acme.httpPort`. */
  httpPort: number;
  /** Pebble resolves every name here (`-dnsserver`): publish A records of the names to certify. */
  dns: TestDnsServer;
  /** Pebble's log lines so far: one per request it handled. */
  log: string[];
  /** The root of the chains pebble issues (made anew at each start), for clients to verify with. */
  root(): Promise<string>;
  stop(): Promise<void>;
}

export interface PebbleOptions {
  /** Lifetime of the certificates it issues (pebble's certificateValidityPeriod); default 90 days. */
  validitySeconds?: number;
  /** A DNS server the test already runs; default a new one. */
  dns?: TestDnsServer;
}

/**
 * Starts pebble on loopback ports with real validation (PEBBLE_VA_ALWAYS_VALID unset: each
 * http-01 challenge is fetched from the name's A record at `httpPort`), without its random
 * pauses (PEBBLE_VA_NOSLEEP). Stopped when the test ends; `{skip}` when it cannot run here.
 */
export const startPebble = async (t: Test, options: PebbleOptions = {}): Promise<Pebble | { skip: string }> => {
  if (!existsSync(PEBBLE)) return { skip: `${PEBBLE} is not installed (apt-get install -y pebble; .ci/run installs it)` };
  // Its own folder: the test's t.testdir() is the app's data folder (startApp).
  const dir = mkdtempSync(join(tmpdir(), 'pebble-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // A name of its own: ACME requests trust every tls.acme.caFile of the process, and OpenSSL
  // would pick among CAs of one name by the name alone.
  const ca = await makeCa(`pebble listener CA ${randomUUID()}`);
  const listener = await makeCertificate(['localhost'], { ca });
  const files = { caFile: join(dir, 'ca.pem'), cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem'), config: join(dir, 'pebble.json') };
  writeFileSync(files.caFile, ca.cert);
  writeFileSync(files.cert, listener.cert);
  writeFileSync(files.key, listener.key);
  const [port, managementPort, httpPort] = [await freePort(), await freePort(), await freePort()];
  const pebbleConfig = {
    listenAddress: `127.0.0.1:${port}`,
    managementListenAddress: `127.0.0.1:${managementPort}`,
    certificate: files.cert,
    privateKey: files.key,
    httpPort,
    tlsPort: await freePort(),
    ocspResponderURL: '',
    externalAccountBindingRequired: false,
    ...(options.validitySeconds ? { certificateValidityPeriod: options.validitySeconds } : {}),
  };
  writeFileSync(files.config, JSON.stringify({ pebble: pebbleConfig }));
  const dns = options.dns ?? (await startDnsServer(t));
  const log: string[] = [];
  let child: ChildProcess;
  try {
    child = spawn(PEBBLE, ['-config', files.config, '-dnsserver', `127.0.0.1:${dns.port}`, '-strict=false'], {
      env: { ...process.env, PEBBLE_VA_NOSLEEP: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    return { skip: `pebble could not be started: ${(error as Error).message}` };
  }
  for (const stream of [child.stdout, child.stderr]) stream?.on('data', (chunk: Buffer) => log.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))]);
  };
  t.teardown(stop);
  try {
    await Promise.race([
      accepting(port, Date.now() + 15_000),
      exited.then(() => {
        throw new Error(`pebble exited at start: ${log.slice(-3).join(' | ')}`);
      }),
    ]);
  } catch (error) {
    return { skip: `pebble did not come up: ${(error as Error).message}` };
  }
  const root = () => httpsText(`https://localhost:${managementPort}/roots/0`, ca.cert);
  return { directoryUrl: `https://localhost:${port}/dir`, caFile: files.caFile, listener, httpPort, dns, log, root, stop };
};

/** startPebble, or null once the test has printed why it does not run (pebble missing or not starting). */
export const pebbleOrSkip = async (t: Test, options: PebbleOptions = {}): Promise<Pebble | null> => {
  const pebble = await startPebble(t, options);
  if (!('skip' in pebble)) return pebble;
  t.comment(`skipped: ${pebble.skip}`);
  console.log(`# ${t.name}: skipped: ${pebble.skip}`);
  return null;
};

/** The body of a GET over HTTPS that trusts `ca` (pebble's own CA). */
export const httpsText = (url: string, ca: string): Promise<string> =>
  new Promise((resolve, reject) => {
    get(url, { ca }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => (response.statusCode === 200 ? resolve(text) : reject(new Error(`${url}: ${response.statusCode}`))));
    }).on('error', reject);
  });
