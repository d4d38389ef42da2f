/** A part's state on the status page (schema/status.json). */
export type PartStatus = 'ok' | 'degraded' | 'down';
