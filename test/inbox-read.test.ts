import t from 'tap';
import { startApp, type TestApp } from './helpers/app.js';
import { deliverDirect, simpleMessage } from './helpers/mail.js';
import { smtpSendRaw } from './helpers/smtp.js';

/** REST inbox and read (issue 2 "Inbox" and "Read", contract GET inbox and GET email/{id}). */

const seed = async (harness: TestApp) => {
  const agent = await harness.register();
  const messages = [
    { from: '"Alice Archer" <alice@example.org>', subject: 'Quarterly report draft', body: 'Numbers for the board meeting.' },
    { from: 'bob@example.net', subject: 'Lunch on Friday', body: 'Tacos or ramen? The board can wait.' },
    { from: '"Carol" <carol@example.com>', subject: 'Re: Quarterly report draft', body: 'Looks fine; ship the crème brûlée slide.' },
    { from: 'dave@example.com', subject: 'Invoice 4471', body: 'Payment due in thirty days.' },
    { from: '"Alice Archer" <alice@example.org>', subject: 'Offsite agenda', body: 'Hiking, then planning.' },
  ];
  for (const message of messages) {
    const sent = await smtpSendRaw(harness.smtpPort, 'sender@example.org', [agent.email], simpleMessage({ ...message, to: agent.email }));
    if (!sent.response.startsWith('250')) throw new Error(sent.response);
  }
  return agent;
};

const subjects = (body: any): string[] => body.emails.map((email: any) => email.subject);

t.test('inbox listing: defaults, folders, order, paging', async (t) => {
  const harness = await startApp(t);
  const { api } = harness;
  const agent = await seed(harness);
  const key = agent.apiKey;

  t.test('defaults: INBOX, newest first, the Inbox shape', async (t) => {
    const response = await api('GET', '/api/v1/agent/inbox', { key });
    t.equal(response.status, 200);
    t.match(response.body, { folder: 'INBOX', totalMessages: 5, returnedMessages: 5, uidValidity: /^[1-9][0-9]*$/ });
    t.same(
      response.body.emails.map((email: any) => email.id),
      ['5', '4', '3', '2', '1'],
    );
    t.same(subjects(response.body), ['Offsite agenda', 'Invoice 4471', 'Re: Quarterly report draft', 'Lunch on Friday', 'Quarterly report draft']);
    t.match(response.body.emails[0], {
      from: { name: 'Alice Archer', email: 'alice@example.org' },
      to: [{ email: agent.email }],
      cc: [],
      preview: 'Hiking, then planning.',
      isRead: false,
      isStarred: false,
      encryptedBody: false,
      attachments: [],
    });
    t.notOk('text' in response.body.emails[0], 'list items carry no body');
  });

  t.test('offset pages through without overlap; past the end is an empty page', async (t) => {
    const pages = [];
    for (const offset of [0, 2, 4]) {
      const response = await api('GET', `/api/v1/agent/inbox?limit=2&offset=${offset}`, { key });
      t.equal(response.body.totalMessages, 5, 'the total counts the whole folder');
      pages.push(...response.body.emails.map((email: any) => email.id));
    }
    t.same(pages, ['5', '4', '3', '2', '1']);
    const past = await api('GET', '/api/v1/agent/inbox?offset=5', { key });
    t.match(past.body, { totalMessages: 5, returnedMessages: 0, emails: [] });
    for (const offset of ['4000000000', '99999999999999999999', '1e300']) {
      const far = await api('GET', `/api/v1/agent/inbox?offset=${offset}`, { key });
      t.equal(far.status, 200, `offset ${offset} is an empty page, not an error`);
      t.same(far.body.emails, []);
      const farSearch = await api('GET', `/api/v1/agent/inbox?offset=${offset}&search=quarterly`, { key });
      t.match(farSearch.body, { totalMessages: 2, emails: [] }, `offset ${offset} with a search`);
    }
  });

  t.test('folders: Sent exists and is empty; INBOX is case-insensitive, other names are not; unknown is 404', async (t) => {
    const sent = await api('GET', '/api/v1/agent/inbox?folder=Sent', { key });
    t.equal(sent.status, 200);
    t.match(sent.body, { folder: 'Sent', totalMessages: 0, returnedMessages: 0, emails: [], uidValidity: /^[1-9]/ });
    const inbox = await api('GET', '/api/v1/agent/inbox?folder=inbox', { key });
    t.equal(inbox.status, 200);
    t.equal(inbox.body.folder, 'INBOX');
    for (const folder of ['Archive', 'sent', 'SENT', 'INBOX%2FSub', '..%2FINBOX']) {
      const response = await api('GET', `/api/v1/agent/inbox?folder=${folder}`, { key });
      t.equal(response.status, 404, folder);
      t.equal(response.body.code, 'not_found', folder);
    }
  });

  t.test('limit is 1..100 (default 50)', async (t) => {
    await Promise.all(Array.from({ length: 55 }, (_, i) => deliverDirect(harness.app, [agent.email], simpleMessage({ subject: `bulk ${i}` }))));
    const byDefault = await api('GET', '/api/v1/agent/inbox', { key });
    t.equal(byDefault.body.totalMessages, 60);
    t.equal(byDefault.body.emails.length, 50);
    t.equal(byDefault.body.returnedMessages, 50);
    t.equal((await api('GET', '/api/v1/agent/inbox?limit=100', { key })).body.emails.length, 60);
    t.equal((await api('GET', '/api/v1/agent/inbox?limit=1', { key })).body.emails.length, 1);
    t.equal((await api('GET', '/api/v1/agent/inbox?limit=60&offset=59', { key })).body.emails[0].id, '1');
  });

  t.test('bad parameters are 400 with {error, code}', async (t) => {
    const bad = [
      'limit=0',
      'limit=101',
      'limit=-1',
      'limit=abc',
      'limit=1.5',
      'limit=',
      'limit=1&limit=2',
      'offset=-1',
      'offset=abc',
      'offset=0.5',
      `search=${'a'.repeat(201)}`,
      'folder=',
      'unknown=1',
    ];
    for (const query of bad) {
      const response = await api('GET', `/api/v1/agent/inbox?${query}`, { key });
      t.equal(response.status, 400, query.slice(0, 40));
      t.equal(response.body.code, 'invalid_input', query.slice(0, 40));
      t.type(response.body.error, 'string');
    }
    const longest = await api('GET', `/api/v1/agent/inbox?search=${'a'.repeat(200)}`, { key });
    t.equal(longest.status, 200, 'a 200-character search is allowed');
  });
});

