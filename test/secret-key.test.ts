// The service's secret keys are created by whichever process starts first on an empty secrets
// folder (src/store/secret-key.ts); processes starting at the same moment all read that one key,
// whole, and leave no draft behind. (The window in which a reader could meet a file still being
// written, before keys were linked into place whole, is a few microseconds: this run does not
// reach it reliably; the link makes it impossible by construction.)
import { execFile } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';

const run = promisify(execFile);
const module = join(import.meta.dirname, '..', 'src', 'store', 'secret-key.ts');

t.test('eight processes creating the keys at once read one key each, whole', async (t) => {
  const dir = t.testdir({});
  const script = `import { loadSecretKey, loadSessionKey } from ${JSON.stringify(module)}; console.log(loadSecretKey(process.argv[1]).toString('hex'), loadSessionKey(process.argv[1]).toString('hex'));`;
  const outputs = await Promise.all(
    Array.from({ length: 8 }, () => run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, dir]).then(({ stdout }) => stdout.trim())),
  );
  t.equal(new Set(outputs).size, 1, 'every process read the same two keys');
  t.match(outputs[0], /^[0-9a-f]{64} [0-9a-f]{64}$/);
  t.same(readdirSync(dir).sort(), ['secret.key', 'session.key'], 'no draft left behind');
  t.equal(statSync(join(dir, 'secret.key')).mode & 0o777, 0o600);
});
