import { sha256Hex } from '../../core/ids.js';
import type { DraftRecord, DraftStatus } from '../../store/drafts.js';
import type { SendRequest } from '../sending/send-input.js';

/** Who decided a draft, when, and how (status approving and sent: approved). */
export interface DraftDecision {
  outcome: 'approved' | 'rejected';
  by: { id: string; email: string | null };
  at: string;
  reason: string | null;
}

export interface DraftSummary {
  id: string;
  /** Names the draft's content: the approval sends back the version the owner read (schema/draft-approve-request.json). */
  version: string;
  status: DraftStatus;
  subject: string;
  recipientCount: number;
  createdAt: string;
  updatedAt: string;
  decision: DraftDecision | null;
  /** The outbound submission once sent (GET /api/v1/agent/outbound/{id}). */
  outboundId: string | null;
  /** Its copy in the Drafts folder while pending (IMAP UID). */
  draftsUid: string | null;
}

export interface Draft extends DraftSummary {
  /** The send request as the agent wrote it. */
  message: SendRequest;
}

export interface DraftPage {
  drafts: DraftSummary[];
  nextCursor: string | null;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * A draft's version: a digest of the send request it holds, so it changes with every change
 * of what would be sent (and only then), whether a change came by PATCH or any other path.
 */
export const draftVersion = (record: Pick<DraftRecord, 'requestJson'>): string => sha256Hex(record.requestJson).slice(0, 32);

export const summaryOf = (record: DraftRecord, deciderEmail: string | null): DraftSummary => ({
  id: record.id,
  version: draftVersion(record),
  status: record.status,
  subject: record.subject,
  recipientCount: record.recipientCount,
  createdAt: iso(record.createdAt),
  updatedAt: iso(record.updatedAt),
  decision:
    record.decidedBy === null || record.decidedAt === null
      ? null
      : {
          outcome: record.status === 'rejected' ? 'rejected' : 'approved',
          by: { id: record.decidedBy, email: deciderEmail },
          at: iso(record.decidedAt),
          reason: record.reason,
        },
  outboundId: record.submissionId,
  draftsUid: record.folderUid === null ? null : String(record.folderUid),
});

export const draftView = (record: DraftRecord, deciderEmail: string | null): Draft => ({
  ...summaryOf(record, deciderEmail),
  message: JSON.parse(record.requestJson) as SendRequest,
});