t.test('full-text search', async (t) => {
  const harness = await startApp(t);
  const agent = await seed(harness);
  const search = async (text: string) => {
    const response = await harness.api('GET', `/api/v1/agent/inbox?search=${encodeURIComponent(text)}`, { key: agent.apiKey });
    t.equal(response.status, 200, text);
    t.equal(response.body.totalMessages, response.body.emails.length, `${text}: the total counts matches`);
    return subjects(response.body);
  };
  t.same(await search('quarterly'), ['Re: Quarterly report draft', 'Quarterly report draft'], 'subject, newest first');
  t.same(await search('tacos'), ['Lunch on Friday'], 'body');
  t.same(await search('dave@example.com'), ['Invoice 4471'], 'sender address');
  t.same(await search('Archer'), ['Offsite agenda', 'Quarterly report draft'], 'sender display name');
  t.same(await search('board quarterly'), ['Quarterly report draft'], 'words are ANDed');
  t.same(await search('board  tacos'), ['Lunch on Friday'], 'repeated whitespace');
  t.same(await search('board zebra'), [], 'one missing word excludes the message');
  t.same(await search('QUART'), [], 'words match whole words, not fragments');
  t.same(await search('QUART*'), ['Re: Quarterly report draft', 'Quarterly report draft'], 'a trailing * asks for a prefix, in any case');
  t.same(await search('invoices'), ['Invoice 4471'], 'words match their English inflections (porter stems)');
  t.same(await search('creme brulee'), ['Re: Quarterly report draft'], 'diacritics are folded');
  t.same(await search('4471'), ['Invoice 4471'], 'digits');
  for (const punctuation of ['!!!', '...', '-', '"', '*', '()', '@', '"*"', '- -']) {
    t.same(await search(punctuation), [], `punctuation only: ${punctuation}`);
  }
  // FTS5 query syntax in user input is matched as words, never interpreted.
  for (const hostile of ['board OR zebra', 'NOT board', 'subject:board', 'board*', '"board', 'board)', 'NEAR(board tacos)', '^board', 'board AND']) {
    const found = await search(hostile);
    t.ok(found.length <= 2, `${hostile}: ${JSON.stringify(found)}`);
  }
  t.same(await search('board OR zebra'), [], 'OR is a word to match, not an operator');
  t.same(await search('board\u0000tacos'), ['Lunch on Friday'], 'a NUL separates words (FTS5 reads its query as a C string)');
  t.same(await search('tacos\u0000'), ['Lunch on Friday']);
  t.same(await search('  '), subjects((await harness.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey })).body), 'a blank search lists all');
  const paged = await harness.api('GET', '/api/v1/agent/inbox?search=quarterly&limit=1&offset=1', { key: agent.apiKey });
  t.match(paged.body, { totalMessages: 2, returnedMessages: 1 });
  t.same(subjects(paged.body), ['Quarterly report draft']);
  const sent = await harness.api('GET', '/api/v1/agent/inbox?folder=Sent&search=quarterly', { key: agent.apiKey });
  t.same(sent.body.emails, [], 'search stays within the folder');
  const other = await harness.register();
  const otherSearch = await harness.api('GET', '/api/v1/agent/inbox?search=quarterly', { key: other.apiKey });
  t.same(otherSearch.body.emails, [], 'search stays within the mailbox');
});

