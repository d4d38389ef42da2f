import t from 'tap';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { startDovecot } from '../test/helpers/dovecot.js';
t.test('dc', async (t) => {
  const d = await startDovecot(t);
  console.log(JSON.stringify(d));
  const dir = (t as any).testdirName;
  console.log(readFileSync(dir + '/dovecot.conf', 'utf8').slice(0, 2000));
  console.log(spawnSync('/usr/sbin/dovecot', ['-n', '-c', dir + '/dovecot.conf'], { encoding: 'utf8' }).stderr);
  try { console.log(readFileSync(dir + '/dovecot.log', 'utf8')); } catch {}
});
