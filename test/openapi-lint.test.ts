import { execFile } from 'node:child_process';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { startApp } from './helpers/app.js';

const run = promisify(execFile);
const REDOCLY = join(process.cwd(), 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');

/** Redocly CLI's recommended rules over the document the running app serves. */
t.test('the served OpenAPI document lints clean with @redocly/cli (recommended rules)', async (t) => {
  const { api } = await startApp(t);
  const served = await api('GET', '/api/v1/openapi.json');
  t.equal(served.status, 200);
  const dir = t.testdir({});
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(served.body, null, 2));
  copyFileSync('schema/lint/redocly.yaml', join(dir, 'redocly.yaml'));
  copyFileSync('schema/lint/redocly-lint-ignore.yaml', join(dir, '.redocly.lint-ignore.yaml'));
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
  const { stdout } = await run(process.execPath, [REDOCLY, 'lint', 'openapi.json', '--format=json'], { cwd: dir, env }).catch((error) => error);
  const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number; ignored: number }; problems: { ruleId: string; message: string }[] };
  t.same(
    report.problems.map((problem) => `${problem.ruleId}: ${problem.message}`),
    [],
    'no problem',
  );
  t.same(report.totals, { errors: 0, warnings: 0, ignored: 1 }, 'only the one recorded exception is ignored');

  const document = served.body as { paths: Record<string, Record<string, { operationId?: string; security?: unknown[] }>> };
  const operations = Object.values(document.paths).flatMap((item) => Object.values(item));
  t.ok(
    operations.every((operation) => operation.operationId && Array.isArray(operation.security)),
    'an operationId and explicit security everywhere',
  );
  t.equal(new Set(operations.map((operation) => operation.operationId)).size, operations.length, 'operationIds are unique');
});
