/**
 * Replies written the way common mail clients write them, text and HTML: the new text on
 * top, then the client's attribution line or header block, then the quoted message, and a
 * signature where the client adds one. `reply` is the new text a reader should get back.
 */
export interface ReplySample {
  client: string;
  reply: string;
  text: string;
  html: string;
  /** A string only the quoted part (or the signature) of the HTML holds. */
  quotedMarker: string;
}

const QUOTED = 'Can we meet on Tuesday at 10?';

export const replyCorpus: ReplySample[] = [
  {
    client: 'Gmail',
    reply: 'Tuesday works for me.\n\nBob',
    text: `Tuesday works for me.\n\nBob\n\nOn Mon, Jan 8, 2024 at 10:15 AM Alice Example <alice@example.com> wrote:\n\n> ${QUOTED}\n>\n> Alice\n`,
    html:
      `<div dir="ltr">Tuesday works for me.<div><br></div><div>Bob</div></div><br><div class="gmail_quote gmail_quote_container">` +
      `<div dir="ltr" class="gmail_attr">On Mon, Jan 8, 2024 at 10:15 AM Alice Example &lt;<a href="mailto:alice@example.com">alice@example.com</a>&gt; wrote:<br></div>` +
      `<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;border-left:1px solid rgb(204,204,204);padding-left:1ex"><div dir="ltr">${QUOTED}<br>Alice</div></blockquote></div>`,
    quotedMarker: 'gmail_attr',
  },
  {
    client: 'Gmail, attribution wrapped over two lines',
    reply: 'Sounds good.',
    text: `Sounds good.\n\nOn Mon, Jan 8, 2024 at 10:15 AM Alice Example with a long name <\nalice@example.com> wrote:\n\n> ${QUOTED}\n`,
    html:
      `<div dir="ltr">Sounds good.</div><br><div class="gmail_quote"><div class="gmail_attr">On Mon, Jan 8, 2024 wrote:</div><blockquote class="gmail_quote">${QUOTED}</blockquote></div>` +
      `<div><br></div><span class="gmail_signature_prefix">-- </span><br><div dir="ltr" class="gmail_signature">Bob Builder | ACME</div>`,
    quotedMarker: 'Bob Builder | ACME',
  },
  {
    client: 'Outlook',
    reply: 'Yes, Tuesday is fine.\n\nBob',
    text:
      `Yes, Tuesday is fine.\n\nBob\n\n________________________________\nFrom: Alice Example <alice@example.com>\nSent: Monday, January 8, 2024 10:15 AM\n` +
      `To: Bob Builder <bob@example.com>\nSubject: Meeting\n\n${QUOTED}\n`,
    html:
      `<html><body><div style="font-family: Aptos, sans-serif;">Yes, Tuesday is fine.</div><div>Bob</div><div id="appendonsend"></div>` +
      `<hr style="display:inline-block;width:98%" tabindex="-1"><div id="divRplyFwdMsg" dir="ltr"><font face="Calibri, sans-serif"><b>From:</b> Alice Example &lt;alice@example.com&gt;<br>` +
      `<b>Sent:</b> Monday, January 8, 2024 10:15 AM<br><b>Subject:</b> Meeting</font><div>&nbsp;</div></div><div>${QUOTED}</div></body></html>`,
    quotedMarker: 'divRplyFwdMsg',
  },
  {
    client: 'Outlook, Original Message separator',
    reply: 'Confirmed.',
    text: `Confirmed.\n\n-----Original Message-----\nFrom: Alice Example <alice@example.com>\nSent: Monday, January 8, 2024 10:15 AM\nSubject: Meeting\n\n${QUOTED}\n`,
    html: `<div>Confirmed.</div><div id="divRplyFwdMsg"><b>From:</b> Alice</div><div>${QUOTED}</div>`,
    quotedMarker: QUOTED,
  },
  {
    client: 'Apple Mail',
    reply: 'Works for me.',
    text: `Works for me.\n\nSent from my iPhone\n\n> On Jan 8, 2024, at 10:15, Alice Example <alice@example.com> wrote:\n>\n> ${QUOTED}\n`,
    html:
      `<html><body dir="auto"><div dir="ltr">Works for me.</div><div dir="ltr"><br></div><div dir="ltr">Sent from my iPhone</div><div dir="ltr"><br>` +
      `<blockquote type="cite">On Jan 8, 2024, at 10:15, Alice Example &lt;alice@example.com&gt; wrote:<br><br></blockquote></div>` +
      `<blockquote type="cite"><div dir="ltr">${QUOTED}</div></blockquote></body></html>`,
    quotedMarker: 'type="cite"',
  },
  {
    client: 'Thunderbird',
    reply: 'Fine by me.',
    text: `Fine by me.\n\n-- \nBob Builder\nACME Inc.\n\nOn 1/8/24 10:15, Alice Example wrote:\n> ${QUOTED}\n`,
    html:
      `<html><body><p>Fine by me.</p><pre class="moz-signature" cols="72">-- \nBob Builder\nACME Inc.</pre>` +
      `<div class="moz-cite-prefix">On 1/8/24 10:15, Alice Example wrote:<br></div><blockquote type="cite" cite="mid:a1@example.com">${QUOTED}</blockquote></body></html>`,
    quotedMarker: 'moz-',
  },
];
