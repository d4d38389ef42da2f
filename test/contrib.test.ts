// contrib/agentpost.service is a unit systemd accepts, with the capability and hardening
// docs/operators/deploy.md promises. systemd-analyze verify needs systemd installed (not
// running); without it the test says so and skips.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const unit = readFileSync(join(root, 'contrib', 'agentpost.service'), 'utf8');

/** The unit's settings of one section as [key, value] pairs, in order. */
const settings = (section: string): [string, string][] => {
  const body = unit.split(/^\[/m).find((part) => part.startsWith(`${section}]`)) ?? '';
  return body
    .split('\n')
    .filter((line) => /^\w+=/.test(line))
    .map((line) => {
      const at = line.indexOf('=');
      return [line.slice(0, at), line.slice(at + 1)];
    });
};

t.test('the unit runs as its own user with one capability and the hardening options', async (t) => {
  const service = new Map(settings('Service'));
  t.match(service.get('ExecStart'), /^\/usr\/local\/bin\/agentpost serve --config \/etc\/agentpost\/config\.json --data-dir \/var\/lib\/agentpost$/);
  t.equal(service.get('User'), 'agentpost');
  t.equal(service.get('AmbientCapabilities'), 'CAP_NET_BIND_SERVICE', 'binds 25/465/587/993 without root');
  t.equal(service.get('CapabilityBoundingSet'), 'CAP_NET_BIND_SERVICE', 'and can gain no other');
  for (const [key, value] of [
    ['NoNewPrivileges', 'yes'],
    ['ProtectSystem', 'strict'],
    ['ProtectHome', 'yes'],
    ['PrivateTmp', 'yes'],
    ['StateDirectory', 'agentpost'],
  ]) {
    t.equal(service.get(key), value, key);
  }
  t.notOk(service.has('MemoryDenyWriteExecute'), 'V8 needs writable executable memory');
  t.same(new Map(settings('Install')).get('WantedBy'), 'multi-user.target');
});

const analyzer = spawnSync('systemd-analyze', ['--version']).status === 0;

t.test('systemd-analyze verify accepts the unit', { skip: analyzer ? false : 'systemd-analyze is not installed (Debian package systemd)' }, async (t) => {
  // verify also checks that ExecStart's program exists: point it at this Node binary.
  const dir = t.testdir({});
  const copy = join(dir, 'agentpost.service');
  writeFileSync(copy, unit.replace('ExecStart=/usr/local/bin/agentpost', `ExecStart=${process.execPath}`));
  const result = spawnSync('systemd-analyze', ['verify', copy], { encoding: 'utf8' });
  t.equal(result.status, 0, result.stderr);
  t.equal(result.stderr.trim(), '', 'no warning');
});
