// 40 concurrent 16 MB request bodies against a real server process: unauthenticated ones
// (register, MCP) are cut at the small limit, authenticated sends are capped by the shared
// budget (503), and the process's peak RSS stays bounded. Prints what it measured.
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { restCall, startServerProcess } from './helpers/process.js';
import { report } from './helpers/fault.js';
import { rssOf } from './helpers/rss.js';
import { upload, type UploadResult } from './helpers/upload.js';

t.setTimeout(300_000);
/**
 * Growth of the peak over idle. Unbounded, 40 x 16 MB would be 640 MB of buffers alone; the
 * budget (24 MB) admits one such send at a time, held as bytes, text and parsed JSON.
 */
const GROWTH_LIMIT_MB = 200;
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const agentpost = join(root, 'bin', 'agentpost');
const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };

const tally = (results: UploadResult[]): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const { status } of results) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
};

t.test(
  '40 concurrent 16 MB bodies, before and after authentication: bounded RSS',
  { skip: rssOf(process.pid) ? false : 'no /proc to read RSS from' },
  async (t) => {
    const dir = t.testdir({});
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AGENTPOST_')));
    const server = await startServerProcess(t, agentpost, ['serve', '--data-dir', join(dir, 'data'), '--http-port', '0', '--smtp-port', '0'], { env });
    const pid = server.child.pid as number;
    const { body: agent } = await restCall(server.baseUrl, 'POST', '/api/v1/agent/register', { body: { agentId: 'memory' } });
    const idle = rssOf(pid);
    const filler = Buffer.alloc(16 * 1024 * 1024 - 64, 'x');
    const jsonBody = (prefix: string) => Buffer.concat([Buffer.from(prefix), filler, Buffer.from('"}}')]);

    // Unauthenticated: 20 to register, 20 to MCP, half of each chunked (no Content-Length).
    const unauthenticated = await Promise.all(
      Array.from({ length: 40 }, (_, i) => {
        const mcp = i % 2 === 0;
        const body = mcp
          ? jsonBody('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"register_agent","arguments":{"agentId":"')
          : jsonBody('{"x":{"agentId":"');
        return upload(server.baseUrl + (mcp ? '/mcp' : '/api/v1/agent/register'), { body, chunked: i % 4 < 2, headers: mcp ? MCP_HEADERS : {} }).result;
      }),
    );
    const afterUnauthenticated = rssOf(pid);
    // Registration counts every request before its body is read (docs/agents/rest.md): past the
    // fifth from this address a REST one is refused at once (429); the rest are cut at the small limit.
    const refused = tally(unauthenticated);
    t.same(Object.keys(refused).sort(), ['413', '429'], `every one is cut at the small limit or refused before its body: ${JSON.stringify(refused)}`);
    t.equal((refused[413] ?? 0) + (refused[429] ?? 0), 40);

    // Authenticated sends by the full key: the large limit, but at most 24 MB held at once.
    const sends = await Promise.all(
      Array.from(
        { length: 40 },
        (_, i) =>
          upload(`${server.baseUrl}/api/v1/agent/send`, {
            body: jsonBody(`{"to":"a@example.com","subject":"s","text":{"t":"`),
            chunked: i % 2 === 0,
            headers: { authorization: `Bearer ${agent.apiKey}` },
          }).result,
      ),
    );
    const afterSends = rssOf(pid);
    const sendCounts = tally(sends);
    t.ok((sendCounts[503] ?? 0) >= 30, `most are refused by the budget with 503: ${JSON.stringify(sendCounts)}`);
    t.ok(
      sends.every((s) => [400, 503].includes(s.status)),
      'the admitted ones are read whole and answered (400: text is not a string)',
    );
    t.ok(
      sends.filter((s) => s.status === 503).every((s) => s.headers['retry-after'] === '1'),
      'each 503 says when to retry',
    );
    t.equal((await restCall(server.baseUrl, 'GET', '/healthz')).status, 200, 'still serving');

    const peak = afterSends?.peakMb ?? 0;
    const growth = peak - (idle?.peakMb ?? 0);
    report(
      t,
      `body memory: RSS MB idle ${idle?.rssMb}, after 40 unauthenticated 16 MB bodies ${afterUnauthenticated?.rssMb} (peak ${afterUnauthenticated?.peakMb}), ` +
        `after 40 authenticated 16 MB sends ${afterSends?.rssMb} (peak ${peak}); sends answered ${JSON.stringify(sendCounts)}`,
    );
    t.ok(growth < GROWTH_LIMIT_MB, `peak RSS grew ${growth} MB over idle, < ${GROWTH_LIMIT_MB} MB`);
    await server.stop();
  },
);
