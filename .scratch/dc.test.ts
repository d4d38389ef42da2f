import t from 'tap';
import { startDovecot } from '../test/helpers/dovecot.js';
import { rawImap } from '../test/helpers/imap.js';
t.test('dc', async (t) => {
  const d = await startDovecot(t);
  if ('skip' in d) { t.comment(d.skip); return; }
  const raw = await rawImap(t, d.port);
  raw.send('a LOGIN tester secret\r\nb LIST "" *\r\nc CREATE A/B\r\nd LIST "" *\r\n');
  console.log(await raw.read(/^d /m));
});
