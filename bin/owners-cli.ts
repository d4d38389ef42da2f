import type { WithServices } from './delivery-cli.js';

type Out = (text: string, code: number) => number;

export const OWNERS_USAGE = `       agentpost owners create <email>               a human owner; prints a one-time link to set the password
       agentpost owners link <email>                 a new one-time password link for an owner (forgotten password)
       agentpost hosting grant <email> <days>        paid owner access for custom domains (an owner's login or an account's address)`;

/**
 * The link is the one secret printed; the operator hands it to the person. The login email
 * is only a login name: nothing is mailed.
 */
export const ownersCommand = (args: string[], withServices: WithServices, baseUrl: string, print: Out, fail: Out): number | Promise<number> => {
  const [action, email, extra] = args;
  if ((action !== 'create' && action !== 'link') || !email || extra !== undefined) {
    return fail('usage: agentpost owners create <email> | agentpost owners link <email>', 2);
  }
  return withServices(async (services) => {
    if (action === 'link') return print(linkOf(baseUrl, await services.owners.linkByOperator(email)), 0);
    const { account, token } = await services.owners.createByOperator(email);
    return print(
      `owner ${account.id} created with the mailbox ${account.email}\nset the password within the link's lifetime (owners.passwordLinkHours), once:\n${linkOf(baseUrl, token)}`,
      0,
    );
  });
};

const linkOf = (baseUrl: string, token: string): string => `${baseUrl.replace(/\/+$/, '')}/set-password/${token}`;

/**
 * The operator's hosting grant: while `funding.paused` is true, the only way an owner gets the
 * paid access that creating addresses on its domains needs (docs/operators/domains.md, "Paid
 * owner access and the plan"). Days add to the current end, as a payment's do.
 */
export const hostingCommand = (args: string[], withServices: WithServices, print: Out, fail: Out): number | Promise<number> => {
  const [action, email, days, extra] = args;
  if (action !== 'grant' || !email || !days || extra !== undefined) return fail('usage: agentpost hosting grant <email> <days>', 2);
  if (!/^\d+$/.test(days)) return fail(`days must be a positive whole number, got "${days}"`, 2);
  return withServices(async (services) => {
    const granted = await services.hosting.grant(email, Number(days));
    return print(`hosting for ${granted.holder} active until ${granted.hosting.expiresAt}`, 0);
  });
};
