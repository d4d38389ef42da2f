import type { Services } from '../src/services/index.js';

/** Runs `work` with the services of an opened store and closes it; returns the exit code. */
export type WithServices = (work: (services: Services) => number | Promise<number>) => Promise<number>;
type Out = (text: string, code: number) => number;

export const DELIVERY_USAGE = `       agentpost dkim generate <domain> [selector]   new RSA 2048 DKIM key; prints the DNS TXT record
       agentpost dkim show <domain>                 print the DNS TXT record of the domain's key
       agentpost outbound resolve <id> <delivered|failed>   settle the unresolved recipients of a submission
       agentpost suppressions add <email> <address> <bounce|complaint|manual>   suppress an address for an account`;

export const dkimCommand = (args: string[], withServices: WithServices, print: Out, fail: Out): number | Promise<number> => {
  const [action, domain, selector, extra] = args;
  const usage = (action === 'generate' || (action === 'show' && selector === undefined)) && domain && extra === undefined;
  if (!usage) return fail('usage: agentpost dkim generate <domain> [selector] | agentpost dkim show <domain>', 2);
  return withServices(async (services) => {
    if (action === 'show') {
      const record = await services.dkim.record(domain);
      return record ? print(record.zoneLine, 0) : fail(`no DKIM key for ${domain}; run agentpost dkim generate ${domain}`, 1);
    }
    const record = await services.dkim.generate(domain, selector);
    return print(`${record.zoneLine}\n# Publish this TXT record; mail from @${record.domain} is signed with selector ${record.selector} from now on.`, 0);
  });
};

export const outboundCommand = (args: string[], withServices: WithServices, print: Out, fail: Out): number | Promise<number> => {
  const [action, id, outcome] = args;
  if (action !== 'resolve' || !id || !outcome || args.length > 3) return fail('usage: agentpost outbound resolve <id> <delivered|failed>', 2);
  return withServices(async (services) => {
    const { resolved, refunded } = await services.delivery.resolve(id, outcome);
    return print(`${id}: ${resolved} unresolved recipient(s) settled as ${outcome}, ${refunded} credit(s) refunded`, 0);
  });
};

export const suppressionsCommand = (args: string[], withServices: WithServices, print: Out, fail: Out): number | Promise<number> => {
  const [action, email, address, reason] = args;
  if (action !== 'add' || !email || !address || !reason || args.length > 4)
    return fail('usage: agentpost suppressions add <email> <address> <bounce|complaint|manual>', 2);
  return withServices(async (services) => print(JSON.stringify(await services.suppressions.add(email, address, reason)), 0));
};
