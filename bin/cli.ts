import { existsSync } from 'node:fs';
import packageJson from '../package.json' with { type: 'json' };
import { loadConfig, ConfigError } from '../src/config/load.js';
import { CONFIG_FILE_ENV, CONFIG_FILE_FLAG, SETTING_SOURCES } from '../src/config/settings.js';
import type { Config } from '../src/config/types.js';
import { secretsDirOf } from '../src/config/secrets.js';
import { isAppError } from '../src/core/errors.js';
import type { AppOptions, openCore } from '../src/main.js';
import { parseArgs } from './args.js';
import { BACKUP_USAGE, backupCommand, restoreCommand } from './backup-cli.js';
import { DOCTOR_FLAGS, DOCTOR_USAGE, doctorCommand } from './doctor-cli.js';
import { DELIVERY_USAGE, dkimCommand, outboundCommand, suppressionsCommand, type WithServices } from './delivery-cli.js';
import { hostingCommand, OWNERS_USAGE, ownersCommand } from './owners-cli.js';

const SETTING_FLAGS = SETTING_SOURCES.map((source) => `  --${source.flag.padEnd(12)} ${source.env}`).join('\n');

const USAGE = `usage: agentpost [serve] [--config FILE] [options]   run the server (the default command)
       agentpost --version                          print the version and the Node.js it runs on
       agentpost credits add <email> <n>            add sending credits, print the new balance
       agentpost accounts list                      list accounts as JSON lines
       agentpost mcp --url <base>                   stdio MCP server forwarding to <base>/mcp; key in AGENTPOST_API_KEY
       agentpost 2fa reset <email>                  turn two-factor off for an account whose device is lost
       agentpost sending set <email> <state>        set the sending state: probation, standard, reviewed, paused
${DELIVERY_USAGE}
${BACKUP_USAGE}
${OWNERS_USAGE}
${DOCTOR_USAGE}

--config FILE (or ${CONFIG_FILE_ENV}) reads a JSON config file. Settings apply in the order
defaults < config file < environment < flags. Each option and its environment variable:
${SETTING_FLAGS}`;

const BOOLEAN_FLAGS = new Set(['help', 'version', ...SETTING_SOURCES.filter((source) => source.type === 'boolean').map((source) => source.flag)]);
const KNOWN_FLAGS = new Set([...BOOLEAN_FLAGS, CONFIG_FILE_FLAG, ...SETTING_SOURCES.map((source) => source.flag)]);

/**
 * The app (koa, smtp-server, mailparser, the MCP SDK, ...) loads only for the commands that use
 * it, so usage and setting errors answer at once.
 */
const loadApp = () => import('../src/main.js');

/** Exit codes: 0 ok, 1 failure, 2 bad usage or invalid setting. */
export const runCli = async (argv: readonly string[], options: AppOptions = {}): Promise<number> => {
  // `--json` is doctor's; any other command refuses it below as an unknown option.
  const { words, flags } = parseArgs(argv, new Set([...BOOLEAN_FLAGS, 'json']));
  const doctorFlags = words[0] === 'doctor' ? takeFlags(flags, DOCTOR_FLAGS) : {};
  if (flags.help) return print(USAGE, 0);
  // The Node.js version tells an operator which runtime the single executable carries.
  if (flags.version) return print(`agentpost ${packageJson.version} (node ${process.version})`, 0);
  // The bridge is a client of a running service: it needs neither the config nor the store.
  if (words[0] === 'mcp') return mcpCommand(words.slice(1), flags);
  const unknown = Object.keys(flags).find((flag) => !KNOWN_FLAGS.has(flag));
  if (unknown) return fail(`unknown option --${unknown}\n${USAGE}`, 2);
  let config: Config;
  try {
    config = loadConfig({ env: process.env, flags });
  } catch (error) {
    if (error instanceof ConfigError) return fail(error.message, 2);
    throw error;
  }
  const [command = 'serve', ...rest] = words;
  try {
    switch (command) {
      case 'serve':
        if (rest.length > 0) return fail(`unexpected argument "${rest[0]}"\n${USAGE}`, 2);
        return await serve(config, options);
      case 'credits':
        return await creditsCommand(config, options, rest);
      case 'accounts':
        return await accountsCommand(config, options, rest);
      case '2fa':
        return await twoFactorCommand(config, options, rest);
      case 'sending':
        return await sendingCommand(config, options, rest);
      case 'dkim':
        return await dkimCommand(rest, servicesOf(config, options), print, fail);
      case 'outbound':
        return await outboundCommand(rest, servicesOf(config, options), print, fail);
      case 'doctor':
        return await withCore(config, options, (core) => doctorCommand(rest, doctorFlags, core.services, print, fail));
      case 'suppressions':
        return await suppressionsCommand(rest, servicesOf(config, options), print, fail);
      case 'backup':
        return await backupCommand(rest, { dataDir: config.dataDir, secretsDir: secretsDirOf(config) }, { nativeBinding: options.nativeBinding }, print, fail);
      case 'restore':
        return await restoreCommand(rest, { dataDir: config.dataDir, secretsDir: secretsDirOf(config) }, print, fail);
      case 'hosting':
        return await hostingCommand(rest, servicesOf(config, options), print, fail);
      case 'owners':
        return await ownersCommand(rest, servicesOf(config, options), (await loadApp()).baseUrlOf(config), print, fail);
      default:
        return fail(`unknown command "${command}"\n${USAGE}`, 2);
    }
  } catch (error) {
    if (error instanceof ConfigError) return fail(error.message, 2);
    if (isAppError(error)) return fail(error.message, error.code === 'invalid_input' ? 2 : 1);
    if (isListenError(error)) return fail(`cannot listen on ${error.address}:${error.port}: ${error.code}`, 1);
    throw error;
  }
};

