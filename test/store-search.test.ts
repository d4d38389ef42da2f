import t from 'tap';
import type { ParsedMessage } from '../src/services/parse.js';
import { FEW_HITS } from '../src/store/messages.js';
import { startApp } from './helpers/app.js';
import { folderOf } from './helpers/mail.js';

/**
 * Search has two plans (src/store/messages.ts): hits looked up one by one when the index
 * matches few messages, a walk of the folder's UID index when it matches many. Both must
 * give the same answer: only this folder's matches, newest first, the right total.
 */

const parsed = (subject: string, text: string): ParsedMessage => ({
  messageId: null, inReplyTo: null, references: [], subject, from: { email: 'a@example.org' }, to: [], cc: [],
  date: null, text, html: null, attachments: [], encrypted: false,
});

t.test('both search plans agree, stay in their folder, and page newest first', async (t) => {
  const { app, register } = await startApp(t);
  const alice = await register();
  const bob = await register();
  const mailboxOf = (email: string) => app.services.mailbox.mailboxForAddress(email)!;
  const expected: Record<string, number[]> = { common: [], rare: [], both: [] };
  // Alice's INBOX holds more "common" hits than FEW_HITS; Bob's INBOX holds others of both words.
  app.store.transaction(() => {
    for (let i = 1; i <= FEW_HITS + 300; i += 1) {
      const words = ['common', ...(i % 400 === 0 ? ['rare'] : [])];
      app.services.mailbox.append(mailboxOf(alice.email), 'INBOX', Buffer.from(`Subject: ${i}\r\n\r\nx\r\n`), parsed(`message ${i}`, words.join(' ')));
      for (const word of words) expected[word].unshift(i);
      if (words.length === 2) expected.both.unshift(i);
      if (i % 10 === 0) {
        app.services.mailbox.append(mailboxOf(bob.email), 'INBOX', Buffer.from('Subject: b\r\n\r\nx\r\n'), parsed('other', 'common rare'));
      }
    }
  });
  const inbox = folderOf(app, alice.email);
  const uids = (page: { items: { uid: number }[] }) => page.items.map((item) => item.uid);
  for (const [word, match] of [['common', '"common"*'], ['rare', '"rare"*'], ['both', '"common"* "rare"*']] as const) {
    for (const [limit, offset] of [[50, 0], [7, 3], [100, expected[word].length - 2], [10, expected[word].length]]) {
      const page = app.store.messages.search(inbox.id, match, limit, offset);
      t.equal(page.total, expected[word].length, `${word}: total`);
      t.same(uids(page), expected[word].slice(offset, offset + limit), `${word}: limit ${limit} offset ${offset}`);
    }
  }
  t.ok(expected.common.length > FEW_HITS && expected.rare.length < FEW_HITS, 'the words exercise both plans');
  const principal = app.services.auth.authenticate(alice.apiKey);
  const listed = app.services.mailbox.list(principal, { folder: 'INBOX', limit: 3, offset: 0, search: 'RARE' });
  t.same(listed.emails.map((email) => email.id), expected.rare.slice(0, 3).map(String));
  t.equal(listed.totalMessages, expected.rare.length);
});
