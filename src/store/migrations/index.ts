import type { Migration } from './migration.js';
import { foundation } from './001_foundation.js';
import { sending } from './002_sending.js';
import { delivery } from './003_delivery.js';
import { webhooks } from './004_webhooks.js';
import { keys } from './005_keys.js';
import { keyBudgetCounters } from './006_key_budget_counters.js';
import { searchIndex } from './007_search_index.js';
import { sendPath } from './008_send_path.js';
import { searchQueueIds } from './009_search_queue_ids.js';
import { searchFile } from './010_search_file.js';
import { messageBodies } from './011_message_bodies.js';
import { dataSent } from './015_data_sent.js';
import { owners } from './030_owners.js';
import { drafts } from './031_drafts.js';
import { searchRemovals } from './032_search_removals.js';
import { messageArrivals } from './040_message_arrivals.js';
import { mtaStsPolicies } from './041_mta_sts_policies.js';
import { messageAuthentication } from './043_message_authentication.js';
import { imapState } from './045_imap_state.js';
import { messageWire } from './046_message_wire.js';
import { extractedText } from './050_extracted_text.js';
import { threads } from './051_threads.js';
import { eventLog } from './052_event_log.js';
import { sandboxKeys } from './053_sandbox_keys.js';
import { plainTextStart } from './054_plain_text_start.js';
import { domains } from './060_domains.js';
import { payments } from './070_payments.js';
import { invoiceScan } from './071_invoice_scan.js';
import { rankSamples } from './072_rank_samples.js';
import { draftCopyValidity } from './073_draft_copy_validity.js';
import { inboundQueue } from './074_inbound_queue.js';
import { monotonicIds } from './075_monotonic_ids.js';
import { idempotencyScope } from './076_idempotency_scope.js';
import { senderGroups } from './077_sender_groups.js';
import { scheduledJobs } from './080_scheduled_jobs.js';
import { searchMark } from './081_search_mark.js';
import { junk } from './082_junk.js';
import { inboundQueueDue } from './083_inbound_queue_due.js';
import { largeValues } from './084_large_values.js';
import { leases } from './085_leases.js';
import { recipientCounts } from './087_recipient_counts.js';
import { searchWaiting } from './088_search_waiting.js';

export type { Migration } from './migration.js';

/** Applied in version order, each once, recorded in schema_migrations (src/store/db.ts). Never edit one that has landed. */
export const MIGRATIONS: readonly Migration[] = [
  foundation,
  sending,
  delivery,
  webhooks,
  keys,
  keyBudgetCounters,
  searchIndex,
  sendPath,
  searchQueueIds,
  searchFile,
  messageBodies,
  dataSent,
  owners,
  drafts,
  searchRemovals,
  messageArrivals,
  mtaStsPolicies,
  messageAuthentication,
  imapState,
  messageWire,
  extractedText,
  threads,
  eventLog,
  sandboxKeys,
  plainTextStart,
  domains,
  payments,
  invoiceScan,
  rankSamples,
  draftCopyValidity,
  inboundQueue,
  monotonicIds,
  idempotencyScope,
  senderGroups,
  scheduledJobs,
  searchMark,
  junk,
  inboundQueueDue,
  largeValues,
  leases,
  recipientCounts,
  searchWaiting,
];
