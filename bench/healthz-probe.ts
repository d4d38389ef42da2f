import { Worker } from 'node:worker_threads';

/**
 * `/healthz` every `everyMs`, one request at a time, on a thread of its own until stopped: the
 * bench's main thread also runs the load (SMTP sessions, large JSON answers to parse), during
 * which a probe there cannot see its answer arrive. The thread's figure is the server's.
 */
export const probeOnThread = (baseUrl: string, everyMs: number): { stop(): Promise<number[]> } => {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const samples = []; let running = true;
     parentPort.once('message', () => { running = false; });
     (async () => {
       while (running) {
         const started = performance.now();
         const response = await fetch(workerData.url, { headers: { 'user-agent': 'agentpost-bench/1.0' } });
         await response.text();
         if (response.status !== 200) throw new Error('healthz ' + response.status);
         samples.push(performance.now() - started);
         await new Promise((resolve) => setTimeout(resolve, workerData.everyMs));
       }
       parentPort.postMessage(samples);
     })();`,
    { eval: true, workerData: { url: `${baseUrl}/healthz`, everyMs } },
  );
  const samples = new Promise<number[]>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return { stop: async (): Promise<number[]> => (worker.postMessage('stop'), await samples) };
};
