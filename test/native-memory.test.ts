// Which of the process's mappings src/runtime/native-memory.ts may take out of the resident
// set: only the executable's own private read-only mappings that hold no private copy of a
// page. The addon's effect on a live process is in package.test.ts.
import t from 'tap';
import { releasableMappings } from '../src/runtime/native-memory.js';

const EXE = '/usr/local/bin/agentpost';
const mapping = (range: string, permissions: string, path: string, anonymous: number, offset = '00000000') =>
  [
    `${range} ${permissions} ${offset} fe:00 5406726                            ${path}`.trimEnd(),
    'Size:               3352 kB',
    'Rss:                2328 kB',
    `Anonymous:          ${anonymous} kB`,
    'VmFlags: rd mr mw me sd',
  ].join('\n');

const smaps = [
  mapping('00400000-00746000', 'r--p', EXE, 0),
  mapping('0074a000-03201000', 'r-xp', EXE, 0, '0034a000'),
  // RELRO: relocated, then made read-only; its pages are the process's own copies.
  mapping('06b52000-06b56000', 'r--p', EXE, 8, '06751000'),
  mapping('06b56000-06b7d000', 'rw-p', EXE, 0, '06755000'),
  mapping('0f8c0000-10920000', 'r--p', EXE, 0, '078c0000'),
  mapping('10920000-10a00000', 'rw-p', '', 0),
  mapping('7f00000a0000-7f00000c0000', 'r--s', EXE, 0),
  mapping('7f00000c0000-7f00000e0000', 'r-xp', '/usr/lib/x86_64-linux-gnu/libc.so.6', 0),
  mapping('7f0000100000-7f0000120000', 'r-xp', `${EXE} (deleted)`, 0),
  mapping('7ffd00000000-7ffd00002000', 'r-xp', '[vdso]', 0),
].join('\n');

t.test("the executable's private read-only mappings with no private page, and nothing else", async (t) => {
  t.same(releasableMappings(smaps, EXE), [
    { start: 0x400000, length: 0x346000 },
    { start: 0x74a000, length: 0x3201000 - 0x74a000 },
    { start: 0xf8c0000, length: 0x10920000 - 0xf8c0000 },
  ]);
});

t.test('a mapping whose Anonymous line is missing stays (nothing proves it holds no private page)', async (t) => {
  const text = [`00400000-00746000 r--p 00000000 fe:00 1 ${EXE}`, 'Rss: 4 kB'].join('\n');
  t.same(releasableMappings(text, EXE), []);
});

t.test('each mapping is judged by its own Anonymous line', async (t) => {
  const last = mapping('00400000-00746000', 'r--p', EXE, 4);
  t.same(releasableMappings(last, EXE), []);
  t.same(releasableMappings(`${last}\n${mapping('00800000-00900000', 'r--p', EXE, 0)}`, EXE), [{ start: 0x800000, length: 0x100000 }]);
});
