import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { createSecureContext, connect as tlsConnect } from 'node:tls';
import { fmt, percentile } from './lib.js';
import { cpuMs } from './proc.js';

/**
 * What node:tls alone costs per connection, with no SMTP and no agentpost: a bare server (in a
 * process of its own, on the Node the measured server runs on) and this process as the client,
 * on the same cores as the bench. Each connection greets, hears one line and ends, in the clear
 * or with a full TLS handshake first; the difference is the floor a STARTTLS connection adds
 * to both ends, whatever the server does.
 */

/** The bare server: greets, answers one line, ends. TLS when argv[4] is 'tls'. CommonJS for `node -e`. */
const SERVER = `
const net = require('node:net'), tls = require('node:tls'), fs = require('node:fs');
const [cert, key, mode] = process.argv.slice(1);
const context = tls.createSecureContext({ cert: fs.readFileSync(cert), key: fs.readFileSync(key), minVersion: 'TLSv1.2' });
const talk = (socket) => { socket.on('error', () => {}); socket.write('220 floor\\r\\n'); socket.once('data', () => socket.end('221 bye\\r\\n')); };
const server = net.createServer((raw) => {
  if (mode !== 'tls') return talk(raw);
  const secure = new tls.TLSSocket(raw, { isServer: true, secureContext: context });
  secure.once('secure', () => talk(secure));
  secure.on('error', () => {});
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

export interface FloorFigures {
  /** Server and client CPU per connection, ms. */
  plain: { server: number; client: number };
  tls: { server: number; client: number };
}

const exchange = (socket: Socket): Promise<void> =>
  new Promise((resolve, reject) => {
    socket.once('data', () => {
      socket.once('data', () => {
        socket.destroy();
        resolve();
      });
      socket.write('QUIT\r\n');
    });
    socket.once('error', reject);
  });

const oneConnection = (port: number, secure: boolean, context: ReturnType<typeof createSecureContext>): Promise<void> =>
  new Promise((resolve, reject) => {
    const raw = connect(port, '127.0.0.1');
    raw.once('error', reject);
    raw.once('connect', () => {
      const socket = secure ? tlsConnect({ socket: raw, secureContext: context, rejectUnauthorized: false, servername: 'mx.bench.test' }) : raw;
      exchange(socket).then(resolve, reject);
    });
  });

const measureMode = async (node: string, files: { cert: string; key: string }, secure: boolean, connections: number, sessions: number) => {
  const child = spawn(node, ['-e', SERVER, files.cert, files.key, secure ? 'tls' : 'plain'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const [line] = (await once(child.stdout, 'data')) as [Buffer];
    const port = Number(line.toString().trim());
    const context = createSecureContext();
    const run = async (count: number) => {
      let left = count;
      await Promise.all(
        Array.from({ length: sessions }, async () => {
          while (left-- > 0) await oneConnection(port, secure, context);
        }),
      );
    };
    await run(Math.min(500, connections));
    const server = cpuMs(child.pid as number);
    const client = process.cpuUsage();
    await run(connections);
    const used = process.cpuUsage(client);
    return { server: (cpuMs(child.pid as number) - server) / connections, client: (used.user + used.system) / 1000 / connections };
  } finally {
    child.kill();
  }
};

export const tlsFloor = async (node: string, files: { cert: string; key: string }, connections = 3000, sessions = 16): Promise<FloorFigures> => ({
  plain: await measureMode(node, files, false, connections, sessions),
  tls: await measureMode(node, files, true, connections, sessions),
});

/**
 * Prints the floor on `node` (the Node the measured server runs on) and the most a new
 * connection per message could reach with it alone: both ends share these cores, so each
 * message's CPU (plain: the server's and the client's, `plainNew` per round) grows by both floors.
 */
export const reportFloor = async (node: string, files: { cert: string; key: string }, plainNew: { server: number; client: number }[]): Promise<void> => {
  const floor = await tlsFloor(node, files);
  const added = { server: floor.tls.server - floor.plain.server, client: floor.tls.client - floor.plain.client };
  const plain = percentile(
    plainNew.map((cpu) => cpu.server + cpu.client),
    50,
  );
  console.log(
    `node:tls floor (a bare server on ${node}, this process the client, no SMTP): a full handshake adds ${fmt(added.server, 3)} ms of server CPU ` +
      `and ${fmt(added.client, 3)} ms of client CPU per connection (plain ${fmt(floor.plain.server, 3)} / ${fmt(floor.plain.client, 3)}, TLS ` +
      `${fmt(floor.tls.server, 3)} / ${fmt(floor.tls.client, 3)}); with agentpost's plain new connection at ${fmt(plain, 3)} ms of server and client ` +
      `CPU per message (median), that floor alone allows at most ${fmt(plain / (plain + added.server + added.client))}x on shared cores`,
  );
};