t.test('reading a message', async (t) => {
  const harness = await startApp(t);
  const { api } = harness;
  const agent = await seed(harness);
  const key = agent.apiKey;
  const list = await api('GET', '/api/v1/agent/inbox', { key });
  const uidValidity = list.body.uidValidity;

  t.test('the full Message; markAsRead=false leaves isRead, the default sets it', async (t) => {
    const peek = await api('GET', '/api/v1/agent/email/3?markAsRead=false', { key });
    t.equal(peek.status, 200);
    t.match(peek.body, {
      id: '3',
      subject: 'Re: Quarterly report draft',
      folder: 'INBOX',
      uidValidity,
      isRead: false,
      text: 'Looks fine; ship the crème brûlée slide.',
      body: 'Looks fine; ship the crème brûlée slide.',
      html: null,
      from: { name: 'Carol', email: 'carol@example.com' },
      attachments: [],
      references: [],
      inReplyTo: null,
    });
    t.equal((await api('GET', '/api/v1/agent/inbox', { key })).body.emails[2].isRead, false, 'still unread');
    const read = await api('GET', '/api/v1/agent/email/3', { key });
    t.equal(read.body.isRead, true, 'the response shows the new state');
    const after = await api('GET', '/api/v1/agent/inbox', { key });
    t.same(
      after.body.emails.map((email: any) => email.isRead),
      [false, false, true, false, false],
    );
    const explicit = await api('GET', '/api/v1/agent/email/2?markAsRead=true', { key });
    t.equal(explicit.body.isRead, true);
    const again = await api('GET', '/api/v1/agent/email/2?markAsRead=false', { key });
    t.equal(again.body.isRead, true, 'markAsRead=false never clears the flag');
  });

  t.test('uidValidity: a match reads, a mismatch is 409', async (t) => {
    t.equal((await api('GET', `/api/v1/agent/email/1?uidValidity=${uidValidity}&markAsRead=false`, { key })).status, 200);
    const other = String((Number(uidValidity) % 4294967295) + 1);
    const stale = await api('GET', `/api/v1/agent/email/1?uidValidity=${other}`, { key });
    t.equal(stale.status, 409);
    t.equal(stale.body.code, 'conflict');
    t.equal((await api('GET', '/api/v1/agent/email/1?markAsRead=false', { key })).body.isRead, false, 'a refused read marks nothing');
  });

  t.test('ids not matching ^[1-9][0-9]{0,9}$ are 400; unknown ids are 404', async (t) => {
    for (const id of ['0', '01', '-1', 'abc', '1.0', '1e3', '12345678901', '%20', '1%0A']) {
      const response = await api('GET', `/api/v1/agent/email/${id}`, { key });
      t.equal(response.status, 400, id);
      t.equal(response.body.code, 'invalid_input', id);
    }
    for (const id of ['6', '9999999999', '4294967296']) {
      const response = await api('GET', `/api/v1/agent/email/${id}`, { key });
      t.equal(response.status, 404, id);
      t.equal(response.body.code, 'not_found', id);
    }
    t.equal((await api('GET', '/api/v1/agent/email/1?folder=Sent', { key })).status, 404, 'a UID of another folder');
    t.equal((await api('GET', '/api/v1/agent/email/1?folder=Nope', { key })).status, 404, 'an unknown folder');
    const other = await harness.register();
    t.equal((await api('GET', '/api/v1/agent/email/1', { key: other.apiKey })).status, 404, 'another mailbox');
  });

  t.test('bad read parameters are 400', async (t) => {
    for (const query of ['markAsRead=maybe', 'uidValidity=abc', 'uidValidity=0', 'folder=', 'extra=1', 'markAsRead=true&markAsRead=false']) {
      const response = await api('GET', `/api/v1/agent/email/1?${query}`, { key });
      t.equal(response.status, 400, query);
      t.equal(response.body.code, 'invalid_input', query);
    }
  });
});

