import { render } from 'dom-serializer';
import { Element, type ChildNode, type Document } from 'domhandler';
import { parseDocument } from 'htmlparser2';

/**
 * The new part of an HTML message: the HTML without the quoted history and signature
 * blocks that mail clients mark in their markup, parsed with htmlparser2 (linear, never
 * runs scripts or fetches anything) and written back with dom-serializer, entities as they
 * were. What counts as quoted, by client:
 * - Gmail: `.gmail_quote`, `.gmail_quote_container`, `.gmail_extra`; signature `.gmail_signature`;
 * - Apple Mail and Thunderbird: `blockquote[type=cite]` (Apple puts the "On ... wrote:" line
 *   inside it); Thunderbird's `.moz-cite-prefix` line and `.moz-signature`;
 * - Outlook: `#divRplyFwdMsg` (the From/Sent/To block) and `#appendonsend`, each with every
 *   sibling after it, where the quoted message follows, and an `<hr>` just before;
 * - Yahoo: `.yahoo_quoted`.
 * HTML over EXTRACT_HTML_MAX_BYTES, or that cannot be written back (nesting deeper than the
 * stack), is returned whole.
 */
export const EXTRACT_HTML_MAX_BYTES = 1024 * 1024;

const QUOTE_CLASSES = new Set(['gmail_quote', 'gmail_quote_container', 'gmail_extra', 'gmail_signature', 'moz-cite-prefix', 'moz-signature', 'yahoo_quoted']);
/** Everything from one of these to the end of its parent is the quoted message. */
const CUT_IDS = new Set(['divrplyfwdmsg', 'appendonsend']);

export const extractReplyHtml = (html: string): string => {
  if (Buffer.byteLength(html) > EXTRACT_HTML_MAX_BYTES) return html;
  try {
    const document = parseDocument(html, { decodeEntities: false });
    return removeQuoted(document) ? render(document, { decodeEntities: false }) : html;
  } catch {
    return html;
  }
};

/** Removes the quoted blocks; true when something was removed. Iterative: nesting depth is the sender's choice. */
const removeQuoted = (document: Document): boolean => {
  const doomed: ChildNode[] = [];
  const stack: ChildNode[] = [...document.children];
  while (stack.length > 0) {
    const node = stack.pop() as ChildNode;
    if (!(node instanceof Element)) continue;
    if (CUT_IDS.has((node.attribs.id ?? '').toLowerCase())) {
      if (node.prev instanceof Element && node.prev.name === 'hr') doomed.push(node.prev);
      for (let sibling: ChildNode | null = node; sibling; sibling = sibling.next) doomed.push(sibling);
    } else if (isQuote(node)) {
      doomed.push(node);
    } else {
      for (const child of node.children) stack.push(child);
    }
  }
  for (const node of new Set(doomed)) detach(node);
  return doomed.length > 0;
};

const isQuote = (element: Element): boolean =>
  (element.name === 'blockquote' && (element.attribs.type ?? '').toLowerCase() === 'cite') ||
  (element.attribs.class ?? '').split(/\s+/).some((name) => QUOTE_CLASSES.has(name));

const detach = (node: ChildNode): void => {
  const parent = node.parent;
  if (!parent) return;
  const index = parent.children.indexOf(node);
  if (index < 0) return;
  parent.children.splice(index, 1);
  if (node.prev) node.prev.next = node.next;
  if (node.next) node.next.prev = node.prev;
  node.parent = node.prev = node.next = null;
};
