// Once-per-service jobs with several `serve` processes on one data folder (docs/design.md,
// "Several processes on one store"): each period's run is taken by one node with one
// conditional update of the job's row, whichever nodes are up.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { type ClusterNode, startCluster } from './helpers/cluster.js';

t.setTimeout(120_000);

/** The domain re-check every two seconds instead of daily: several periods within the test. */
const EVERY_TWO_SECONDS = '*/2 * * * * *';
const PERIOD_MS = 2000;

/** The periods of the re-check each node took, from its log ('calendar job taken', debug). */
const takenBy = (node: ClusterNode): number[] =>
  node
    .logLines()
    .filter((line) => line.message === 'calendar job taken' && line.job === 'domain-recheck')
    .map((line) => line.period as number);

t.test('three nodes up, then two: the domain re-check runs once per period', async (t) => {
  const cluster = await startCluster(t, { nodes: 3, env: { AGENTPOST_LOG_LEVEL: 'debug' }, config: { domains: { recheckSchedule: EVERY_TWO_SECONDS } } });
  await new Promise((resolve) => setTimeout(resolve, 5 * PERIOD_MS));
  // One node goes away; the others keep the calendar, still once per period.
  await cluster.nodes[2].kill('SIGKILL');
  const killedAt = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 4 * PERIOD_MS));

  const periods = cluster.nodes.flatMap(takenBy).sort((a, b) => a - b);
  t.ok(periods.length >= 6, `${periods.length} periods ran`);
  t.equal(new Set(periods).size, periods.length, 'no period ran twice');
  t.ok(
    periods.every((period) => period % PERIOD_MS === 0),
    "each run is one of the schedule's periods",
  );
  // A period is skipped only when every node was too busy to take it in time (the calendar then moves to the next).
  const span = (periods[periods.length - 1] - periods[0]) / PERIOD_MS + 1;
  t.ok(periods.length >= span - 2, `${periods.length} of the ${span} periods between the first and the last ran`);
  t.ok(
    periods.some((period) => period > killedAt + PERIOD_MS),
    'periods after the kill ran on the nodes left',
  );
  const takers = cluster.nodes.filter((node) => takenBy(node).length > 0).map((node) => node.nodeId);
  t.ok(takers.length >= 1, `taken by ${takers.join(', ')}`);

  const db = new Database(join(cluster.dataDir, 'agentpost.db'), { readonly: true, fileMustExist: true });
  t.teardown(() => db.close());
  const row = db.prepare("SELECT taken_by AS takenBy FROM scheduled_jobs WHERE name = 'domain-recheck'").get() as { takenBy: string };
  t.ok(['node-1', 'node-2'].includes(row.takenBy), `the row names the node of the last run (${row.takenBy})`);
});
