/**
 * The key comes only from `Authorization: Bearer`, never the URL (docs/agents/rest.md,
 * docs/agents/mcp.md). Shared by every adapter that takes a key over HTTP (REST and MCP), so it
 * lives in core.
 */
export const bearerToken = (header: string | undefined): string | null => {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? '');
  return match ? match[1] : null;
};
