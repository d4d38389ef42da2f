import type { IncomingMessage } from 'node:http';

/**
 * The Streamable HTTP transport asks a client to list both application/json and
 * text/event-stream in Accept, and the SDK answers 406 otherwise. This server only ever
 * answers JSON (docs/agents/mcp.md: no SSE), so what matters is whether the client
 * takes JSON. RFC 9110 section 12.5.1: no Accept means any type; `*\/*` and `application/*`
 * include JSON; the most specific matching range decides, and `q=0` means "not acceptable".
 */
const SPECIFICITY: Record<string, number> = { 'application/json': 3, 'application/*': 2, '*/*': 1 };

const qualityOf = (params: string[]): number => {
  for (const param of params) {
    const [name, value] = param.split('=').map((part) => part.trim());
    if (name.toLowerCase() === 'q') {
      const q = Number(value);
      return Number.isFinite(q) ? q : 1;
    }
  }
  return 1;
};

export const acceptsJson = (accept: string | undefined): boolean => {
  if (accept === undefined || accept.trim() === '') return true;
  let best = { specificity: 0, quality: 0 };
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';');
    const specificity = SPECIFICITY[type.trim().toLowerCase()] ?? 0;
    if (specificity > best.specificity) best = { specificity, quality: qualityOf(params) };
  }
  return best.quality > 0;
};

/** What the SDK's check wants to see; the response stays JSON (enableJsonResponse). */
const TRANSPORT_ACCEPT = 'application/json, text/event-stream';

/**
 * Rewrites Accept for the SDK transport when the client takes JSON; false when it does not.
 * The transport reads `rawHeaders` (through @hono/node-server), so both views are rewritten.
 */
export const normaliseAccept = (req: IncomingMessage): boolean => {
  const accept = req.headers.accept;
  if (!acceptsJson(accept)) return false;
  req.headers.accept = TRANSPORT_ACCEPT;
  const raw: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i].toLowerCase() !== 'accept') raw.push(req.rawHeaders[i], req.rawHeaders[i + 1]);
  }
  req.rawHeaders = [...raw, 'Accept', TRANSPORT_ACCEPT];
  return true;
};
