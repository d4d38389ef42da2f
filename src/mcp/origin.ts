/**
 * MCP 2025-11-25, transports, security warning: a Streamable HTTP server MUST validate Origin
 * (DNS rebinding: a page on evil.example that resolves to 127.0.0.1 would otherwise reach a
 * local server) and answer 403 when it is present and invalid. Non-browser clients send none.
 */
const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

export const isAllowedOrigin = (origin: string | undefined, host: string | undefined, baseUrl: string): boolean => {
  if (origin === undefined) return true;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  if (baseUrl !== '' && parsed.origin === new URL(baseUrl).origin) return true;
  // A page served from this very loopback listener: rebinding cannot forge a loopback Host.
  return LOOPBACK_NAMES.has(parsed.hostname) && parsed.host === host;
};
