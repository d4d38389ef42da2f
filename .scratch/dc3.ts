import { readFileSync } from 'node:fs';
const s = readFileSync('test/imap-dovecot.test.ts', 'utf8');
