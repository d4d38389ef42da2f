import { domainToASCII, domainToUnicode } from 'node:url';
import { randomLowerAlnum } from './ids.js';

/** RFC 5321 section 4.5.3.1.1: a local part is at most 64 octets. */
const MAX_LOCAL_PART = 64;
const SUFFIX_LENGTH = 6;

/**
 * docs/design.md "mailbox address": agent-<a>-<s>@<mailDomain>, where a is the agentId
 * lowercased with runs of "." collapsed and cut so the local part fits in 64 octets.
 */
export const newMailboxAddress = (agentId: string, mailDomain: string): string => {
  const fixedLength = 'agent-'.length + 1 + SUFFIX_LENGTH;
  const agentPart = agentId
    .toLowerCase()
    .replace(/\.{2,}/g, '.')
    .slice(0, MAX_LOCAL_PART - fixedLength);
  return `agent-${agentPart}-${randomLowerAlnum(SUFFIX_LENGTH)}@${mailDomain.toLowerCase()}`;
};

/**
 * docs/design.md "Owners": a human's mailbox is <login local part>-<s>@<mailDomain>, the local
 * part lowercased, kept to dot-atom characters (RFC 5322 section 3.2.3) and cut to fit.
 */
export const newOwnerAddress = (loginEmail: string, mailDomain: string): string => {
  const cleaned = localPartOf(loginEmail)
    .toLowerCase()
    .replace(/[^a-z0-9!#$%&'*+/=?^_`{|}~.-]/g, '')
    .replace(/\.{2,}/g, '.')
    .slice(0, MAX_LOCAL_PART - 1 - SUFFIX_LENGTH)
    .replace(/^\.+|\.+$/g, '');
  return `${cleaned || 'owner'}-${randomLowerAlnum(SUFFIX_LENGTH)}@${mailDomain.toLowerCase()}`;
};

/**
 * A practical addr-spec check: RFC 5322 section 3.4.1 dot-atom local part, widened by
 * RFC 6531 section 3.3 to non-ASCII characters (letters, marks, digits, symbols, punctuation;
 * no controls or spaces), and a DNS domain that may be internationalised (IDNA, checked in
 * its ASCII form). Quoted local parts, address literals ([127.0.0.1], RFC 5321 section 4.1.3)
 * and bare IP addresses as domains are refused on purpose: outbound mail only goes to DNS
 * names. Lengths are octets: 64 for the local part in UTF-8 (RFC 5321 section 4.5.3.1.1),
 * 253 for the ASCII domain, 254 in all.
 */
const ATEXT = "(?:[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]|(?![\\x00-\\x7f])[\\p{L}\\p{M}\\p{N}\\p{S}\\p{P}])";
const LOCAL_PART = new RegExp(`^${ATEXT}+(\\.${ATEXT}+)*$`, 'u');
const DOMAIN_LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;
/**
 * RFC 3696 section 2: a top-level label is never all-numeric. A last label that is a number
 * (decimal, or hex as the WHATWG host parser reads it) makes the domain an IPv4 address in
 * disguise (10.0.0.1, 127.1, 0x7f.1): mail to an IP address is refused like a literal.
 */
const NUMERIC_LABEL = /^(\d+|0x[0-9a-f]*)$/i;
const MAX_DOMAIN = 253;
/** RFC 5321 section 4.5.3.1.3: a path is at most 256 octets, the angle brackets included. */
const MAX_ADDRESS = 254;
const NON_ASCII = /[^\x00-\x7f]/;

export const isValidAddress = (address: string): boolean => {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return false;
  const local = address.slice(0, at);
  if (Buffer.byteLength(local, 'utf8') > MAX_LOCAL_PART || !LOCAL_PART.test(local)) return false;
  const domain = asciiDomain(address.slice(at + 1));
  const labels = domain.split('.');
  if (Buffer.byteLength(local, 'utf8') + 1 + domain.length > MAX_ADDRESS) return false;
  return (
    domain.length <= MAX_DOMAIN && labels.length >= 2 && labels.every((label) => DOMAIN_LABEL.test(label)) && !NUMERIC_LABEL.test(labels[labels.length - 1])
  );
};

const isIdn = (domain: string): boolean => NON_ASCII.test(domain) || /(^|\.)xn--/i.test(domain);

/**
 * A domain in the ASCII form DNS and SMTP use: U-labels become A-labels (IDNA, UTS #46 as
 * node:url implements it). '' when the name is no valid IDN, which no address check passes.
 */
export const asciiDomain = (domain: string): string => (isIdn(domain) ? domainToASCII(domain) : domain.toLowerCase());

/** One spelling per domain, for comparing: lower case, internationalised names as U-labels. */
const canonicalDomain = (domain: string): string => {
  if (!isIdn(domain)) return domain.toLowerCase();
  const ascii = domainToASCII(domain);
  return ascii === '' ? domain.toLowerCase() : domainToUnicode(ascii);
};

/**
 * The form addresses are compared and stored in: trimmed, the local part in Unicode NFC
 * (RFC 6532 section 3.1) and lower case (our own local parts are generated in lower case),
 * the domain canonical, so jörg@xn--bcher-kva.example and jörg@Bücher.example are one address.
 */
export const normalizeAddress = (address: string): string => {
  const trimmed = address.trim();
  const at = trimmed.lastIndexOf('@');
  if (at < 0) return trimmed.toLowerCase();
  return `${trimmed.slice(0, at).normalize('NFC').toLowerCase()}@${canonicalDomain(trimmed.slice(at + 1))}`;
};

/** The address as an SMTP envelope carries it: the domain in ASCII (RFC 6531 section 3.2 allows either). */
export const envelopeAddress = (address: string): string => {
  const at = address.lastIndexOf('@');
  return at < 0 ? address : `${address.slice(0, at)}@${asciiDomain(address.slice(at + 1))}`;
};

export const domainOf = (address: string): string => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

export const localPartOf = (address: string): string => address.slice(0, address.lastIndexOf('@'));
