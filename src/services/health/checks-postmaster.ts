import type { CheckResult } from '../../core/doctor.js';

/**
 * RFC 5321 section 4.5.1: mail to postmaster@ every domain received here must be accepted.
 * `reaches` answers the mailbox that would receive it, or null when it would be refused.
 */
export const checkPostmaster = async (domain: string, mailDomain: string, reaches: (address: string) => Promise<string | null>): Promise<CheckResult> => {
  const address = `postmaster@${domain}`;
  const base = { check: 'postmaster', subject: address };
  const mailbox = await reaches(address);
  if (mailbox !== null) return { ...base, status: 'ok', detail: mailbox === address ? 'a mailbox of its own' : `delivered to ${mailbox}` };
  const fix =
    domain === mailDomain
      ? "set smtp.postmaster to the address of a mailbox here that someone reads (an owner's mailbox, say)"
      : 'make it a mailbox or an alias on the domain, or verify the domain here (its holder then receives it)';
  return { ...base, status: 'fail', detail: 'refused with 550: RFC 5321 section 4.5.1 requires accepting mail to postmaster', fix };
};