t.test('a message over limits.readMaxBytes is 413 and points to IMAP', async (t) => {
  const harness = await startApp(t, { limits: { readMaxBytes: 2000 } });
  const agent = await harness.register();
  await smtpSendRaw(harness.smtpPort, 'a@example.org', [agent.email], simpleMessage({ subject: 'small' }));
  await smtpSendRaw(harness.smtpPort, 'a@example.org', [agent.email], simpleMessage({ subject: 'large', body: 'y'.repeat(3000) }));
  const large = await harness.api('GET', '/api/v1/agent/email/2', { key: agent.apiKey });
  t.equal(large.status, 413);
  t.equal(large.body.code, 'too_large');
  t.match(large.body.error, /IMAP/);
  const listed = await harness.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey });
  t.same(subjects(listed.body), ['large', 'small'], 'it is still listed');
  t.equal(listed.body.emails[0].isRead, false, 'a refused read marks nothing');
  t.equal((await harness.api('GET', '/api/v1/agent/email/1', { key: agent.apiKey })).status, 200, 'a small one reads');
});

t.test('authentication: Bearer only; missing, malformed or unknown keys are 401; never a key in the URL', async (t) => {
  const harness = await startApp(t);
  const agent = await harness.register();
  await smtpSendRaw(harness.smtpPort, 'a@example.org', [agent.email], simpleMessage({ subject: 'secret' }));
  const paths = ['/api/v1/agent/inbox', '/api/v1/agent/email/1', '/api/v1/agent/balance'];
  const unknown = `svc_${'0'.repeat(64)}`;
  const headerCases: [string, Record<string, string>][] = [
    ['no header', {}],
    ['empty Bearer', { authorization: 'Bearer ' }],
    ['Basic', { authorization: `Basic ${Buffer.from(`${agent.email}:${agent.apiKey}`).toString('base64')}` }],
    ['no scheme', { authorization: agent.apiKey }],
    ['Token scheme', { authorization: `Token ${agent.apiKey}` }],
    ['unknown key', { authorization: `Bearer ${unknown}` }],
    ['upper-case hex', { authorization: `Bearer svc_${agent.apiKey.slice(4).toUpperCase()}` }],
    ['truncated', { authorization: `Bearer ${agent.apiKey.slice(0, -1)}` }],
    ['extra token', { authorization: `Bearer ${agent.apiKey} ${agent.apiKey}` }],
    ['X-API-Key header', { 'x-api-key': agent.apiKey }],
    ['cookie', { cookie: `apiKey=${agent.apiKey}` }],
  ];
  for (const path of paths) {
    for (const [name, headers] of headerCases) {
      const response = await harness.api('GET', path, { headers });
      t.equal(response.status, 401, `${path}: ${name}`);
      t.same(response.body, { error: 'missing or invalid API key', code: 'unauthorized' }, `${path}: ${name}`);
      t.equal(response.headers.get('www-authenticate'), 'Bearer');
    }
    for (const param of ['apiKey', 'key', 'api_key', 'access_token', 'token']) {
      const separator = path.includes('?') ? '&' : '?';
      const inUrl = await harness.api('GET', `${path}${separator}${param}=${agent.apiKey}`);
      t.equal(inUrl.status, 401, `${path}: ?${param}= is never accepted`);
      const besideUnknown = await harness.api('GET', `${path}${separator}${param}=${agent.apiKey}`, { key: unknown });
      t.equal(besideUnknown.status, 401, `${path}: ?${param}= does not rescue an unknown Bearer key`);
    }
    const good = await harness.api('GET', path, { headers: { authorization: `bearer ${agent.apiKey}` } });
    t.equal(good.status, 200, `${path}: the scheme name is case-insensitive (RFC 9110 section 11.1)`);
  }
});
