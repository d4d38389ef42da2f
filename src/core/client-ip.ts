/**
 * The client address a per-IP limit counts (`limits.registrationsPerIpPerHour`,
 * `owners.signupsPerIpPerHour`). X-Forwarded-For counts only when the operator says a proxy is in
 * front (http.trustProxy); its first entry is the original client. Shared by REST and MCP, so it
 * lives in core.
 */
export const clientAddress = (forwardedFor: string | undefined, socketAddress: string | undefined, trustProxy: boolean): string => {
  if (trustProxy) {
    const forwarded = forwardedFor?.split(',')[0]?.trim();
    if (forwarded) return forwarded;
  }
  return socketAddress ?? 'unknown';
};
