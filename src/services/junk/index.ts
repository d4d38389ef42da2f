import type { DnsResolver } from '../../core/dns.js';
import type { Logger } from '../../core/logger.js';
import type { ParseMail } from '../../core/parsed-message.js';
import type { Store } from '../../store/index.js';
import type { FolderService } from '../mail/folders.js';
import type { MailboxService } from '../mail/mailbox.js';
import type { MessageOps } from '../mail/message-ops.js';
import { Blocklists } from './blocklists.js';
import type { JunkSettings } from '../../core/junk.js';
import { JunkFilter } from './filter.js';
import { JunkMarking } from './marking.js';
import { JunkModels } from './models.js';
import { JunkTrainingService } from './training.js';

export interface JunkServices {
  /** The verdict on received mail; null with `junk.enabled` off (every message goes to INBOX unjudged). */
  junkFilter: JunkFilter | null;
  /** Makes the models follow the mailboxes' judgments ($Junk / $NotJunk); its queue (src/app/queues.ts) runs after a judgment commits. */
  junkTraining: JunkTrainingService;
  /** POST /api/v1/agent/email/{id}/junk and the console's "not junk". */
  junkMarking: JunkMarking;
  /** The models held in memory for verdicts. */
  junkModels: JunkModels;
}

export interface JunkDeps {
  store: Store;
  logger: Logger;
  dns: DnsResolver;
  parse: ParseMail;
  mailbox: MailboxService;
  folders: FolderService;
  messageOps: MessageOps;
  config: JunkSettings;
  hostname: string;
}

export const createJunkServices = ({ store, logger, dns, parse, mailbox, folders, messageOps, config, hostname }: JunkDeps): JunkServices => {
  const junkModels = new JunkModels(store, logger, config.cacheMegabytes * 1024 * 1024);
  const junkTraining = new JunkTrainingService(store, junkModels, parse, logger, { hostname, serverModelTrainers: config.serverModelTrainers });
  const blocklists = new Blocklists(dns, config.blocklists);
  return {
    junkFilter: config.enabled ? new JunkFilter(store, junkModels, blocklists, config, logger) : null,
    junkTraining,
    junkMarking: new JunkMarking(store, mailbox, folders, messageOps, junkTraining),
    junkModels,
  };
};
