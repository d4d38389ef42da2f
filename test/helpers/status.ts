/**
 * Until the status page shows no message waiting in the inbound queue (a burst's mail is all in
 * its mailboxes). For a server in another process: the fault suite's and the benchmarks'. A
 * server without the queue (an older tree in bench:ingest --only trees) has none to wait for.
 */
export const inboundDrained = async (baseUrl: string): Promise<void> => {
  for (;;) {
    const status = (await (await fetch(`${baseUrl}/api/v1/status`)).json()) as { parts: { inbound?: { depth: number } } };
    if ((status.parts.inbound?.depth ?? 0) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};
