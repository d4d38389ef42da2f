import { randomLowerAlnum } from './ids.js';

/** RFC 5321 section 4.5.3.1.1: a local part is at most 64 octets. */
const MAX_LOCAL_PART = 64;
const SUFFIX_LENGTH = 6;

/**
 * DESIGN.md "mailbox address": agent-<a>-<s>@<mailDomain>, where a is the agentId
 * lowercased with runs of "." collapsed and cut so the local part fits in 64 octets.
 */
export const newMailboxAddress = (agentId: string, mailDomain: string): string => {
  const fixedLength = 'agent-'.length + 1 + SUFFIX_LENGTH;
  const agentPart = agentId.toLowerCase().replace(/\.{2,}/g, '.').slice(0, MAX_LOCAL_PART - fixedLength);
  return `agent-${agentPart}-${randomLowerAlnum(SUFFIX_LENGTH)}@${mailDomain.toLowerCase()}`;
};

/**
 * DESIGN.md "Owners": a human's mailbox is <login local part>-<s>@<mailDomain>, the local
 * part lowercased, kept to dot-atom characters (RFC 5322 section 3.2.3) and cut to fit.
 */
export const newOwnerAddress = (loginEmail: string, mailDomain: string): string => {
  const cleaned = localPartOf(loginEmail).toLowerCase().replace(/[^a-z0-9!#$%&'*+/=?^_`{|}~.-]/g, '')
    .replace(/\.{2,}/g, '.').slice(0, MAX_LOCAL_PART - 1 - SUFFIX_LENGTH).replace(/^\.+|\.+$/g, '');
  return `${cleaned || 'owner'}-${randomLowerAlnum(SUFFIX_LENGTH)}@${mailDomain.toLowerCase()}`;
};

/**
 * A practical addr-spec check (RFC 5322 section 3.4.1 dot-atom local part, a DNS domain):
 * quoted local parts, address literals ([127.0.0.1], RFC 5321 section 4.1.3) and bare IP
 * addresses as domains are refused on purpose: outbound mail only goes to DNS names.
 */
const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]";
const LOCAL_PART = new RegExp(`^${ATEXT}+(\\.${ATEXT}+)*$`);
const DOMAIN_LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;
/**
 * RFC 3696 section 2: a top-level label is never all-numeric. A last label that is a number
 * (decimal, or hex as the WHATWG host parser reads it) makes the domain an IPv4 address in
 * disguise (10.0.0.1, 127.1, 0x7f.1): mail to an IP address is refused like a literal.
 */
const NUMERIC_LABEL = /^(\d+|0x[0-9a-f]*)$/i;

export const isValidAddress = (address: string): boolean => {
  if (address.length > 254) return false;
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return false;
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (local.length > MAX_LOCAL_PART || !LOCAL_PART.test(local)) return false;
  const labels = domain.split('.');
  return labels.length >= 2 && labels.every((label) => DOMAIN_LABEL.test(label)) && !NUMERIC_LABEL.test(labels[labels.length - 1]);
};

/** Domains compare case-insensitively; our own local parts are generated in lower case. */
export const normalizeAddress = (address: string): string => address.trim().toLowerCase();

export const domainOf = (address: string): string => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

export const localPartOf = (address: string): string => address.slice(0, address.lastIndexOf('@'));
