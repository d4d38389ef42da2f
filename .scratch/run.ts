import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { loadConfig } from '../src/config/load.js';
import { createLogger } from '../src/core/logger.js';
import { createApp } from '../src/main.js';
import { sourceParseWorker } from '../src/workers/threads/parse-thread-source.js';

const dataDir = mkdtempSync(join(tmpdir(), 'ap-'));
const config = loadConfig({ overrides: { dataDir, http: { port: 0 }, smtp: { port: 0 }, submission: { port: 0 }, imap: { port: 0 }, log: { level: 'silent' } } });
const app = createApp(config, { logger: createLogger('silent', () => {}), parseWorker: sourceParseWorker });
await app.start();
const reg = await fetch(app.baseUrl + '/api/v1/agent/register', { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'x' }, body: JSON.stringify({ agentId: 'a' }) });
const agent = await reg.json() as any;
const socket = connect(app.ports.imap, '127.0.0.1');
let buf = '';
socket.on('data', (d) => { buf += d.toString('latin1'); });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const msg = "From: Someone <a@example.org>\r\nTo: undisclosed-recipients:;\r\nCc: localpart, Name <nodomain>, grp: x@y.z, w@v.u;\r\nSubject:\r\n Folded subject\r\nDate: Mon, 2 Mar 2026 10:00:00 +0000\r\n\r\nline1\nline2\r\nline3\rline4\r\n";
const script: string[] = (process.argv[2] ?? '').split('|').filter(Boolean);
const cmds = [`a LOGIN ${agent.email} ${agent.apiKey}`, `b APPEND INBOX {${Buffer.byteLength(msg)}+}\r\n${msg}`, ...script, 'z LOGOUT'];
for (const c of cmds) { socket.write(c + '\r\n'); await sleep(300); }
console.log(buf);
await app.stop();
process.exit(0);