interface ListenError extends Error {
  code: string;
  address: string;
  port: number;
}

const isListenError = (error: unknown): error is ListenError => error instanceof Error && 'syscall' in error && error.syscall === 'listen' && 'code' in error;

const serve = async (config: Config, options: AppOptions): Promise<number> => {
  const { createApp } = await loadApp();
  const app = createApp(config, options);
  await app.start();
  // SIGHUP would end the process by default; here it re-reads the certificates (certbot's deploy hook).
  const reload = () => app.reloadCertificates('signal');
  process.on('SIGHUP', reload);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  process.off('SIGHUP', reload);
  await app.stop();
  return 0;
};

/** The key comes only from the environment and is never printed (it would land in client logs). */
const MCP_USAGE = 'usage: agentpost mcp --url <base>  (key in AGENTPOST_API_KEY)';

const mcpCommand = async (args: string[], flags: Record<string, string | true>): Promise<number> => {
  const { bridgeEndpoint, runStdioBridge } = await import('../src/mcp/bridge.js');
  const unknown = Object.keys(flags).find((flag) => flag !== 'url');
  if (unknown) return fail(`unknown option --${unknown}\n${MCP_USAGE}`, 2);
  if (args.length > 0) return fail(`unexpected argument "${args[0]}"\n${MCP_USAGE}`, 2);
  if (typeof flags.url !== 'string') return fail(MCP_USAGE, 2);
  let endpoint: URL;
  try {
    endpoint = bridgeEndpoint(flags.url);
  } catch {
    return fail(`--url: "${flags.url}" is not a URL`, 2);
  }
  if (endpoint.username || endpoint.password) return fail('--url: no credentials in the URL; put the key in AGENTPOST_API_KEY', 2);
  const apiKey = process.env.AGENTPOST_API_KEY || undefined;
  process.stderr.write(`agentpost: MCP stdio bridge to ${endpoint.href} (AGENTPOST_API_KEY ${apiKey ? 'set' : 'not set: only register_agent will work'})\n`);
  await runStdioBridge({ url: endpoint.href, apiKey });
  return 0;
};

const creditsCommand = async (config: Config, options: AppOptions, args: string[]): Promise<number> => {
  const [action, email, amount] = args;
  if (action !== 'add' || !email || !amount || args.length > 3) return fail('usage: agentpost credits add <email> <n>', 2);
  if (!/^\d+$/.test(amount)) return fail(`credits to add must be a positive whole number, got "${amount}"`, 2);
  return withCore(config, options, async (core) => print(String(await core.services.accounts.addCredits(email, Number(amount))), 0));
};

const accountsCommand = async (config: Config, options: AppOptions, args: string[]): Promise<number> => {
  if (args[0] !== 'list' || args.length > 1) return fail('usage: agentpost accounts list', 2);
  return withCore(config, options, async (core) => {
    for (const account of await core.services.accounts.list()) {
      const { id, agentId, email, credits, status, sendingState, createdAt, kind, ownerId } = account;
      process.stdout.write(
        `${JSON.stringify({ id, kind, agentId, email, credits, status, sendingState, ownerId, createdAt: new Date(createdAt).toISOString() })}\n`,
      );
    }
    return 0;
  });
};

/** Operator recovery for a lost authenticator: the agent can then enroll again. */
const twoFactorCommand = async (config: Config, options: AppOptions, args: string[]): Promise<number> => {
  const [action, email] = args;
  if (action !== 'reset' || !email) return fail('usage: agentpost 2fa reset <email>', 2);
  return withCore(config, options, async (core) => {
    const account = await core.services.accounts.byEmail(email);
    return print((await core.services.twoFactor.reset(account.id)) ? 'two-factor turned off' : 'two-factor was not on', 0);
  });
};

const sendingCommand = async (config: Config, options: AppOptions, args: string[]): Promise<number> => {
  const [action, email, state] = args;
  if (action !== 'set' || !email || !state) return fail('usage: agentpost sending set <email> <probation|standard|reviewed|paused>', 2);
  return withCore(config, options, async (core) => print(`${email.trim().toLowerCase()} ${await core.services.sending.setState(email, state)}`, 0));
};

/** Admin commands work on an existing database; a mistyped --data-dir must not create a new one. */
const withCore = async (config: Config, options: AppOptions, work: (core: ReturnType<typeof openCore>) => number | Promise<number>): Promise<number> => {
  const { databasePath, openCore } = await loadApp();
  const file = databasePath(config);
  if (!existsSync(file)) return fail(`no database at ${file} (check --data-dir or AGENTPOST_DATA_DIR)`, 1);
  const core = openCore({ ...config, log: { level: 'warn' } }, options);
  try {
    return await work(core);
  } finally {
    await core.indexWriter.close();
    core.store.close();
  }
};

const servicesOf =
  (config: Config, options: AppOptions): WithServices =>
  (work) =>
    withCore(config, options, (core) => work(core.services));

/** Moves the named flags out of `flags` (a command's own, not settings). */
const takeFlags = (flags: Record<string, string | true>, names: readonly string[]): Record<string, string | true> => {
  const taken: Record<string, string | true> = {};
  for (const name of names) {
    if (name in flags) taken[name] = flags[name];
    delete flags[name];
  }
  return taken;
};

const print = (text: string, code: number): number => {
  process.stdout.write(`${text}\n`);
  return code;
};

const fail = (text: string, code: number): number => {
  process.stderr.write(`agentpost: ${text}\n`);
  return code;
};
