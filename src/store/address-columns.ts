import type { AddressEntry } from '../core/types.js';

/** The address columns every message query reads, stored as JSON. */
export interface AddressColumns {
  from_json: string | null;
  to_json: string;
  cc_json: string;
}

export const addressesOf = (row: AddressColumns): { from: AddressEntry | null; to: AddressEntry[]; cc: AddressEntry[] } => ({
  from: row.from_json ? (JSON.parse(row.from_json) as AddressEntry) : null,
  to: JSON.parse(row.to_json) as AddressEntry[],
  cc: JSON.parse(row.cc_json) as AddressEntry[],
});
