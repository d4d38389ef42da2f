import { resolve } from 'node:path';
import { startAgentpost, startPostfixTarget, startSink, type Target } from './ingest-targets.js';
import { fmt, percentile } from './lib.js';
import { postfixInstalled, postfixVersion } from './postfix.js';

/**
 * bench:ingest's `trees` part (`--only trees --tree before=DIR --tree after=DIR`): agentpost
 * from two or more source trees, each a commit checked out with its own node_modules, under
 * the same load in one run, beside the sink and Postfix. It answers "did this change make
 * ingest slower": name the commit before it and the commit itself. The order of the trees
 * alternates per round, so neither always meets the warmer machine; the figures compared are
 * each tree's ratio to Postfix (and the sink) within a round, and the trees' ratio to each other.
 */

type Mode = 'reused' | 'new connection';
const MODES: readonly Mode[] = ['reused', 'new connection'];

export interface TreesRun<M extends { rate: number }> {
  rounds: number;
  /** `name=DIR` as given on the command line. */
  trees: string[];
  measure: (target: Target, mode: Mode) => Promise<M>;
  report: (mode: Mode, name: string, measured: M) => void;
}

const parseTrees = (given: string[]): { name: string; dir: string }[] => {
  const trees = given.map((entry) => {
    const at = entry.indexOf('=');
    if (at <= 0) throw new Error(`--tree takes NAME=DIR, not "${entry}"`);
    return { name: entry.slice(0, at), dir: resolve(entry.slice(at + 1)) };
  });
  if (trees.length < 2) throw new Error('the trees part needs at least two --tree NAME=DIR');
  return trees;
};

export const treesPart = async <M extends { rate: number }>(run: TreesRun<M>): Promise<void> => {
  const trees = parseTrees(run.trees);
  const references: [string, () => Promise<Target>][] = [
    ['sink', startSink],
    ...(postfixInstalled() ? [[`postfix ${postfixVersion()}`, startPostfixTarget] as [string, () => Promise<Target>]] : []),
  ];
  console.log(`trees: ${trees.map((tree) => `${tree.name} = ${tree.dir}`).join(', ')}; ${run.rounds} round(s)`);
  const byRound: Map<string, number>[] = [];
  for (let round = 0; round < run.rounds; round += 1) {
    const inRound = new Map<string, number>();
    const ordered = round % 2 === 0 ? trees : [...trees].reverse();
    const starters: [string, () => Promise<Target>][] = [
      ...references,
      ...ordered.map((tree): [string, () => Promise<Target>] => [tree.name, () => startAgentpost(tree.name, { tree: tree.dir })]),
    ];
    for (const [name, start] of starters) {
      const target = await start();
      try {
        for (const mode of MODES) {
          const measured = await run.measure(target, mode);
          run.report(mode, name, measured);
          inRound.set(`${mode}|${name}`, measured.rate);
        }
      } finally {
        await target.stop();
      }
    }
    byRound.push(inRound);
  }
  const ratioLine = (mode: Mode, ours: string, theirs: string) => {
    const ratios = byRound.map((inRound) => (inRound.get(`${mode}|${ours}`) ?? Number.NaN) / (inRound.get(`${mode}|${theirs}`) ?? Number.NaN));
    console.log(`${mode}: ${ours} / ${theirs} per round ${ratios.map((ratio) => `${fmt(ratio)}x`).join(' ')}, median ${fmt(percentile(ratios, 50))}x`);
  };
  for (const mode of MODES) {
    for (const tree of trees) for (const [reference] of references) ratioLine(mode, tree.name, reference);
    for (const tree of trees.slice(1)) ratioLine(mode, tree.name, trees[0].name);
  }
};
